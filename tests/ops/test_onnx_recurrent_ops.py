"""Numerics of RNN, LSTM and GRU (unrolled over time into graph ops) against ONNX Runtime (onnx's reference evaluator
for the batch-first layout, which ONNX Runtime refuses) at O0 and O3: every
direction, both layouts, biases, initial states, LSTM peepholes, GRU's linear_before_reset, other activations and
run-time sequence lengths; every output (Y, Y_h, and LSTM's Y_c)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError

RNG = np.random.default_rng(17)
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
STEPS, BATCH, FEATURES, HIDDEN = 4, 3, 5, 6


def _floats(*shape: int) -> np.ndarray:
    return RNG.uniform(-0.6, 0.6, size=shape).astype(np.float32)


def _feeds(op_type: str, directions: int, layout: int, extras: set[str]) -> dict[str, np.ndarray]:
    gates = GATES[op_type]
    x_shape = (BATCH, STEPS, FEATURES) if layout else (STEPS, BATCH, FEATURES)
    state_shape = (BATCH, directions, HIDDEN) if layout else (directions, BATCH, HIDDEN)
    feeds = {
        "X": _floats(*x_shape),
        "W": _floats(directions, gates * HIDDEN, FEATURES),
        "R": _floats(directions, gates * HIDDEN, HIDDEN),
        "B": _floats(directions, 2 * gates * HIDDEN) if "bias" in extras else None,
        "sequence_lens": np.array([4, 2, 3], np.int32) if "lengths" in extras else None,
        "initial_h": _floats(*state_shape) if "initial" in extras else None,
    }
    if op_type == "LSTM":
        feeds["initial_c"] = _floats(*state_shape) if "initial" in extras else None
        feeds["P"] = _floats(directions, 3 * HIDDEN) if "peepholes" in extras else None
    return feeds


def _model_and_feeds(op_type: str, direction: str, layout: int, extras: set[str], **attributes: Any) -> tuple:
    directions = 2 if direction == "bidirectional" else 1
    feeds = _feeds(op_type, directions, layout, extras)
    inputs = [name if array is not None else "" for name, array in feeds.items()]
    while inputs[-1] == "":
        inputs.pop()
    given = {name: array for name, array in feeds.items() if array is not None}
    attributes = {"hidden_size": HIDDEN, "direction": direction, "layout": layout, **attributes}
    outputs = 3 if op_type == "LSTM" else 2
    model = one_node_model(op_type, given, attributes, inputs=inputs, outputs=outputs, opset=14)
    return model, given


CASES = [
    pytest.param(direction, layout, extras, id=f"{direction}-layout{layout}-{'+'.join(sorted(extras)) or 'plain'}")
    for direction, layout, extras in [
        ("forward", 0, set()),
        ("forward", 0, {"bias", "initial"}),
        ("reverse", 0, {"bias"}),
        ("bidirectional", 0, {"bias", "initial"}),
        ("forward", 1, {"initial"}),
        ("bidirectional", 1, {"bias"}),
        ("forward", 0, {"bias", "lengths"}),
    ]
]


@pytest.mark.slow
@pytest.mark.parametrize("op_type", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(("direction", "layout", "extras"), CASES)
def test_recurrent(op_type: str, direction: str, layout: int, extras: set[str]) -> None:
    model, feeds = _model_and_feeds(op_type, direction, layout, extras)
    # ONNX Runtime refuses batch-first layouts: onnx's reference evaluator checks those
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-4, reference=layout == 1)


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_peepholes(direction: str) -> None:
    model, feeds = _model_and_feeds("LSTM", direction, 0, {"bias", "initial", "peepholes"})
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-4)


@pytest.mark.slow
def test_gru_linear_before_reset() -> None:
    model, feeds = _model_and_feeds("GRU", "bidirectional", 0, {"bias", "initial"}, linear_before_reset=1)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-4)


@pytest.mark.slow
def test_other_activations() -> None:
    activations = ["Relu", "Sigmoid", "Tanh", "Sigmoid"]
    model, feeds = _model_and_feeds("GRU", "bidirectional", 0, {"bias"}, activations=activations)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-4)


def test_clip_is_refused() -> None:
    model, _ = _model_and_feeds("RNN", "forward", 0, set(), clip=1.0)
    with pytest.raises(UnsupportedFeatureError, match="attribute clip is not supported"):
        InferenceSession(model, cache=False)
