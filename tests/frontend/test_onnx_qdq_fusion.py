"""QDQ fusion (`frontend/onnx_qdq_fusion.py`): small QDQ graphs with 8-bit outputs, run by minimlc and by ONNX
Runtime on the same file (its default optimisation level, where its QDQ transformer fuses the same patterns).

Where ONNX Runtime fuses the pattern too (DQ -> Conv/MatMul/Gemm -> Q, a Relu whose Q's zero point is the type's
minimum) both compute the same int32 sums and the same float32 requantization: exact. Where it does not (a Relu
before a Q whose zero point is not the minimum: float Conv, Relu, Q) or rewrites differently (DQ -> Add -> Q into its
QLinearAdd) the results differ at rounding ties only: at most 1 quantization step. On hosts without VNNI the weights
use 7 bits (ONNX Runtime's u8 x s8 kernels saturate there with 8)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from quantized_resnet import onnxruntime_saturates_u8s8

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.frontend.onnx_qdq_fusion import fuse_qdq
from minimlc.lowering.llvm.emit_ir import emit_llvm_ir
from minimlc.lowering.pipeline import run_passes, run_pipeline

WEIGHT_MAX = 63 if onnxruntime_saturates_u8s8() else 127


class _Builder:
    """A QDQ graph: float input `x` quantized, the ops, a quantized graph output."""

    def __init__(self, seed: int, activation: Any = np.uint8):
        self.rng = np.random.default_rng(seed)
        self.activation = activation
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def constant(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def quantize(self, name: str, scale: float, zero: int, dequantize: bool = True) -> str:
        """Q (and DQ) of activation `name`; the name of the result."""
        scale_name = self.constant(f"{name}_scale", np.array(scale, np.float32))
        zero_name = self.constant(f"{name}_zero", np.array(zero, self.activation))
        self.nodes.append(helper.make_node("QuantizeLinear", [name, scale_name, zero_name], [f"{name}_q"]))
        if not dequantize:
            return f"{name}_q"
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", scale_name, zero_name], [f"{name}_dq"]))
        return f"{name}_dq"

    def weight(self, name: str, shape: tuple[int, ...], axis: int | None) -> tuple[str, np.ndarray]:
        """DQ of an int8 weight, per channel along `axis` (None: per tensor); the name and the float32 scales."""
        data = self.constant(name, self.rng.integers(-WEIGHT_MAX, WEIGHT_MAX, shape, endpoint=True).astype(np.int8))
        channels = 1 if axis is None else shape[axis]
        scales = self.rng.uniform(0.002, 0.01, channels).astype(np.float32)
        scale = scales[0] if axis is None else scales
        zero = np.zeros_like(scale, dtype=np.int8)
        inputs = [data, self.constant(f"{name}_scale", scale), self.constant(f"{name}_zero", zero)]
        attributes = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [f"{name}_dq"], **attributes))
        return f"{name}_dq", scales

    def bias(self, name: str, x_scale: float, w_scales: np.ndarray, channels: int) -> str:
        data = self.constant(name, self.rng.integers(-2000, 2000, channels).astype(np.int32))
        scale = (np.float32(x_scale) * w_scales).astype(np.float32)
        scale = np.broadcast_to(scale, (channels,)).copy() if w_scales.size > 1 else scale[0]
        inputs = [
            data,
            self.constant(f"{name}_scale", scale),
            self.constant(f"{name}_zero", np.zeros_like(scale, np.int32)),
        ]
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [f"{name}_dq"], axis=0))
        return f"{name}_dq"

    def model(self, x_shape: tuple[int, ...], outputs: list[str]) -> onnx.ModelProto:
        element = helper.np_dtype_to_tensor_dtype(np.dtype(self.activation))
        graph = helper.make_graph(
            self.nodes,
            "qdq",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(name, element, None) for name in outputs],
            self.initializers,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _run_both(model: onnx.ModelProto, x_shape: tuple[int, ...]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    feeds = {"x": np.random.default_rng(7).normal(0.0, 1.0, x_shape).astype(np.float32)}
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    return InferenceSession(model, cache=False).run(None, feeds), expected


def _op_types(model: onnx.ModelProto) -> list[str]:
    return [node.op_type for node in fuse_qdq(model.graph).node]


def _assert_close(actual: list[np.ndarray], expected: list[np.ndarray], steps: int) -> None:
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype
        assert len(np.unique(want)) > 8  # not saturated to a few values
        difference = np.abs(got.astype(np.int32) - want.astype(np.int32))
        assert difference.max() <= steps, f"{difference.max()} steps apart at {np.argmax(difference)}"


def _conv_model(activation: Any, per_channel: bool, bias: bool, relu: str) -> onnx.ModelProto:
    """x (1x8x10x10) -> Q/DQ -> Conv 3x3 pad 1 (16 channels) [-> Relu] -> Q; `relu` "" or the Q's zero point kind:
    "zero" (the type's minimum after the Relu) or "mid" (a zero point in the middle)."""
    builder = _Builder(seed=1, activation=activation)
    zero_x = 128 if activation == np.uint8 else 0
    x = builder.quantize("x", 0.02, zero_x)
    w, scales = builder.weight("w", (16, 8, 3, 3), 0 if per_channel else None)
    inputs = [x, w] + ([builder.bias("b", 0.02, scales, 16)] if bias else [])
    builder.nodes.append(helper.make_node("Conv", inputs, ["y"], pads=[1, 1, 1, 1]))
    minimum = 0 if activation == np.uint8 else -128
    zero_y = {"": minimum + 128, "zero": minimum, "mid": minimum + 100}[relu]
    y = "y"
    if relu:
        builder.nodes.append(helper.make_node("Relu", ["y"], ["r"]))
        y = "r"
    out = builder.quantize(y, 0.03 if relu else 0.05, zero_y, dequantize=False)
    return builder.model((1, 8, 10, 10), [out])


CONV_CASES = [
    pytest.param(np.uint8, True, True, "", 0, id="u8-per-channel-bias"),
    pytest.param(np.uint8, False, False, "", 0, id="u8-per-tensor-no-bias"),
    pytest.param(np.int8, True, False, "", 0, id="s8-per-channel"),
    pytest.param(np.int8, False, True, "", 0, id="s8-per-tensor-bias"),
    pytest.param(np.uint8, True, True, "zero", 0, id="u8-relu-dropped"),
    pytest.param(np.uint8, True, True, "mid", 1, id="u8-relu-as-max"),
    pytest.param(np.int8, True, True, "zero", 0, id="s8-relu-dropped"),
]


@pytest.mark.parametrize(("activation", "per_channel", "bias", "relu", "steps"), CONV_CASES)
def test_conv(activation: Any, per_channel: bool, bias: bool, relu: str, steps: int) -> None:
    """DQ -> Conv -> [Relu] -> Q becomes QLinearConv (and a Max where the Relu's zero is no bound of the type)."""
    model = _conv_model(activation, per_channel, bias, relu)
    op_types = _op_types(model)
    assert "QLinearConv" in op_types
    assert "Conv" not in op_types
    assert "Relu" not in op_types
    assert ("Max" in op_types) == (relu == "mid")
    _assert_close(*_run_both(model, (1, 8, 10, 10)), steps)


@pytest.mark.parametrize("per_channel", [True, False], ids=["per-column", "per-tensor"])
def test_matmul_weight(per_channel: bool) -> None:
    """DQ(x) @ DQ(W) -> Q with a 3-D x -> QLinearMatMul, exact."""
    builder = _Builder(seed=2)
    x = builder.quantize("x", 0.02, 128)
    w, _ = builder.weight("w", (64, 24), 1 if per_channel else None)
    builder.nodes.append(helper.make_node("MatMul", [x, w], ["y"]))
    model = builder.model((2, 5, 64), [builder.quantize("y", 0.05, 120, dequantize=False)])
    assert _op_types(model) == ["QuantizeLinear", "QLinearMatMul"]
    _assert_close(*_run_both(model, (2, 5, 64)), 0)


def test_matmul_of_two_activations() -> None:
    """DQ(a) @ DQ(b), both activations per tensor (attention's scores) -> QLinearMatMul, exact."""
    builder = _Builder(seed=3)
    x = builder.quantize("x", 0.02, 128)
    builder.nodes.append(helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]))
    xt = builder.quantize("xt", 0.02, 128)
    builder.nodes.append(helper.make_node("MatMul", [x, xt], ["y"]))
    model = builder.model((2, 6, 32), [builder.quantize("y", 0.1, 128, dequantize=False)])
    assert "QLinearMatMul" in _op_types(model)
    _assert_close(*_run_both(model, (2, 6, 32)), 0)


