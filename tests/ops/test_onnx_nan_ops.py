"""NaN and infinity as ONNX Runtime takes them, at every opt level (vectorized schedules at O2 and O3):

- ReduceMax, ReduceMin, ArgMax, ArgMin: NaN (ArgMax: index 0) exactly where the first reduced element is NaN, else
  the extreme of the other values, NaNs passed over (ONNX Runtime's scan `acc = x > acc ? x : acc` from the first
  element; its Eigen SIMD path over long contiguous rows answers by lane, so those cases check that rule alone);
- MaxPool, GlobalMaxPool: the max of the other values, NaN where the whole window is (ONNX Runtime's MLAS kernels
  answer by lane: the small cases are ones where it does not, large ones check the rule alone);
- Softmax, LogSoftmax, ReduceLogSumExp: NaN across a row holding a NaN, and what ONNX Runtime gives for infinities
  (their row maximum, `max_nnan`, may pass over NaNs, as the row's sum carries them to every output);
- Cast float -> integer: x86-64's truncating conversions, NaN and out-of-range values giving INT_MIN (8 and 16 bits:
  the low bits of the 32-bit conversion).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper

from minimlc import InferenceSession

OPT_LEVELS = (0, 1, 2, 3)
NAN, INF = np.nan, np.inf
ROWS = np.array(
    [[1, NAN, 3, 2], [NAN, NAN, NAN, NAN], [-INF, NAN, -INF, -INF], [INF, NAN, 1, 2], [NAN, 1, 3, 2], [1, 2, NAN, 0]],
    np.float32,
)
"""The issue's rows (ReduceMax [1, NaN, 3, 2] is 3.0 in ONNX Runtime) and the edge cases around them."""


