"""default-schedule's convolution schedule (pad, read the input channels-last, then a register-blocked direct
convolution vectorized over output channels) keeps a convolution's numbers: the scheduled model equals the unscheduled one (clamped reads, no explicit
padding) on the ResNet-50 kinds of convolution, at small channel counts. Sums are reassociated (blocked per tile),
so results agree to float rounding: rtol = atol = 1e-4 on values of order 1."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc.frontend.onnx import import_model
from minimlc.lowering import PIPELINES, split_pass_list
from minimlc.lowering.default_schedule import kernels_of, schedule_for
from minimlc.runtime.compiler import compile_model, make_context, run_passes
from minimlc.runtime.jit import host_info
from minimlc.runtime.session import InferenceSession


def conv_model(
    c: int, size: int, f: int, kernel: int, stride: int, pad: int, bias: bool = True, relu: bool = True
) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((f, c, kernel, kernel)) * 0.2).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32), "b"))
    out = (size + 2 * pad - kernel) // stride + 1
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"][: 2 + bias], ["t" if relu else "y"], pads=[pad] * 4, strides=[stride] * 2
        )
    ]
    if relu:
        nodes.append(helper.make_node("Relu", ["t"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, out, out])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def unscheduled(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    compiled = compile_model(import_model(model), "lower-to-llvm-unscheduled")
    out = np.empty(compiled.outputs[0].shape, dtype=np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    return out


SHAPES = {
    "3x3-s1": (8, 10, 32, 3, 1, 1),
    "3x3-s2": (8, 11, 16, 3, 2, 1),
    "1x1-s1": (16, 7, 32, 1, 1, 0),
    "1x1-s2": (16, 8, 32, 1, 2, 0),
    "7x7-s2": (3, 20, 16, 7, 2, 3),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize(("bias", "relu"), [(True, True), (False, False)])
def test_conv_schedule_keeps_numbers(name: str, bias: bool, relu: bool) -> None:
    c, size, f, kernel, stride, pad = SHAPES[name]
    model = conv_model(c, size, f, kernel, stride, pad, bias, relu)
    x = np.random.default_rng(1).standard_normal((1, c, size, size)).astype(np.float32)
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(actual, unscheduled(model, x), rtol=1e-4, atol=1e-4)


def test_conv_gets_the_conv_schedule() -> None:
    imported = import_model(conv_model(8, 10, 32, 3, 1, 1))
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-schedule"][1]), ctx)
    (conv,) = [k for k in kernels_of(imported.module) if re.fullmatch(r"conv_\d+", k.sym_name.data)]
    steps = schedule_for(imported.module, conv, host_info())
    assert steps[0].startswith("loop-decompose-reduction")
    assert any(step.startswith("loop-pack") for step in steps)
    assert steps[-1].startswith("loop-cache-write")
