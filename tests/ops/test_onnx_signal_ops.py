"""Numerics of the signal ops (DFT, STFT, MelWeightMatrix) at O0 and O3 against ONNX Runtime (onnx's reference
evaluator for the inverse one-sided DFT, which ONNX Runtime computes differently), and their refusals.

dft_length, axis (opset 20), frame_step and frame_length set the output's shape: they are initializers, as the
backend binds them. The DFT is a float32 matmul by a cos/sin table, so outputs match to float32 round-off of sums
of n terms (atol 1e-4 on unit-sized data)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

RTOL = 1e-4
ATOL = 1e-4


def _int64(value: int) -> np.ndarray:
    return np.array(value, np.int64)


def _run_and_compare(model: Any, feeds: dict[str, np.ndarray], *, reference: bool = False) -> None:
    check_against_onnxruntime(InferenceSession, model, feeds, RTOL, atol=ATOL, reference=reference)


def _signal(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1.0, 1.0, shape).astype(np.float32)


DFT_CASES = [
    # (input shape, axis, dft_length, attributes)
    ((2, 12, 1), 1, None, {}),
    ((2, 12, 2), 1, None, {}),
    ((3, 5, 7, 1), 2, None, {}),
    ((3, 5, 7, 2), 1, None, {"inverse": 1}),
    ((3, 5, 7, 1), 1, None, {"inverse": 1}),
    ((2, 12, 1), 1, None, {"onesided": 1}),
    ((2, 11, 3, 1), 1, None, {"onesided": 1}),
    ((2, 12, 1), 1, 8, {}),
    ((2, 12, 2), 1, 16, {}),
    ((2, 9, 2), 1, 6, {"inverse": 1}),
    ((2, 12, 1), 1, 20, {"onesided": 1}),
    ((4, 6, 2), 0, None, {}),
]


@pytest.mark.parametrize(("shape", "axis", "length", "attributes"), DFT_CASES)
@pytest.mark.parametrize("opset", [17, 20])
def test_dft_matches_onnxruntime(
    shape: tuple[int, ...], axis: int, length: int | None, attributes: dict[str, Any], opset: int
) -> None:
    constants = {} if length is None else {"dft_length": _int64(length)}
    inputs = ["x", "dft_length" if length is not None else ""]
    if opset >= 20:
        constants["axis"] = _int64(axis - len(shape) if axis else axis)  # negative axes count from the back
        inputs.append("axis")
    else:
        attributes = {**attributes, "axis": axis}
    feeds = {"x": _signal(shape)}
    model = one_node_model("DFT", feeds, attributes, constants=constants, inputs=inputs, opset=opset)
    _run_and_compare(model, feeds)


@pytest.mark.parametrize(("shape", "length"), [((2, 7, 4, 2), None), ((2, 6, 3, 2), 9), ((1, 4, 2), 8)])
def test_inverse_onesided_dft_matches_reference(shape: tuple[int, ...], length: int | None) -> None:
    constants = {"axis": _int64(1)} if length is None else {"dft_length": _int64(length), "axis": _int64(1)}
    inputs = ["x", "" if length is None else "dft_length", "axis"]
    feeds = {"x": _signal(shape)}
    model = one_node_model("DFT", feeds, {"inverse": 1, "onesided": 1}, constants=constants, inputs=inputs, opset=20)
    _run_and_compare(model, feeds, reference=True)


@pytest.mark.parametrize(
    ("shape", "step", "frame_length", "window", "onesided"),
    [
        ((1, 128, 1), 8, 16, False, 1),
        ((2, 100, 1), 10, None, True, 1),
        ((2, 64, 2), 16, 16, True, 0),
        ((1, 50, 1), 7, 12, False, 0),
    ],
)
def test_stft_matches_onnxruntime(
    shape: tuple[int, ...], step: int, frame_length: int | None, window: bool, onesided: int
) -> None:
    feeds = {"signal": _signal(shape)}
    length = frame_length or 20
    if window:
        feeds["window"] = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length)).astype(np.float32)
    constants = {"frame_step": _int64(step)}
    if frame_length is not None:
        constants["frame_length"] = _int64(frame_length)
    inputs = ["signal", "frame_step", "window" if window else "", "frame_length" if frame_length else ""]
    model = one_node_model("STFT", feeds, {"onesided": onesided}, constants=constants, inputs=inputs, opset=17)
    _run_and_compare(model, feeds)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bands", "length", "rate", "low", "high"),
    [(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 7600.0), (4, 30, 22050, 300.0, 3000.0)],
)
def test_mel_weight_matrix_matches_onnxruntime(bands: int, length: int, rate: int, low: float, high: float) -> None:
    feeds = {
        "sample_rate": np.array(rate, np.int32),
        "lower_edge_hertz": np.array(low, np.float32),
        "upper_edge_hertz": np.array(high, np.float32),
    }
    constants = {"num_mel_bins": np.array(bands, np.int32), "dft_length": np.array(length, np.int32)}
    inputs = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
    model = one_node_model("MelWeightMatrix", feeds, {}, constants=constants, inputs=inputs, opset=17)
    _run_and_compare(model, feeds, reference=True)


def test_dft_refuses_a_run_time_length() -> None:
    feeds = {"x": _signal((2, 8, 1)), "dft_length": _int64(8)}
    model = one_node_model("DFT", feeds, {"axis": 1}, opset=17)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("Y0", TensorProto.FLOAT, (2, 8, 2)))
    with pytest.raises(UnsupportedFeatureError, match=r"input 'dft_length' is a run-time int64 tensor"):
        InferenceSession(model, cache=False)


def test_stft_refuses_a_frame_longer_than_the_signal() -> None:
    feeds = {"signal": _signal((1, 12, 1))}
    constants = {"frame_step": _int64(4), "frame_length": _int64(16)}
    model = one_node_model("STFT", feeds, {}, constants=constants, inputs=["signal", "frame_step", "", "frame_length"])
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("Y0", TensorProto.FLOAT, (1, 1, 9, 2)))
    with pytest.raises(ModelImportError, match="do not fit a signal of 12 points"):
        InferenceSession(model, cache=False)
