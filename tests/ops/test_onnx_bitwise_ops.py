"""Numerics of the ops on bits at O0 and O3: BitShift, BitwiseAnd/Or/Xor/Not over every integer type, BitCast
between types of one width, IsNaN and IsInf over every float type. Against ONNX Runtime; onnx's reference evaluator
where ONNX Runtime lacks the op or type (BitShift of signed integers, opset 28; BitCast, opset 26)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

RNG = np.random.default_rng(31)
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
SIGNED = [np.int8, np.int16, np.int32, np.int64]


def _integers(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_bitshift_unsigned(direction: str, dtype: Any) -> None:
    width = np.dtype(dtype).itemsize * 8
    feeds = {"x": _integers(dtype, (3, 5)), "y": np.array([0, 1, 3, width - 1, width // 2], dtype)}
    model = one_node_model("BitShift", feeds, {"direction": direction}, opset=11)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", SIGNED)
def test_bitshift_signed_out_of_range_amounts(direction: str, dtype: Any) -> None:
    """Signed types (opset 28): arithmetic right shifts; a negative amount or one of at least the width shifts every
    bit out (0, or -1 for a negative value shifted right). ONNX Runtime lacks opset 28: the reference evaluator."""
    width = np.dtype(dtype).itemsize * 8
    x = np.array([[5, -5, 1, -1, 0, 100, -100, 7]], dtype)
    y = np.array([[0, 1, width - 1, width, width + 3, -1, -7, 2]], dtype)
    feeds = {"x": np.concatenate([x, _integers(dtype, (1, 8))]), "y": y}
    model = one_node_model("BitShift", feeds, {"direction": direction}, opset=28)
    check_against_onnxruntime(InferenceSession, model, feeds, reference=True)


@pytest.mark.parametrize("op_type", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED)
def test_bitwise_binary(op_type: str, dtype: Any) -> None:
    feeds = {"a": _integers(dtype, (2, 3, 4)), "b": _integers(dtype, (3, 1))}
    check_against_onnxruntime(InferenceSession, one_node_model(op_type, feeds, {}), feeds)


@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED)
def test_bitwise_not(dtype: Any) -> None:
    feeds = {"x": _integers(dtype, (4, 6))}
    check_against_onnxruntime(InferenceSession, one_node_model("BitwiseNot", feeds, {}), feeds)


BITCASTS = [
    (np.float32, TensorProto.INT32),
    (np.int32, TensorProto.FLOAT),
    (np.float32, TensorProto.UINT32),
    (np.float64, TensorProto.INT64),
    (np.uint64, TensorProto.DOUBLE),
    (np.int8, TensorProto.UINT8),
    (np.uint16, TensorProto.INT16),
    (np.float16, TensorProto.INT16),
    (np.uint16, TensorProto.FLOAT16),
    (ml_dtypes.bfloat16, TensorProto.UINT16),
    (np.int16, TensorProto.BFLOAT16),
    (np.bool_, TensorProto.UINT8),
    (np.uint8, TensorProto.BOOL),
]


@pytest.mark.parametrize(("dtype", "to"), BITCASTS, ids=lambda v: str(v) if isinstance(v, int) else np.dtype(v).name)
def test_bitcast(dtype: Any, to: int) -> None:
    if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16:
        x = RNG.standard_normal((3, 4)).astype(dtype)
        x.flat[:3] = [np.inf, -np.inf, np.nan]
    elif dtype is np.bool_:
        x = RNG.integers(0, 2, size=(3, 4)).astype(np.bool_)
    elif dtype is np.uint8 and to == TensorProto.BOOL:
        x = RNG.integers(0, 2, size=(3, 4)).astype(np.uint8)  # 0 and 1: the bytes a bool may hold
    else:
        x = _integers(dtype, (3, 4))
    feeds = {"x": x}
    model = one_node_model("BitCast", feeds, {"to": to}, opset=26)
    expected = x.view(helper.tensor_dtype_to_np_dtype(to))
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, feeds)
    assert session.stats["kernels"] > 0
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual.view(np.uint8), expected.view(np.uint8))


def test_bitcast_of_another_width_is_refused() -> None:
    feeds = {"x": np.zeros(4, np.float32)}
    model = one_node_model("BitCast", feeds, {"to": TensorProto.INT32}, opset=26)
    model.graph.node[0].attribute[0].i = TensorProto.INT64
    with pytest.raises(ModelImportError, match="BitCast from f32 to i64 changes the element width"):
        InferenceSession(model, cache=False)


FLOAT_TYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]


def _specials(dtype: Any) -> np.ndarray:
    values = np.array([[np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], [1.5, -2.0, 6e4, -1e-3, 3.0, np.nan]])
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda d: np.dtype(d).name)
def test_isnan(dtype: Any) -> None:
    feeds = {"x": _specials(dtype)}
    reference = dtype is ml_dtypes.bfloat16  # ONNX Runtime has no bfloat16 IsNaN
    model = one_node_model("IsNaN", feeds, {}, opset=20)
    check_against_onnxruntime(InferenceSession, model, feeds, reference=reference)


@pytest.mark.parametrize("detect", [(1, 1), (1, 0), (0, 1), (0, 0)], ids=lambda d: f"pos{d[0]}-neg{d[1]}")
@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda d: np.dtype(d).name)
def test_isinf(dtype: Any, detect: tuple[int, int]) -> None:
    feeds = {"x": _specials(dtype)}
    attributes = {"detect_positive": detect[0], "detect_negative": detect[1]}
    reference = dtype is ml_dtypes.bfloat16
    model = one_node_model("IsInf", feeds, attributes, opset=20)
    check_against_onnxruntime(InferenceSession, model, feeds, reference=reference)


def test_isnan_of_float8_is_refused() -> None:
    feeds = {"x": np.zeros(4, ml_dtypes.float8_e4m3fn)}
    with pytest.raises(UnsupportedFeatureError, match="IsNaN of f8E4M3FN is not supported"):
        InferenceSession(one_node_model("IsNaN", feeds, {}, opset=20), cache=False)


def test_bitcast_of_float8_is_refused() -> None:
    feeds = {"x": np.zeros(4, ml_dtypes.float8_e4m3fn)}
    model = one_node_model("BitCast", feeds, {"to": TensorProto.UINT8}, opset=26)
    with pytest.raises(UnsupportedFeatureError, match="BitCast of f8E4M3FN is not supported"):
        InferenceSession(model, cache=False)


def test_bitwise_and_of_bools_is_refused() -> None:
    feeds = {"x": np.zeros(4, np.bool_)}
    model = one_node_model("BitwiseAnd", {**feeds, "y": feeds["x"]}, {})
    with pytest.raises(ModelImportError, match="BitwiseAnd takes integer tensors, got i1"):
        InferenceSession(model, cache=False)
