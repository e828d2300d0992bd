"""Numerics of the ops whose output extent depends on the data (NonZero, Compress, Unique) against ONNX Runtime at
every opt level: native code computes each output at an upper bound and its count, and the session trims it
(`lowering/abi.py`). Also: such an output read by another node is refused, and a saved session still trims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError, import_model
from minimlc.lowering.abi import trim_to_count
from minimlc.runtime import load

RNG = np.random.default_rng(3)


def _sparse(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """About half zeros."""
    return (RNG.integers(-2, 3, size=shape) * RNG.integers(0, 2, size=shape)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2)])
def test_nonzero(dtype: Any, shape: tuple[int, ...]) -> None:
    feeds = {"x": _sparse(shape, dtype)}
    check_against_onnxruntime(InferenceSession, one_node_model("NonZero", feeds, {}), feeds)


def test_nonzero_of_zeros_is_empty() -> None:
    feeds = {"x": np.zeros((2, 3), np.float32)}
    session = InferenceSession(one_node_model("NonZero", feeds, {}), cache=False)
    (indices,) = session.run(None, feeds)
    assert indices.shape == (2, 0) and indices.dtype == np.int64


@pytest.mark.parametrize(("axis", "length"), [(None, 12), (None, 5), (0, 3), (1, 2), (-1, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_compress(axis: int | None, length: int, dtype: Any) -> None:
    feeds = {"x": _sparse((3, 4), dtype), "condition": RNG.integers(0, 2, size=(length,)).astype(np.bool_)}
    attributes = {} if axis is None else {"axis": axis}
    check_against_onnxruntime(InferenceSession, one_node_model("Compress", feeds, attributes), feeds)


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize(("shape", "dtype"), [((9,), np.float32), ((3, 4), np.int64), ((2, 2, 3), np.float32)])
def test_unique(sorted_: int, shape: tuple[int, ...], dtype: Any) -> None:
    feeds = {"x": RNG.integers(-3, 3, size=shape).astype(dtype)}
    model = one_node_model("Unique", feeds, {"sorted": sorted_}, outputs=4, opset=11)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize(("shape", "axis"), [((5, 2), 0), ((2, 5), 1), ((3, 4, 2), -2), ((4, 2, 3), 0)])
def test_unique_along_an_axis(sorted_: int, shape: tuple[int, ...], axis: int) -> None:
    x = RNG.integers(0, 2, size=shape).astype(np.float32)  # few distinct slices
    feeds = {"x": x}
    model = one_node_model("Unique", feeds, {"sorted": sorted_, "axis": axis}, outputs=4, opset=11)
    check_against_onnxruntime(InferenceSession, model, feeds)


def test_a_data_dependent_input_is_refused() -> None:
    nodes = [helper.make_node("NonZero", ["x"], ["i"]), helper.make_node("Transpose", ["i"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "nonzero_then_transpose",
        [helper.make_tensor_value_info("x", 1, [3, 4])],
        [helper.make_tensor_value_info("y", 7, [None, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with pytest.raises(UnsupportedFeatureError, match="input 'i' has a data-dependent shape"):
        import_model(model)


def test_a_saved_session_still_trims(tmp_path: Path) -> None:
    feeds = {"x": _sparse((4, 5), np.float32)}
    session = InferenceSession(one_node_model("NonZero", feeds, {}), cache=False)
    session.save(tmp_path / "nonzero.minimlc")
    (indices,) = load(tmp_path / "nonzero.minimlc").run(None, feeds)
    np.testing.assert_array_equal(indices, np.array(np.nonzero(feeds["x"])))


def test_trim_to_count_refuses_a_count_past_the_bound() -> None:
    bound = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(trim_to_count(bound, 1, np.array([2])), [[0, 1], [3, 4]])
    with pytest.raises(ValueError, match="count 4 is outside the output's bound 3"):
        trim_to_count(bound, 1, np.array([4]))
