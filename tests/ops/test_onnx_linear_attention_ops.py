"""Numerics of LinearAttention (opset 27) end to end through minimlc's InferenceSession at O0 and O3, against
ONNX Runtime (which implements it), and its import errors.

Each case is a one-node model on seeded random inputs, every input a run-time graph input; both outputs (the
attention output and present_state) are compared at rtol=1e-4 (float16: 1e-2, as ONNX Runtime rounds differently).
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
INPUTS = ("query", "key", "value", "past_state", "decay", "beta")


def _feeds(shapes: dict[str, tuple[int, ...]], dtype: Any = np.float32, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {name: rng.uniform(-1.0, 1.0, shape).astype(dtype) for name, shape in shapes.items()}
    if "decay" in feeds:  # log-decays: negative, as models give them
        feeds["decay"] = -np.abs(feeds["decay"])
    if "beta" in feeds:  # learning rates in (0, 1)
        feeds["beta"] = np.abs(feeds["beta"])
    return feeds


def _inputs(feeds: dict[str, np.ndarray]) -> list[str]:
    inputs = [name if name in feeds else "" for name in INPUTS]
    while not inputs[-1]:
        inputs.pop()
    return inputs


def _model(feeds: dict[str, np.ndarray], **attributes: Any) -> onnx.ModelProto:
    return one_node_model("LinearAttention", feeds, attributes, inputs=_inputs(feeds), outputs=2, opset=OPSET)


def _unchecked_model(feeds: dict[str, np.ndarray], **attributes: Any) -> onnx.ModelProto:
    """The node without shape inference (which refuses the invalid ones)."""
    node = helper.make_node("LinearAttention", _inputs(feeds), ["Y", "S"], **attributes)
    inputs = [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, a.shape) for name, a in feeds.items()]
    ranks = {"Y": 3, "S": 4}
    outputs = [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, n * ["n"]) for name, n in ranks.items()]
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _shapes(
    batch: int, steps: int, q_heads: int, kv_heads: int, key_size: int, value_size: int
) -> dict[str, tuple[int, ...]]:
    return {
        "query": (batch, steps, q_heads * key_size),
        "key": (batch, steps, kv_heads * key_size),
        "value": (batch, steps, kv_heads * value_size),
    }


@pytest.mark.parametrize(
    ("rule", "extra", "heads", "attributes"),
    [
        ("linear", {}, (2, 2), {}),
        ("gated", {"decay": 8}, (2, 2), {}),
        ("gated", {"decay": 2}, (2, 2), {}),
        ("delta", {"beta": 2}, (2, 2), {}),
        ("gated_delta", {"decay": 8, "beta": 2}, (2, 2), {}),
        ("gated_delta", {"decay": 8, "beta": 1}, (4, 2), {"scale": 0.5}),
        ("gated_delta", {"decay": 4, "beta": 1}, (4, 1), {}),
    ],
    ids=["linear", "gated", "gated_per_head", "delta", "gated_delta", "gqa_beta_scalar_scale", "mqa"],
)
def test_linear_attention(rule: str, extra: dict[str, int], heads: tuple[int, int], attributes: dict[str, Any]) -> None:
    """Every update rule, per-key and per-head decay, per-head and shared beta, grouped query heads."""
    q_heads, kv_heads = heads
    shapes = _shapes(2, 5, q_heads, kv_heads, 4, 3)
    shapes |= {name: (2, 5, last) for name, last in extra.items()}
    feeds = _feeds(shapes)
    model = _model(feeds, q_num_heads=q_heads, kv_num_heads=kv_heads, update_rule=rule, **attributes)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=1e-4)


@pytest.mark.parametrize("steps", [1, 3], ids=["decode", "prefill"])
def test_linear_attention_past_state(steps: int) -> None:
    shapes = _shapes(2, steps, 2, 2, 4, 4) | {"past_state": (2, 2, 4, 4), "decay": (2, steps, 8), "beta": (2, steps, 2)}
    feeds = _feeds(shapes)
    check_against_onnxruntime(InferenceSession, _model(feeds, q_num_heads=2, kv_num_heads=2), feeds, rtol=1e-4)


def test_linear_attention_float16() -> None:
    """float16 in, computed in float32, both outputs rounded to float16 once."""
    shapes = _shapes(1, 4, 4, 2, 4, 4) | {"decay": (1, 4, 8), "beta": (1, 4, 2)}
    feeds = _feeds(shapes, np.float16)
    check_against_onnxruntime(InferenceSession, _model(feeds, q_num_heads=4, kv_num_heads=2), feeds, rtol=1e-2)


@pytest.mark.parametrize(
    ("extra", "attributes", "error", "message"),
    [
        ({}, {"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}, ModelImportError, "multiple"),
        ({"decay": 8}, {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"}, ModelImportError, "no decay"),
        ({}, {"q_num_heads": 2, "kv_num_heads": 2}, ModelImportError, "takes decay"),
        ({"decay": 5, "beta": 2}, {"q_num_heads": 2, "kv_num_heads": 2}, ModelImportError, "decay of shape"),
    ],
    ids=["heads", "decay_forbidden", "decay_missing", "decay_shape"],
)
def test_linear_attention_refused(
    extra: dict[str, int], attributes: dict[str, Any], error: type[Exception], message: str
) -> None:
    shapes = _shapes(1, 2, 2, 2, 4, 4) | {name: (1, 2, last) for name, last in extra.items()}
    with pytest.raises(error, match=message):
        InferenceSession(_unchecked_model(_feeds(shapes), **attributes), cache=False)


def test_linear_attention_too_long_refused() -> None:
    shapes = _shapes(1, 513, 1, 1, 2, 2)
    feeds = _feeds(shapes)
    with pytest.raises(UnsupportedFeatureError, match="513 steps"):
        InferenceSession(_model(feeds, q_num_heads=1, kv_num_heads=1, update_rule="linear"), cache=False)


def test_linear_attention_mixed_state_type_refused() -> None:
    """A float32 state with float16 activations (the operator's S != T) is refused: minimlc rounds every output of
    a 16-bit node to that type."""
    feeds = _feeds(_shapes(1, 2, 2, 2, 4, 4), np.float16) | {"past_state": np.zeros((1, 2, 4, 4), np.float32)}
    model = _model(feeds, q_num_heads=2, kv_num_heads=2, update_rule="linear")
    with pytest.raises(UnsupportedFeatureError, match="past_state of another element type"):
        InferenceSession(model, cache=False)
