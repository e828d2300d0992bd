"""Quantized ops (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, DynamicQuantizeLinear, blocked
Quantize/DequantizeLinear) against ONNX Runtime: integer outputs bit-exact, at O0 and O3.

On a host without VNNI, ONNX Runtime's u8 x s8 kernels saturate sums of two products at int16, so random int8
operands there use 7 bits (`INT8_RANGE`, ONNX Runtime's `reduce_range` remedy); the explicit extremes cases
(255 x -128) and `tests/runtime/test_quantized_resnet.py` (against onnx's reference evaluator) cover the full range."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from quantized_resnet import onnxruntime_saturates_u8s8

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

RNG = np.random.default_rng(20)
INT8_RANGE = (-64, 63) if onnxruntime_saturates_u8s8() else (-128, 127)


def _ints(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    info = np.iinfo(dtype)
    low, high = INT8_RANGE if dtype == np.int8 else (info.min, info.max)
    return RNG.integers(low, high, shape, endpoint=True).astype(dtype)


def _scalar(value: float | int, dtype: Any) -> np.ndarray:
    return np.array(value, dtype)


MATMUL_INTEGER_CASES = [
    pytest.param(np.uint8, np.int8, (), (), id="u8xs8-no-zero-points"),
    pytest.param(np.uint8, np.int8, (1,), (1,), id="u8xs8-scalar-zero-points"),
    pytest.param(np.uint8, np.uint8, (1,), (7,), id="u8xu8-per-column"),
    pytest.param(np.int8, np.int8, (1,), (7,), id="s8xs8-per-column"),
]


@pytest.mark.parametrize(("a_type", "b_type", "a_zero", "b_zero"), MATMUL_INTEGER_CASES)
def test_matmul_integer(a_type: Any, b_type: Any, a_zero: tuple[int, ...], b_zero: tuple[int, ...]) -> None:
    """int32 products of 8-bit matrices less their zero points (B a weight), exact."""
    feeds = {"A": _ints((5, 40), a_type)}
    constants = {"B": _ints((40, 7), b_type)}
    inputs = ["A", "B"]
    if a_zero:
        feeds["a_zero"] = _ints(a_zero, a_type)
        inputs.append("a_zero")
    if b_zero:
        constants["b_zero"] = _ints(b_zero, b_type)
        inputs += [""] * (3 - len(inputs)) + ["b_zero"]
    model = one_node_model("MatMulInteger", feeds, {}, constants=constants, inputs=inputs)
    check_against_onnxruntime(InferenceSession, model, feeds)


def test_matmul_integer_batched_runtime_operands() -> None:
    """3-D A times a run-time 2-D B, both with zero points."""
    feeds = {
        "A": _ints((2, 3, 16), np.uint8),
        "B": _ints((16, 5), np.int8),
        "a_zero": _scalar(131, np.uint8),
        "b_zero": _scalar(-3, np.int8),
    }
    check_against_onnxruntime(InferenceSession, one_node_model("MatMulInteger", feeds, {}), feeds)


CONV_INTEGER_CASES = [
    pytest.param(np.uint8, np.int8, {"pads": [1, 1, 1, 1]}, True, id="u8xs8-pads-zero-points"),
    pytest.param(np.uint8, np.uint8, {"strides": [2, 2], "dilations": [1, 2]}, True, id="u8xu8-strides-dilations"),
    pytest.param(np.uint8, np.int8, {"pads": [0, 1, 2, 1], "group": 2}, False, id="u8xs8-group-no-zero-points"),
    pytest.param(np.int8, np.int8, {"auto_pad": "SAME_UPPER"}, True, id="s8xs8-same-upper"),
]


@pytest.mark.parametrize(("x_type", "w_type", "attributes", "zero_points"), CONV_INTEGER_CASES)
def test_conv_integer(x_type: Any, w_type: Any, attributes: dict[str, Any], zero_points: bool) -> None:
    """int32 convolution of 8-bit tensors less their zero points; the padding adds nothing, as in ONNX Runtime."""
    feeds = {"x": _ints((1, 4, 7, 8), x_type)}
    constants = {"w": _ints((6, 4 // attributes.get("group", 1), 3, 3), w_type)}
    if zero_points:
        feeds["x_zero"] = _ints((), x_type)
        constants["w_zero"] = _ints((), w_type)
    inputs = ["x", "w", "x_zero", "w_zero"] if zero_points else ["x", "w"]
    model = one_node_model("ConvInteger", feeds, attributes, constants=constants, inputs=inputs)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "attributes"),
    [
        ((1, 4, 11), (16, 4, 3), {"pads": [1, 0], "strides": [2]}),
        ((2, 3, 6, 7), (32, 3, 2, 3), {"dilations": [2, 1], "strides": [1, 2], "pads": [1, 0, 0, 2]}),
    ],
    ids=["1d-16-channels", "2d-32-channels-batch-2"],
)
def test_conv_integer_vector_channels(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], attributes: dict[str, Any]
) -> None:
    """Output channels a multiple of the vector width: the integer convolution rule's register tile (at O2/O3)."""
    feeds = {"x": _ints(x_shape, np.uint8), "x_zero": _scalar(7, np.uint8)}
    constants = {"w": _ints(w_shape, np.int8), "w_zero": _scalar(-2, np.int8)}
    model = one_node_model(
        "ConvInteger", feeds, attributes, constants=constants, inputs=["x", "w", "x_zero", "w_zero"]
    )
    check_against_onnxruntime(InferenceSession, model, feeds)