@pytest.mark.parametrize("trans_b", [1, 0], ids=["transB", "no-transB"])
def test_gemm_with_bias(trans_b: int) -> None:
    """DQ(x) Gemm DQ(W) + DQ(b) -> Q -> a 1x1 QLinearConv between Reshapes (the bias kept in int32), exact."""
    builder = _Builder(seed=4)
    x = builder.quantize("x", 0.02, 128)
    w, scales = builder.weight("w", (24, 64) if trans_b else (64, 24), 0 if trans_b else 1)
    b = builder.bias("b", 0.02, scales, 24)
    builder.nodes.append(helper.make_node("Gemm", [x, w, b], ["y"], transB=trans_b))
    model = builder.model((3, 64), [builder.quantize("y", 0.05, 128, dequantize=False)])
    assert _op_types(model) == ["QuantizeLinear", "Reshape", "QLinearConv", "Reshape"]
    _assert_close(*_run_both(model, (3, 64)), 0)


def test_residual_block() -> None:
    """Conv -> Q/DQ -> Relu -> Q/DQ -> Conv -> Q/DQ -> Add(x's DQ) -> Q: the Convs fused (the DQ of x read by the
    Conv and the Add stays for the Add), the Add left as float arithmetic on 8-bit values: within 1 step of ONNX
    Runtime (its QLinearAdd rounds differently)."""
    builder = _Builder(seed=5)
    x = builder.quantize("x", 0.02, 128)
    w1, _ = builder.weight("w1", (8, 8, 3, 3), 0)
    builder.nodes.append(helper.make_node("Conv", [x, w1], ["c1"], pads=[1, 1, 1, 1]))
    c1 = builder.quantize("c1", 0.04, 128)
    builder.nodes.append(helper.make_node("Relu", [c1], ["r1"]))
    r1 = builder.quantize("r1", 0.02, 0)
    w2, _ = builder.weight("w2", (8, 8, 3, 3), 0)
    builder.nodes.append(helper.make_node("Conv", [r1, w2], ["c2"], pads=[1, 1, 1, 1]))
    c2 = builder.quantize("c2", 0.03, 128)
    builder.nodes.append(helper.make_node("Add", [c2, x], ["sum"]))
    model = builder.model((1, 8, 8, 8), [builder.quantize("sum", 0.05, 128, dequantize=False)])
    op_types = _op_types(model)
    assert op_types.count("QLinearConv") == 2
    assert "Conv" not in op_types
    assert op_types.count("DequantizeLinear") == 3  # x's (for the Add), c1's (for the Relu), c2's (for the Add)
    _assert_close(*_run_both(model, (1, 8, 8, 8)), 1)


