"""Numerics of ReverseSequence at O0 and O3: run-time lengths (every entry's own, 0 and the full axis among
them), either axis order, higher ranks and every element type (bool, integers, floats, float16 and bfloat16 moved
as they are), against ONNX Runtime (the reference evaluator for bfloat16, which ONNX Runtime lacks)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError
from minimlc.runtime.session import IndexOutOfRangeError

RNG = np.random.default_rng(53)


def _data(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    if dtype is np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return RNG.integers(0, 100, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    ("shape", "batch_axis", "time_axis", "lengths"),
    [
        ((4, 5), 0, 1, [1, 5, 0, 3]),
        ((5, 4), 1, 0, [2, 5, 4, 1]),
        ((3, 6, 2, 3), 0, 1, [6, 2, 4]),
        ((6, 3, 4), 1, 0, [3, 6, 1]),
    ],
    ids=str,
)
def test_reverse_sequence(shape: tuple[int, ...], batch_axis: int, time_axis: int, lengths: list[int]) -> None:
    feeds = {"x": _data(shape, np.float32), "sequence_lens": np.array(lengths, np.int64)}
    attributes = {"batch_axis": batch_axis, "time_axis": time_axis}
    check_against_onnxruntime(InferenceSession, one_node_model("ReverseSequence", feeds, attributes, opset=10), feeds)


@pytest.mark.parametrize(
    "dtype",
    [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float64, np.float16, ml_dtypes.bfloat16],
    ids=lambda d: np.dtype(d).name,
)
def test_reverse_sequence_element_types(dtype: Any) -> None:
    feeds = {"x": _data((3, 5, 2), dtype), "sequence_lens": np.array([4, 0, 5], np.int64)}
    model = one_node_model("ReverseSequence", feeds, {"batch_axis": 0, "time_axis": 1}, opset=10)
    check_against_onnxruntime(InferenceSession, model, feeds, reference=dtype is ml_dtypes.bfloat16)


@pytest.mark.parametrize("bad", [[9, 1, 4], [2, -2, 4]], ids=["beyond-the-axis", "negative"])
def test_reverse_sequence_lengths_outside_the_axis_raise(bad: list[int]) -> None:
    """ONNX Runtime refuses lengths outside [0, T]; so does minimlc, at run time, naming the node (the kernel itself
    clamps, so nothing is read outside the input), and the same session runs good lengths afterwards."""
    x = _data((3, 4), np.float32)
    feeds = {"x": x, "sequence_lens": np.array(bad, np.int64)}
    model = one_node_model("ReverseSequence", feeds, {"batch_axis": 0, "time_axis": 1}, opset=10)
    session = InferenceSession(model, cache=False)
    with pytest.raises(IndexOutOfRangeError, match=r"\(ReverseSequence\): sequence_lens must lie in \[0, 4\]"):
        session.run(None, feeds)
    good = {"x": x, "sequence_lens": np.array([4, 0, 2], np.int64)}
    (actual,) = session.run(None, good)
    np.testing.assert_array_equal(actual, np.stack([x[0, ::-1], x[1], np.concatenate([x[2, 1::-1], x[2, 2:]])]))


def test_reverse_sequence_of_int32_lengths_is_refused() -> None:
    feeds = {"x": np.zeros((2, 3), np.float32), "sequence_lens": np.array([1, 2], np.int64)}
    model = one_node_model("ReverseSequence", feeds, {"batch_axis": 0, "time_axis": 1}, opset=10)
    model.graph.input[1].type.tensor_type.elem_type = 6  # int32, which ONNX does not allow
    with pytest.raises(ModelImportError, match=r"sequence_lens must be int64 of shape \(2,\), got i32"):
        InferenceSession(model, cache=False)
