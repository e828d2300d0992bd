"""Numerics of Shrink (hard and soft) and SwiGLU at O0 and O3, on float32, float16 and bfloat16 (computed in
float32, rounded on store), Shrink also on float64 and integers. Shrink against ONNX Runtime; SwiGLU (opset 28,
which ONNX Runtime lacks) against onnx's reference evaluator. SwiGLU refuses float64 (computed on float32 only)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

RNG = np.random.default_rng(41)


@pytest.mark.parametrize(
    "attributes", [{}, {"lambd": 1.5}, {"lambd": 1.5, "bias": 1.5}, {"lambd": 0.0, "bias": -0.25}], ids=str
)
def test_shrink(attributes: dict[str, float]) -> None:
    x = RNG.uniform(-3.0, 3.0, size=(3, 7)).astype(np.float32)
    x.flat[:4] = [1.5, -1.5, 0.5, -0.5]  # exactly at the thresholds: kept as 0
    feeds = {"x": x}
    check_against_onnxruntime(InferenceSession, one_node_model("Shrink", feeds, attributes, opset=9), feeds)


def test_shrink_float16() -> None:
    feeds = {"x": RNG.uniform(-3.0, 3.0, size=(2, 8)).astype(np.float16)}
    model = one_node_model("Shrink", feeds, {"lambd": 0.5, "bias": 0.5}, opset=9)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-3)


@pytest.mark.parametrize(
    "dtype", [np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_shrink_numbers(dtype: Any) -> None:
    """float64 in double; integers in float32 and truncated back, as ONNX Runtime does."""
    x = np.arange(-6, 6).reshape(3, 4) * 7 if np.issubdtype(dtype, np.signedinteger) else np.arange(12) * 9
    feeds = {"x": x.astype(dtype)}
    model = one_node_model("Shrink", feeds, {"lambd": 12.5, "bias": 3.25}, opset=9)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("alpha", [None, 0.5, 1.702])
def test_swiglu(alpha: float | None) -> None:
    feeds = {name: RNG.uniform(-4.0, 4.0, size=(2, 3, 8)).astype(np.float32) for name in ("a", "b")}
    attributes = {} if alpha is None else {"alpha": alpha}
    model = one_node_model("SwiGLU", feeds, attributes, opset=28)
    check_against_onnxruntime(InferenceSession, model, feeds, reference=True)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_swiglu_half(dtype: Any) -> None:
    """Computed in float32 and rounded once, on store: the float32 reference of the same (exactly widened) inputs,
    rounded to the 16-bit type, within one unit in the last place (the reference evaluator would round every
    intermediate)."""
    feeds = {name: RNG.uniform(-4.0, 4.0, size=(2, 3, 8)).astype(dtype) for name in ("a", "b")}
    wide = {name: array.astype(np.float32) for name, array in feeds.items()}
    (expected,) = ReferenceEvaluator(one_node_model("SwiGLU", wide, {"alpha": 0.5}, opset=28)).run(None, wide)
    session = InferenceSession(one_node_model("SwiGLU", feeds, {"alpha": 0.5}, opset=28), cache=False)
    (actual,) = session.run(None, feeds)
    assert actual.dtype == np.dtype(dtype) and session.stats["kernels"] > 0
    ulp = 2.0**-10 if dtype is np.float16 else 2.0**-7
    np.testing.assert_allclose(actual.astype(np.float32), expected.astype(dtype).astype(np.float32), rtol=ulp)


def test_swiglu_of_two_shapes_is_refused() -> None:
    feeds = {name: np.zeros((2, 4), np.float32) for name in ("a", "b")}
    model = one_node_model("SwiGLU", feeds, {}, opset=28)
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = 1  # onnx's shape inference would refuse it
    with pytest.raises(ModelImportError, match=r"A of shape \(2, 4\) and B of shape \(1, 4\) must have one shape"):
        InferenceSession(model, cache=False)


def test_swiglu_of_float64_is_refused() -> None:
    feeds = {name: np.zeros((2, 4), np.float64) for name in ("a", "b")}
    with pytest.raises(UnsupportedFeatureError, match="SwiGLU computes on float32 only"):
        InferenceSession(one_node_model("SwiGLU", feeds, {}, opset=28), cache=False)