def test_conv_output_read_twice_stays_float() -> None:
    """A Conv whose output is read by its Q and by a graph output is not fused, and still equals ONNX Runtime."""
    builder = _Builder(seed=6)
    x = builder.quantize("x", 0.02, 128)
    w, _ = builder.weight("w", (8, 8, 3, 3), 0)
    builder.nodes.append(helper.make_node("Conv", [x, w], ["y"], pads=[1, 1, 1, 1]))
    out = builder.quantize("y", 0.05, 128, dequantize=False)
    model = builder.model((1, 8, 6, 6), [out])
    model.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    assert "QLinearConv" not in _op_types(model)
    actual, expected = _run_both(model, (1, 8, 6, 6))
    _assert_close(actual[:1], expected[:1], 1)
    np.testing.assert_allclose(actual[1], expected[1], rtol=1e-5, atol=1e-5)


def test_float_weight_stays_float() -> None:
    """A Conv whose weight is a float initializer (no DQ) is left to the float path."""
    builder = _Builder(seed=7)
    x = builder.quantize("x", 0.02, 128)
    w = builder.constant("w", builder.rng.normal(0.0, 0.1, (8, 8, 1, 1)).astype(np.float32))
    builder.nodes.append(helper.make_node("Conv", [x, w], ["y"]))
    model = builder.model((1, 8, 6, 6), [builder.quantize("y", 0.05, 128, dequantize=False)])
    assert fuse_qdq(model.graph) is model.graph
    _assert_close(*_run_both(model, (1, 8, 6, 6)), 1)


def test_portable_path_is_exact_too() -> None:
    """Built for x86-64 (no fast u8 x s8 dot product: the portable i32 form, as targets without one take), the fused
    Conv still equals ONNX Runtime exactly."""
    model = _conv_model(np.uint8, True, True, "zero")
    feeds = {"x": np.random.default_rng(8).normal(0.0, 1.0, (1, 8, 10, 10)).astype(np.float32)}
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    _assert_close(InferenceSession(model, cache=False, target="x86-64").run(None, feeds), expected, 0)


def test_aarch64_build_takes_the_fused_integer_kernels() -> None:
    """Lowered for aarch64 (neoverse-n1), the fused model's convolution is `udot` dot products, no x86 intrinsic."""
    module = import_model(_conv_model(np.uint8, True, True, "zero")).module
    run_pipeline(module, 3, stop_after="scf", target="aarch64-linux-gnu -mcpu=neoverse-n1")
    run_passes(module, ["cse", "convert-scf-to-cf"])
    direct = emit_llvm_ir(module)
    assert "@llvm.aarch64.neon.udot.v4i32.v16i8(" in direct
    assert "llvm.x86" not in direct