DOT_PRODUCT_CASES = [
    pytest.param(
        np.uint8, (1, 6, 7, 8), (16, 6, 3, 3), "omitted", {"pads": [1, 1, 1, 1], "strides": [2, 1]}, id="u8-6-channels"
    ),
    pytest.param(
        np.int8, (1, 8, 6, 6), (32, 8, 3, 3), "zeros", {"dilations": [2, 1], "pads": [2, 0, 1, 1]}, id="s8-plus-128"
    ),
    pytest.param(np.uint8, (2, 5, 9), (16, 5, 3), "omitted", {"pads": [1, 2]}, id="u8-1d-batch-2"),
    pytest.param(np.uint8, (1, 64, 5, 5), (16, 64, 3, 3), "extremes", {"pads": [1, 1, 1, 1]}, id="u8-extremes"),
    pytest.param(np.uint8, (1, 8, 6, 6), (16, 8, 3, 3), "nonzero", {"pads": [1, 1, 1, 1]}, id="fallback-weight-zero"),
    pytest.param(np.uint8, (1, 8, 6, 6), (24, 8, 3, 3), "omitted", {"pads": [1, 1, 1, 1]}, id="fallback-24-outputs"),
]


@pytest.mark.parametrize("target", ["host", "x86-64-v3"])
@pytest.mark.parametrize(("x_type", "x_shape", "w_shape", "w_zero", "attributes"), DOT_PRODUCT_CASES)
def test_conv_integer_dot_product(
    x_type: Any,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    w_zero: str,
    attributes: dict[str, Any],
    target: str,
) -> None:
    """The u8 x s8 dot-product form (VNNI hosts: int8 weight whose zero point is omitted or all zeros, output
    channels in whole vectors; channels padded to four, an int8 input shifted by +128) and its fallbacks (a non-zero
    weight zero point, 24 outputs, a target without VNNI), exact."""
    feeds = {"x": _ints(x_shape, x_type), "x_zero": _scalar(201 if x_type == np.uint8 else -77, x_type)}
    weight = _ints(w_shape, np.int8)
    if w_zero == "extremes":
        feeds = {"x": np.full(x_shape, 255, np.uint8), "x_zero": _scalar(0, np.uint8)}
        weight = np.full(w_shape, -128, np.int8)
    constants = {"w": weight}
    inputs = ["x", "w", "x_zero"]
    if w_zero in ("zeros", "nonzero"):
        constants["w_zero"] = _scalar(0 if w_zero == "zeros" else -3, np.int8)
        inputs.append("w_zero")
    model = one_node_model("ConvInteger", feeds, attributes, constants=constants, inputs=inputs)
    session = functools.partial(InferenceSession, target=target)
    check_against_onnxruntime(session, model, feeds)  # type: ignore[arg-type]


@pytest.mark.parametrize("x_type", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_conv_dot_product(x_type: Any) -> None:
    """QLinearConv with 32 output channels and per-channel int8 weights of zero points 0: the dot-product form on
    VNNI hosts (an int8 input through +128), requantized exactly as ONNX Runtime does."""
    channels, out_channels = 12, 32
    feeds = {
        "x": _ints((1, channels, 9, 10), x_type),
        "x_scale": _scalar(0.05, np.float32),
        "x_zero": _scalar(120 if x_type == np.uint8 else 4, x_type),
    }
    constants = {
        "w": _ints((out_channels, channels, 3, 3), np.int8),
        "w_scale": RNG.uniform(0.002, 0.02, (out_channels,)).astype(np.float32),
        "w_zero": np.zeros((out_channels,), np.int8),
        "y_scale": _scalar(0.9, np.float32),
        "y_zero": _scalar(60 if x_type == np.uint8 else -10, x_type),
        "B": RNG.integers(-5000, 5000, (out_channels,)).astype(np.int32),
    }
    order = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "B"]
    model = one_node_model("QLinearConv", feeds, {"pads": [1, 1, 1, 1]}, constants=constants, inputs=order)
    check_against_onnxruntime(InferenceSession, model, feeds)


