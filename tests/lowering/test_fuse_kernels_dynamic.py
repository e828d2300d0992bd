"""`loop-fuse-kernels` on a dynamic model (`loop/kernel_patterns.py`): kernels that take their run-time extents as
trailing `index` parameters fuse as static ones do (a GEMM with its bias add and ReLU, a convolution with its bias,
ReLU and residual add), so one session compiled once runs as many kernels per call as the static build at the same
shape; numbers against ONNX Runtime at several sizes, zero included (rtol 1e-4, atol 1e-5, as the static tests)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func, memref

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.loop.kernel_patterns import Pattern, kernel_pattern
from minimlc.lowering.pipeline import run_passes, run_pipeline

RTOL, ATOL = 1e-4, 1e-5


def _model(nodes: list[onnx.NodeProto], x: onnx.ValueInfoProto, weights: dict[str, tuple[int, ...]]) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
        for name, shape in weights.items()
    ]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph(nodes, "m", [x], [output], initializers), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    return model


def _gemm_bias_relu() -> onnx.ModelProto:
    """x[batch, seq, 64] -> MatMul(64x128) -> Add(bias) -> Relu."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])
    return _model(nodes, x, {"w": (64, 128), "b": (128,)})


def _conv_residual() -> onnx.ModelProto:
    """x[batch, 8, 10, 10] -> Conv 3x3 + bias -> Relu -> Conv 1x1 + bias -> Add(x) -> Relu."""
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], kernel_shape=[1, 1]),
        helper.make_node("Add", ["c1", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 10, 10])
    return _model(nodes, x, {"w0": (16, 8, 3, 3), "b0": (16,), "w1": (8, 16, 1, 1), "b1": (8,)})


CASES = {
    "gemm_bias_relu": (_gemm_bias_relu, [(1, 1, 64), (3, 5, 64), (17, 3, 64), (0, 4, 64), (2, 0, 64)]),
    "conv_residual": (_conv_residual, [(1, 8, 10, 10), (3, 8, 10, 10), (17, 8, 10, 10), (0, 8, 10, 10)]),
}


@pytest.mark.parametrize("name", CASES)
def test_one_compile_runs_as_many_kernels_as_the_static_build(name: str) -> None:
    build, shapes = CASES[name]
    model = build()
    session = InferenceSession(model, num_threads=1, cache=False)
    assert "symbolic_fallback" not in session.stats, session.stats.get("symbolic_fallback")
    static = InferenceSession(model, input_shapes={"x": shapes[1]}, num_threads=1, cache=False)
    assert session.stats["kernels"] == static.stats["kernels"]
    oracle = ort.InferenceSession(model.SerializeToString())
    for shape in shapes:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        (actual,) = session.run(None, {"x": x})
        (expected,) = oracle.run(None, {"x": x})
        assert actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1


def test_a_dynamic_kernel_gets_the_pattern_of_its_static_twin() -> None:
    """Extents after the output do not hide it: the GEMM is a contraction, its bias + ReLU elementwise."""
    patterns = {}
    for symbolic in (True, False):
        module = import_model(_gemm_bias_relu(), None if symbolic else {"x": (2, 3, 64)}, symbolic=symbolic).module
        run_pipeline(module, 3, stop_after="schedule", target="x86-64-v3")
        run_passes(module, ["loop-hoist-constants", "default-schedule"])
        functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        calls = [op for op in functions["main"].walk() if isinstance(op, func.CallOp)]
        patterns[symbolic] = [kernel_pattern(functions[call.callee.string_value()]) for call in calls]
    assert patterns[True] == patterns[False] == [Pattern.CONTRACTION, Pattern.ELEMENTWISE]


def test_a_dynamic_kernel_split_into_main_and_remainder_is_still_elementwise() -> None:
    """The `dynamic` schedule splits a 10-wide innermost loop into a vector part and a tail: two stores of the
    output, each reading its inputs along its own indices."""
    module = import_model(_conv_residual(), None, symbolic=True).module
    run_pipeline(module, 3, stop_after="schedule", target="x86-64-v3")
    run_passes(module, ["loop-hoist-constants", "default-schedule"])
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    calls = [op for op in functions["main"].walk() if isinstance(op, func.CallOp)]
    last = functions[calls[-1].callee.string_value()]
    assert len([op for op in last.walk() if isinstance(op, memref.StoreOp)]) == 2
    assert kernel_pattern(last) == Pattern.ELEMENTWISE
