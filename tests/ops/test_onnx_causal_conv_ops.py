"""Numerics of CausalConvWithState (opset 27) end to end through minimlc's InferenceSession at O0 and O3,
against ONNX Runtime (which implements it), and its import errors.

Each case is a one-node model on seeded random run-time inputs; the output and present_state are compared at
rtol=1e-5 (float16: 1e-2, as ONNX Runtime rounds the convolution before the activation and minimlc rounds once).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

OPSET = 27
INPUTS = ("input", "weight", "bias", "past_state")


def _feeds(shapes: dict[str, tuple[int, ...]], dtype: Any = np.float32) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {name: rng.uniform(-1.0, 1.0, shape).astype(dtype) for name, shape in shapes.items()}


def _inputs(feeds: dict[str, np.ndarray]) -> list[str]:
    inputs = [name if name in feeds else "" for name in INPUTS]
    while not inputs[-1]:
        inputs.pop()
    return inputs


def _model(feeds: dict[str, np.ndarray], **attributes: Any) -> onnx.ModelProto:
    return one_node_model("CausalConvWithState", feeds, attributes, inputs=_inputs(feeds), outputs=2, opset=OPSET)


@pytest.mark.parametrize(
    ("length", "taps", "optional", "activation"),
    [
        (8, 4, (), "none"),
        (8, 4, ("bias",), "silu"),
        (8, 3, ("past_state",), "swish"),
        (1, 4, ("bias", "past_state"), "none"),
        (2, 5, (), "silu"),
        (6, 1, ("bias",), "none"),
    ],
    ids=["plain", "bias_silu", "past_swish", "decode_step", "shorter_than_state", "kernel_one"],
)
def test_causal_conv_with_state(length: int, taps: int, optional: tuple[str, ...], activation: str) -> None:
    """With and without bias and carried state, both activations, a one-step decode, an input shorter than the
    state, and a kernel of one tap (an empty state)."""
    shapes = {"input": (2, 3, length), "weight": (3, 1, taps)}
    shapes |= {name: {"bias": (3,), "past_state": (2, 3, taps - 1)}[name] for name in optional}
    feeds = _feeds(shapes)
    check_against_onnxruntime(InferenceSession, _model(feeds, activation=activation), feeds)


@pytest.mark.parametrize(("activation", "taps"), [("none", 4), ("silu", 4), ("none", 1)])
def test_causal_conv_with_state_float16(activation: str, taps: int) -> None:
    """float16 computed in float32 and rounded on store; with one tap the empty state is float16 too."""
    shapes = {"input": (2, 4, 8), "weight": (4, 1, taps)} | ({"past_state": (2, 4, taps - 1)} if taps > 1 else {})
    feeds = _feeds(shapes, np.float16)
    check_against_onnxruntime(InferenceSession, _model(feeds, activation=activation), feeds, rtol=1e-2)


def _unchecked_model(feeds: dict[str, np.ndarray], **attributes: Any) -> onnx.ModelProto:
    """The node without shape inference (which refuses the invalid ones)."""
    node = helper.make_node("CausalConvWithState", _inputs(feeds), ["Y", "S"], **attributes)
    inputs = [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, a.shape) for name, a in feeds.items()]
    outputs = [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, ["b", "c", "n"]) for name in ("Y", "S")]
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


@pytest.mark.parametrize(
    ("shapes", "attributes", "error", "message"),
    [
        ({"input": (2, 3, 4), "weight": (3, 1, 2)}, {"activation": "gelu"}, UnsupportedFeatureError, "gelu"),
        ({"input": (2, 3, 4), "weight": (3, 2, 2)}, {}, ModelImportError, "weight must have shape"),
        ({"input": (2, 3, 4), "weight": (3, 1, 3), "bias": (3,), "past_state": (2, 3, 1)}, {}, ModelImportError,
         "past_state must be"),
    ],
    ids=["activation", "weight", "state"],
)
def test_causal_conv_with_state_refused(
    shapes: dict[str, tuple[int, ...]], attributes: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        InferenceSession(_unchecked_model(_feeds(shapes), **attributes), cache=False)