def _with_nans(shape: tuple[int, ...], fraction: float, seed: int) -> np.ndarray:
    """Small integers (ties), a `fraction` of NaNs and a few infinities, the same for every test order."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, shape).astype(np.float32)
    x[rng.random(shape) < fraction] = NAN
    x[rng.random(shape) < 0.05] = INF
    x[rng.random(shape) < 0.05] = -INF
    return x


def _model(op_type: str, x: np.ndarray, output: int = TensorProto.FLOAT, **attributes: Any) -> onnx.ModelProto:
    source = helper.np_dtype_to_tensor_dtype(x.dtype)
    axes = attributes.pop("axes", None)
    initializers = [] if axes is None else [onnx.numpy_helper.from_array(np.array(axes, np.int64), "axes")]
    node = helper.make_node(op_type, ["x", *(["axes"] if axes is not None else [])], ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        "nan",
        [helper.make_tensor_value_info("x", source, x.shape)],
        [helper.make_tensor_value_info("y", output, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    (result,) = InferenceSession(model, cache=False).run(None, {"x": x})
    return result


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _first_nan_extreme(x: np.ndarray, axes: tuple[int, ...], maximum: bool, keepdims: bool) -> np.ndarray:
    """The rule: NaN where the first reduced element is NaN, else the extreme of the others, NaNs passed over."""
    first = x[tuple(slice(0, 1) if axis in axes else slice(None) for axis in range(x.ndim))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        extreme = (np.nanmax if maximum else np.nanmin)(x, axis=axes, keepdims=True)
    result = np.where(np.isnan(first), NAN, extreme).astype(x.dtype)
    return result if keepdims else result.squeeze(axes)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize(("axes", "keepdims"), [((1,), 0), ((0,), 1)])
def test_reduce_max_min_with_nans_match_onnxruntime(op_type: str, axes: tuple[int, ...], keepdims: int) -> None:
    model = _model(op_type, ROWS, axes=list(axes), keepdims=keepdims)
    expected = _onnxruntime(model, ROWS)
    np.testing.assert_array_equal(expected, _first_nan_extreme(ROWS, axes, op_type == "ReduceMax", bool(keepdims)))
    np.testing.assert_array_equal(_run(model, ROWS), expected)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
def test_large_reduce_max_min_with_nans(op_type: str) -> None:
    """Along a strided axis ONNX Runtime keeps its rule (the oracle); along long contiguous rows (vectorized here)
    the rule is checked alone."""
    x = _with_nans((40, 48), 0.2, seed=1)
    x[0, ::3] = NAN
    down = _model(op_type, x, axes=[0], keepdims=0)
    np.testing.assert_array_equal(_run(down, x), _onnxruntime(down, x))
    across = _model(op_type, x, axes=[1], keepdims=0)
    np.testing.assert_array_equal(_run(across, x), _first_nan_extreme(x, (1,), op_type == "ReduceMax", False))


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("select_last_index", [0, 1])
def test_arg_max_min_with_nans_match_onnxruntime(op_type: str, axis: int, select_last_index: int) -> None:
    for x in (ROWS, _with_nans((24, 40), 0.25, seed=2)):
        model = _model(op_type, x, TensorProto.INT64, axis=axis, keepdims=0, select_last_index=select_last_index)
        np.testing.assert_array_equal(_run(model, x), _onnxruntime(model, x))


def _pool_rule(x: np.ndarray, kernel: int, stride: int, pad: int) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-INF)
    windows = sliding_window_view(padded, (kernel, kernel), axis=(2, 3))[:, :, ::stride, ::stride]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(windows, axis=(-2, -1))


def test_max_pools_with_nans_match_onnxruntime() -> None:
    """GlobalMaxPool of the issue's plane (+inf) and of rows of it, and 3x3 windows of stride 3, where ONNX Runtime's
    lanes do not show (a row of -inf and NaN is not one: MLAS starts from -FLT_MAX and answers that)."""
    plane = ROWS[:4].reshape(1, 1, 4, 4)
    rows = ROWS[None, [0, 1, 3]]
    cases = [
        (_model("GlobalMaxPool", plane), plane),
        (_model("GlobalMaxPool", rows), rows),
        (_model("MaxPool", x := _with_nans((1, 2, 6, 6), 0.15, seed=3), kernel_shape=[3, 3], strides=[3, 3]), x),
    ]
    for model, feed in cases:
        expected = _onnxruntime(model, feed)
        np.testing.assert_array_equal(_run(model, feed), expected)
    np.testing.assert_array_equal(_onnxruntime(*cases[0]).ravel(), [INF])


@pytest.mark.parametrize(("shape", "kernel", "stride", "pad"), [((1, 64, 28, 28), 3, 2, 1), ((2, 8, 17, 17), 2, 2, 0)])
def test_vectorized_max_pool_passes_over_nans(shape: tuple[int, ...], kernel: int, stride: int, pad: int) -> None:
    """Pools the schedule vectorizes (one vector max per window tap), whole NaN windows included."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) < 0.2] = NAN
    x[0, 0, :4, :4] = NAN
    model = _model("MaxPool", x, kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)
    np.testing.assert_array_equal(_run(model, x), _pool_rule(x, kernel, stride, pad))


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "ReduceLogSumExp"])
@pytest.mark.parametrize("width", [4, 40])
def test_softmax_rows_with_nans_and_infinities(op_type: str, width: int) -> None:
    """Rows of 40 run the maximum on whole vectors; a NaN first, last or amid them, a NaN beside a large value, +inf,
    -inf, an all-NaN row and an all -inf row."""
    x = np.random.default_rng(5).uniform(-2.0, 3.0, (8, width)).astype(np.float32)
    x[0, 0] = x[1, -1] = x[2, 1] = NAN
    x[2, 0] = 50.0
    x[3, 2] = INF
    x[4, 1] = -INF
    x[5] = NAN
    x[6] = -INF
    attributes = {"axes": [1], "keepdims": 0} if op_type == "ReduceLogSumExp" else {"axis": 1}
    model = _model(op_type, x, **attributes)
    expected = _onnxruntime(model, x)
    assert np.isnan(expected[[0, 1, 2, 5]]).all()
    assert np.isfinite(expected[7]).all()
    np.testing.assert_allclose(_run(model, x), expected, rtol=1e-5, atol=1e-6)


INTEGER_TARGETS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SPECIALS = [NAN, INF, -INF, 3.7, -3.7, 300.0, -300.0, 70000.0, 2.0**31, -(2.0**31) - 4096, 3e9, -3e9, 5e9, 1e19, -1e19]


@pytest.mark.parametrize("source", [np.float32, np.float64])
@pytest.mark.parametrize("target", INTEGER_TARGETS, ids=lambda t: np.dtype(t).name)
def test_cast_of_nan_infinity_and_out_of_range_floats_matches_onnxruntime(source: type, target: type) -> None:
    """16 values, a whole number of ONNX Runtime's SIMD blocks (its scalar tail converts to uint32 through int64)."""
    x = np.array([*SPECIALS, 0.5], source)
    element = helper.np_dtype_to_tensor_dtype(np.dtype(target))
    model = _model("Cast", x, element, to=element)
    expected = _onnxruntime(model, x)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(expected, x.astype(target))  # numpy converts as x86-64 does, too
    np.testing.assert_array_equal(_run(model, x), expected)
