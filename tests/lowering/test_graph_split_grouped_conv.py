"""graph-split-grouped-conv keeps a grouped convolution's numbers: the compiled model (split per group, each group
convolution scheduled) equals the unscheduled one (one grouped "conv" kernel) and ONNX Runtime, with and without
bias, padding and stride, with a fused producer (Relu) in front, and for a depthwise convolution (left alone).
Scheduled sums are reassociated, so rtol = atol = 1e-4 on values of order 1."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, func

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import PIPELINES, make_context, run_passes, split_pass_list
from minimlc.lowering.schedule.default_schedule import kernels_of, schedule_for
from minimlc.lowering.target import target_of


def grouped_conv_model(
    c: int, size: int, f: int, group: int, kernel: int, stride: int, pad: int, bias: bool
) -> onnx.ModelProto:
    """Relu, then Conv(group) (+ bias): the Relu is a producer te-inline would fuse into the convolution."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array((rng.standard_normal((f, c // group, kernel, kernel)) * 0.2).astype(np.float32), "w")
    ]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32), "b"))
    out = (size + 2 * pad - kernel) // stride + 1
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Conv", ["r", "w", "b"][: 2 + bias], ["y"], pads=[pad] * 4, strides=[stride] * 2, group=group),
    ]
    graph = helper.make_graph(
        nodes,
        "grouped_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, out, out])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def unscheduled(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """The model compiled without graph passes, fusion or schedules: one grouped "conv" kernel."""
    compiled = compile_model(import_model(model), "lower-to-llvm-unscheduled")
    out = np.empty(compiled.outputs[0].shape, dtype=np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    return out


SHAPES = {
    "alexnet-like 5x5 g2": (12, 9, 32, 2, 5, 1, 2),
    "shufflenet-like 1x1 g4": (16, 7, 64, 4, 1, 1, 0),
    "odd channels 1x1 g4": (24, 6, 20, 4, 1, 1, 0),
    "3x3 s2 g3": (9, 11, 48, 3, 3, 2, 1),
    "depthwise 3x3": (16, 8, 16, 16, 3, 1, 1),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("opt_level", [2, 3])
def test_split_grouped_conv_keeps_numbers(name: str, bias: bool, opt_level: int) -> None:
    c, size, f, group, kernel, stride, pad = SHAPES[name]
    model = grouped_conv_model(c, size, f, group, kernel, stride, pad, bias)
    x = np.random.default_rng(1).standard_normal((1, c, size, size)).astype(np.float32)
    (actual,) = InferenceSession(model, opt_level=opt_level, num_threads=1).run(None, {"x": x})
    (reference,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(actual, unscheduled(model, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-4)


def test_group_convolutions_get_the_conv_schedule() -> None:
    """Each group's convolution is an ordinary one (the four are identical kernels, emitted once and called four
    times): it reads a channels-last copy and gets the conv schedule."""
    imported = import_model(grouped_conv_model(16, 7, 64, 4, 1, 1, 0, True))
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-schedule"][1]), make_context())
    (conv,) = [k for k in kernels_of(imported.module) if re.fullmatch(r"conv_\d+", k.sym_name.data)]
    name = conv.sym_name.data
    calls = [op for op in imported.module.walk() if isinstance(op, func.CallOp) and op.callee.string_value() == name]
    assert len(calls) == 4
    steps = schedule_for(imported.module, conv, target_of(imported.module))
    assert steps and steps[0].startswith("loop-decompose-reduction")
    assert not [op for op in conv.walk() if isinstance(op, arith.DivUIOp)]
