"""Numerics of the ops that select, scatter and generate elements at run-time positions against ONNX Runtime at every
opt level: Trilu of every element type, ScatterElements, ScatterND, GatherND, OneHot, TopK, Hardmax, CumProd and
EyeLike (and the window functions, constants of their size). Every data input is a graph input, so native code
computes each case."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession

RNG = np.random.default_rng(5)


def _data(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize(("k", "upper"), [(0, 1), (-1, 0), (2, 1)])
def test_trilu(dtype: Any, k: int, upper: int) -> None:
    feeds = {"x": _data((2, 3, 5), dtype)}
    model = one_node_model("Trilu", feeds, {"upper": upper}, constants={"k": np.array(k, np.int64)})
    check_against_onnxruntime(InferenceSession, model, feeds)


def _indices(shape: tuple[int, ...], extent: int, dtype: Any = np.int64) -> np.ndarray:
    """Indices into an axis of `extent`, negative ones too."""
    return RNG.integers(-extent, extent, size=shape).astype(dtype)


def _distinct_indices(count: int, extent: int) -> np.ndarray:
    """`count` distinct positions of an axis of `extent` (ONNX Runtime's scatters without a reduction require it)."""
    return RNG.permutation(extent)[:count].astype(np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements(dtype: Any, reduction: str, axis: int) -> None:
    data_shape, indices_shape = (4, 5, 3), (3, 5, 2)
    along = axis % 3
    extent = data_shape[along]
    if reduction == "none":  # distinct positions along the axis for each line
        order = np.argsort(RNG.random(indices_shape[:along] + (extent,) + indices_shape[along + 1 :]), axis=along)
        indices = np.take(order, range(indices_shape[along]), axis=along).astype(np.int64) - extent * (order.sum() % 2)
    else:
        indices = _indices(indices_shape, extent)
    feeds = {"data": _data(data_shape, dtype), "indices": indices, "updates": _data(indices_shape, dtype)}
    model = one_node_model("ScatterElements", feeds, {"axis": axis, "reduction": reduction})
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize(("data_shape", "indices"), [
    ((6, 3, 2), np.array([[4], [-1], [0]], np.int64)),
    ((4, 4), np.array([[[0, 1], [3, 2]], [[1, 1], [2, -4]]], np.int64)),
    ((5,), np.array([2], np.int64)),
])
def test_scatter_nd(reduction: str, data_shape: tuple[int, ...], indices: np.ndarray) -> None:
    updates_shape = (*indices.shape[:-1], *data_shape[indices.shape[-1] :])
    if reduction != "none":
        indices = np.concatenate([indices, indices], axis=0) if indices.ndim > 1 else indices
        updates_shape = (*indices.shape[:-1], *data_shape[indices.shape[-1] :])
    feeds = {"data": _data(data_shape), "indices": indices, "updates": _data(updates_shape)}
    model = one_node_model("ScatterND", feeds, {"reduction": reduction})
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
@pytest.mark.parametrize(("data_shape", "indices_shape", "batch_dims"), [
    ((4, 5, 3), (2, 3, 2), 0),
    ((4, 5, 3), (6, 1), 0),
    ((4, 5, 3), (2, 3), 0),
    ((3, 5, 4), (3, 2, 1), 1),
    ((3, 2, 5, 4), (3, 2, 2), 2),
])
def test_gather_nd(dtype: Any, data_shape: tuple[int, ...], indices_shape: tuple[int, ...], batch_dims: int) -> None:
    depth = indices_shape[-1]
    columns = [_indices((*indices_shape[:-1], 1), data_shape[batch_dims + m]) for m in range(depth)]
    feeds = {"data": _data(data_shape, dtype), "indices": np.concatenate(columns, axis=-1)}
    model = one_node_model("GatherND", feeds, {"batch_dims": batch_dims})
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize(("indices", "values", "depth"), [
    (np.array([[0, 3], [-1, 5]], np.int64), np.array([0.0, 1.0], np.float32), np.array(5, np.int64)),
    (np.array([1.7, -2.0, 9.0], np.float32), np.array([-3, 4], np.int64), np.array(5, np.int64)),
    (np.array([[2], [-5]], np.int32), np.array([7.5, -7.0], np.float32), np.array(5, np.int32)),
    (np.array([4, -3], np.int64), np.array([7, -7], np.int32), np.array(5.0, np.float32)),
])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(indices: np.ndarray, values: np.ndarray, depth: np.ndarray, axis: int) -> None:
    """(ONNX Runtime implements only some combinations of index, value and depth types.)"""
    feeds = {"indices": indices, "values": values}
    model = one_node_model(
        "OneHot", feeds, {"axis": axis}, constants={"depth": depth}, inputs=["indices", "depth", "values"]
    )
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize(("axis", "k"), [(-1, 3), (0, 1), (1, 6)])
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k(dtype: Any, axis: int, k: int, largest: int) -> None:
    x = RNG.integers(-4, 4, size=(4, 6, 5)).astype(dtype)  # many ties: equal elements keep their index order
    feeds = {"x": x}
    model = one_node_model(
        "TopK", feeds, {"axis": axis, "largest": largest}, constants={"k": np.array([k], np.int64)}, outputs=2
    )
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize(("axis", "opset"), [(-1, 13), (0, 13), (1, 13), (1, 11), (2, 11)])
def test_hardmax(axis: int, opset: int) -> None:
    x = RNG.integers(-3, 3, size=(3, 4, 5)).astype(np.float32)  # ties: the first maximum wins
    feeds = {"x": x}
    model = one_node_model("Hardmax", feeds, {"axis": axis}, opset=opset)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("op_type", ["CumSum", "CumProd"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumulative(op_type: str, dtype: Any, exclusive: int, reverse: int) -> None:
    x = RNG.integers(-3, 4, size=(3, 5)).astype(dtype)
    feeds = {"x": x}
    attributes = {"exclusive": exclusive, "reverse": reverse}
    model = one_node_model(op_type, feeds, attributes, constants={"axis": np.array(-1, np.int64)}, opset=26)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("dtype", [None, TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT])
@pytest.mark.parametrize("k", [0, 2, -1, 7])
def test_eye_like(dtype: int | None, k: int) -> None:
    feeds = {"x": _data((3, 5))}
    attributes: dict[str, Any] = {"k": k} if dtype is None else {"k": k, "dtype": dtype}
    check_against_onnxruntime(InferenceSession, one_node_model("EyeLike", feeds, attributes), feeds)


@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window_is_a_constant_of_its_size(op_type: str, periodic: int) -> None:
    """A window's size sets its shape, so the node folds at import time: a constant output, as ONNX Runtime's."""
    feeds = {"size": np.array(10, np.int64)}
    model = one_node_model(op_type, {}, {"periodic": periodic}, constants=feeds, opset=17)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, {})
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, {})
    assert session.constant_output_names == ["Y0"]
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)