MATMUL_DOT_PRODUCT_CASES = [
    pytest.param(np.uint8, (12, 30), (30, 32), "omitted", id="u8-depth-30"),
    pytest.param(np.int8, (2, 5, 64), (64, 16), "zeros", id="s8-plus-128-batched"),
    pytest.param(np.uint8, (7, 40), (40, 16), "nonzero", id="fallback-b-zero"),
    pytest.param(np.uint8, (7, 40), (40, 24), "omitted", id="fallback-24-columns"),
]


@pytest.mark.parametrize("target", ["host", "x86-64-v3"])
@pytest.mark.parametrize(("a_type", "a_shape", "b_shape", "b_zero"), MATMUL_DOT_PRODUCT_CASES)
def test_matmul_integer_dot_product(
    a_type: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...], b_zero: str, target: str
) -> None:
    """MatMulInteger in the u8 x s8 dot-product form (VNNI hosts: int8 B with a zero point omitted or 0, columns in
    whole vectors; depth padded to four, int8 A shifted by +128) and its fallbacks, exact."""
    feeds = {"A": _ints(a_shape, a_type), "a_zero": _scalar(13 if a_type == np.uint8 else -9, a_type)}
    constants = {"B": _ints(b_shape, np.int8)}
    inputs = ["A", "B", "a_zero"]
    if b_zero != "omitted":
        constants["b_zero"] = _scalar(0 if b_zero == "zeros" else 5, np.int8)
        inputs.append("b_zero")
    model = one_node_model("MatMulInteger", feeds, {}, constants=constants, inputs=inputs)
    session = functools.partial(InferenceSession, target=target)
    check_against_onnxruntime(session, model, feeds)  # type: ignore[arg-type]


def test_qlinear_matmul_vector_columns() -> None:
    """Columns a multiple of the vector width: the integer GEMM rule's register tile, B packed at load time."""
    feeds = {"a": _ints((12, 96), np.uint8), "a_scale": _scalar(0.03, np.float32), "a_zero": _scalar(9, np.uint8)}
    constants = {
        "b": _ints((96, 64), np.int8),
        "b_scale": RNG.uniform(0.001, 0.01, (64,)).astype(np.float32),
        "b_zero": np.zeros((64,), np.int8),
        "y_scale": _scalar(0.5, np.float32),
        "y_zero": _scalar(128, np.uint8),
    }
    order = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"]
    model = one_node_model("QLinearMatMul", feeds, {}, constants=constants, inputs=order)
    check_against_onnxruntime(InferenceSession, model, feeds)


def _qlinear_matmul_feeds(a_type: Any, per_column: bool) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    columns = 9
    feeds = {
        "a": _ints((6, 64), a_type),
        "a_scale": _scalar(0.02, np.float32),
        "a_zero": _scalar(128 if a_type == np.uint8 else -5, a_type),
    }
    b_scale = RNG.uniform(0.001, 0.01, (columns,)).astype(np.float32) if per_column else _scalar(0.004, np.float32)
    b_zero = _ints((columns,), np.int8) if per_column else _scalar(3, np.int8)
    constants = {
        "b": _ints((64, columns), np.int8),
        "b_scale": b_scale,
        "b_zero": b_zero,
        "y_scale": _scalar(0.37, np.float32),
        "y_zero": _scalar(100 if a_type == np.uint8 else -7, a_type),
    }
    return feeds, constants


