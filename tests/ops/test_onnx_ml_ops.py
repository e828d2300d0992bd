"""Numerics of the ai.onnx.ml numeric ops at O0 and O3: Binarizer and ArrayFeatureExtractor, against ONNX Runtime
(onnx's reference evaluator for Binarizer's double and integer types, which ONNX Runtime lacks, and for NaN, on which
ONNX Runtime fails while ONNX defines 0); indices out of range raise as in ONNX Runtime."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError
from minimlc.runtime.session import IndexOutOfRangeError

RNG = np.random.default_rng(41)
NUMBERS = [np.float32, np.float64, np.int32, np.int64]


def ml_model(op_type: str, feeds: Mapping[str, np.ndarray], attributes: Mapping[str, Any], **kwargs: Any):
    """A one-node model of the ai.onnx.ml op `op_type` (domain version 3), its output typed by shape inference."""
    model = one_node_model(op_type, feeds, attributes, **kwargs)
    model.graph.node[0].domain = "ai.onnx.ml"
    model.opset_import.append(onnx.helper.make_opsetid("ai.onnx.ml", 3))
    del model.graph.output[:]
    model.graph.output.append(onnx.helper.make_tensor_value_info("Y0", 0, None))
    (output,) = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
    if not output.type.tensor_type.HasField("shape"):  # ArrayFeatureExtractor's inference gives the type only
        x, y = (np.asarray(v) for v in [*feeds.values(), *(kwargs.get("constants") or {}).values()][:2])
        shape = [*(x.shape[:-1] or (1,)), y.size]
        output = onnx.helper.make_tensor_value_info("Y0", output.type.tensor_type.elem_type, shape)
    del model.graph.output[:]
    model.graph.output.append(output)
    return model


def _values(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    return (RNG.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_binarizer(dtype: Any) -> None:
    x = _values(dtype, (3, 4, 5))
    x.flat[:3] = [0, 1, 2]  # at, and either side of, the threshold
    model = ml_model("Binarizer", {"x": x}, {"threshold": 1.0})
    check_against_onnxruntime(InferenceSession, model, {"x": x}, reference=dtype != np.float32)


def test_binarizer_of_nan_is_zero() -> None:
    x = np.array([np.nan, -np.inf, np.inf, 0.25], np.float32)
    model = ml_model("Binarizer", {"x": x}, {"threshold": 0.0})
    check_against_onnxruntime(InferenceSession, model, {"x": x}, reference=True)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
@pytest.mark.parametrize("indices", [[4, 0, 4], [[1], [3]], 2])
def test_array_feature_extractor(dtype: Any, shape: tuple[int, ...], indices: Any) -> None:
    feeds = {"x": _values(dtype, shape), "y": np.array(indices, np.int64)}
    check_against_onnxruntime(InferenceSession, ml_model("ArrayFeatureExtractor", feeds, {}), feeds)


def test_array_feature_extractor_with_constant_indices() -> None:
    feeds = {"x": _values(np.float32, (3, 6))}
    model = ml_model("ArrayFeatureExtractor", feeds, {}, constants={"y": np.array([5, 1], np.int64)})
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("index", [-1, 5])
def test_array_feature_extractor_index_out_of_range_raises(index: int) -> None:
    """ONNX Runtime refuses negative indices too (`Y[0] (-1) must be in [0, 5)`)."""
    feeds = {"x": _values(np.float32, (2, 5)), "y": np.array([0, index], np.int64)}
    session = InferenceSession(ml_model("ArrayFeatureExtractor", feeds, {}), cache=False)
    with pytest.raises(IndexOutOfRangeError, match=r"\(ArrayFeatureExtractor\): Y must lie in \[0, 5\)"):
        session.run(None, feeds)
    constant = ml_model("ArrayFeatureExtractor", {"x": feeds["x"]}, {}, constants={"y": feeds["y"]})
    with pytest.raises(ModelImportError, match=r"Y must lie in \[0, 5\) .*, got \[" + str(index)):
        InferenceSession(constant, cache=False)


def test_ml_ops_refuse_other_element_types() -> None:
    feeds = {"x": np.zeros((2, 3), np.uint8)}
    with pytest.raises(ModelImportError, match=r"Binarizer takes float, double, int32 or int64 tensors, got ui8"):
        InferenceSession(ml_model("Binarizer", feeds, {}), cache=False)