@pytest.mark.parametrize("a_type", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("per_column", [False, True], ids=["per-tensor", "per-column"])
def test_qlinear_matmul(a_type: Any, per_column: bool) -> None:
    """Quantized matmul requantized with ONNX Runtime's float32 rounding, exact on uint8/int8 outputs."""
    feeds, constants = _qlinear_matmul_feeds(a_type, per_column)
    order = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"]
    model = one_node_model("QLinearMatMul", feeds, {}, constants=constants, inputs=order)
    check_against_onnxruntime(InferenceSession, model, feeds)


QLINEAR_CONV_CASES = [
    pytest.param(np.uint8, False, {"pads": [1, 1, 1, 1]}, True, id="u8-per-tensor-bias"),
    pytest.param(np.uint8, True, {"pads": [1, 1, 1, 1], "strides": [2, 2]}, True, id="u8-per-channel-strides"),
    pytest.param(np.int8, True, {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, False, id="s8-per-channel-dilations"),
    pytest.param(np.uint8, True, {"group": 8, "pads": [1, 1, 1, 1]}, True, id="u8-depthwise"),
    pytest.param(np.int8, False, {"group": 2}, True, id="s8-groups"),
]


@pytest.mark.parametrize(("x_type", "per_channel", "attributes", "bias"), QLINEAR_CONV_CASES)
def test_qlinear_conv(x_type: Any, per_channel: bool, attributes: dict[str, Any], bias: bool) -> None:
    """Quantized convolution (int8 weights, per-tensor or per-channel scales, int32 bias), exact against ONNX
    Runtime."""
    channels, group = 8, attributes.get("group", 1)
    feeds = {
        "x": _ints((1, channels, 9, 10), x_type),
        "x_scale": _scalar(0.05, np.float32),
        "x_zero": _scalar(120 if x_type == np.uint8 else 4, x_type),
    }
    constants = {
        "w": _ints((channels, channels // group, 3, 3), np.int8),
        "w_scale": (
            RNG.uniform(0.002, 0.02, (channels,)).astype(np.float32) if per_channel else _scalar(0.01, np.float32)
        ),
        "w_zero": np.zeros((channels,), np.int8) if per_channel else _scalar(0, np.int8),
        "y_scale": _scalar(0.9, np.float32),
        "y_zero": _scalar(60 if x_type == np.uint8 else -10, x_type),
    }
    order = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"]
    if bias:
        constants["B"] = RNG.integers(-5000, 5000, (channels,)).astype(np.int32)
        order.append("B")
    model = one_node_model("QLinearConv", feeds, attributes, constants=constants, inputs=order)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize(
    "x",
    [
        RNG.normal(0.5, 2.0, (3, 17)).astype(np.float32),
        np.abs(RNG.normal(0.0, 3.0, (4, 5))).astype(np.float32),
        -np.abs(RNG.normal(0.0, 3.0, (2, 9))).astype(np.float32),
        np.zeros((2, 3), np.float32),
    ],
    ids=["mixed", "positive", "negative", "zeros"],
)
def test_dynamic_quantize_linear(x: np.ndarray) -> None:
    """uint8 quantization by the input's range: data, scale and zero point as ONNX Runtime computes them."""
    feeds = {"x": x}
    check_against_onnxruntime(InferenceSession, one_node_model("DynamicQuantizeLinear", feeds, {}, outputs=3), feeds)


@pytest.mark.parametrize("zero_dtype", [np.uint8, np.int8], ids=["u8", "s8"])
def test_blocked_quantize_and_dequantize(zero_dtype: Any) -> None:
    """Blocked QuantizeLinear and DequantizeLinear (block_size along axis 1), against ONNX Runtime."""
    x = RNG.normal(0.0, 4.0, (3, 8, 2)).astype(np.float32)
    constants = {
        "scale": RNG.uniform(0.01, 0.1, (3, 2, 2)).astype(np.float32),
        "zero": _ints((3, 2, 2), zero_dtype),
    }
    quantize = one_node_model("QuantizeLinear", {"x": x}, {"axis": 1, "block_size": 4}, constants=constants, opset=21)
    check_against_onnxruntime(InferenceSession, quantize, {"x": x})
    q = {"q": _ints((3, 8, 2), zero_dtype)}
    dequantize = one_node_model("DequantizeLinear", q, {"axis": 1, "block_size": 4}, constants=constants, opset=21)
    check_against_onnxruntime(InferenceSession, dequantize, q)


def test_refusals() -> None:
    """A partial last block and 16-bit operands are refused, naming what is missing."""
    x = np.zeros((2, 6), np.float32)
    constants = {"scale": np.ones((2, 2), np.float32)}
    model = one_node_model("QuantizeLinear", {"x": x}, {"axis": 1, "block_size": 4}, constants=constants, opset=21)
    with pytest.raises(UnsupportedFeatureError, match="partial block"):
        InferenceSession(model, cache=False)
    feeds = {"A": np.zeros((2, 3), np.int16), "B": np.zeros((3, 2), np.int16)}
    with pytest.raises(UnsupportedFeatureError, match="only int8 and uint8"):
        InferenceSession(one_node_model("MatMulInteger", feeds, {}), cache=False)
