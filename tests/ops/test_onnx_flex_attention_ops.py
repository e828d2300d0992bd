"""Numerics of FlexAttention (ai.onnx.preview, version 1) end to end through minimlc's InferenceSession at every opt
level, and its import errors. ONNX Runtime 1.32 has no FlexAttention: onnx's reference evaluator is the oracle.

Each case is a one-node model on seeded random Q, K, V graph inputs, compared at rtol=1e-4, atol=1e-6 (float16:
1e-3; the rounding points are the operator's: the scaled Q and K and the scores in float16). The modifier subgraphs
are the kinds onnx's node tests use: an additive bias, a causal mask built from the scores' shape (Shape, Gather,
Range, folded at import), a soft cap, a probability scale, and one reading a tensor of the enclosing graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime

DOMAIN = "ai.onnx.preview"
Shape = tuple[int, ...]


def _feeds(q: Shape, k: Shape, v: Shape, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {name: rng.uniform(-1.0, 1.0, shape).astype(dtype) for name, shape in (("Q", q), ("K", k), ("V", v))}


def _model(
    feeds: dict[str, np.ndarray], extra_inputs: dict[str, np.ndarray] | None = None, **attributes: Any
) -> onnx.ModelProto:
    extra_inputs = extra_inputs or {}
    every = {**feeds, **extra_inputs}
    kinds = {name: helper.np_dtype_to_tensor_dtype(array.dtype) for name, array in every.items()}
    inputs = [helper.make_tensor_value_info(name, kinds[name], array.shape) for name, array in every.items()]
    q, v = feeds["Q"].shape, feeds["V"].shape
    output = helper.make_tensor_value_info("Y", kinds["Q"], (*q[:3], v[3]))
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=DOMAIN, **attributes)
    graph = helper.make_graph([node], "flex", inputs, [output])
    opsets = [helper.make_opsetid("", 26), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _modifier(name: str, nodes: list[onnx.NodeProto], constants: dict[str, np.ndarray]) -> onnx.GraphProto:
    """A modifier subgraph `(x) -> y` of float32 rank-4 tensors."""
    tensor = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["B", "H", "L", "S"]) for n in ("x", "y")]
    initializers = [numpy_helper.from_array(array, key) for key, array in constants.items()]
    return helper.make_graph(nodes, name, [tensor[0]], [tensor[1]], initializers)


def _causal_mask() -> onnx.GraphProto:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "two"], ["rows"], axis=0),
        helper.make_node("Gather", ["shape", "three"], ["columns"], axis=0),
        helper.make_node("Range", ["zero", "rows", "one"], ["row_range"]),
        helper.make_node("Range", ["zero", "columns", "one"], ["column_range"]),
        helper.make_node("Unsqueeze", ["row_range", "last"], ["row"]),
        helper.make_node("GreaterOrEqual", ["row", "column_range"], ["allowed"]),
        helper.make_node("Where", ["allowed", "x", "neg_inf"], ["y"]),
    ]
    scalars = {"zero": 0, "one": 1, "two": 2, "three": 3}
    constants = {key: np.array(value, np.int64) for key, value in scalars.items()}
    constants |= {"last": np.array([1], np.int64), "neg_inf": np.array(-np.inf, np.float32)}
    return _modifier("causal_mask", nodes, constants)


SOFT_CAP = [
    helper.make_node("Div", ["x", "cap"], ["scaled"]),
    helper.make_node("Tanh", ["scaled"], ["capped"]),
    helper.make_node("Mul", ["capped", "cap"], ["y"]),
]


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float = 1e-4) -> None:
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=rtol, reference=True)


@pytest.mark.parametrize(
    ("shapes", "attributes"),
    [
        (((2, 4, 8, 16), (2, 4, 6, 16), (2, 4, 6, 16)), {}),
        (((2, 4, 8, 16), (2, 4, 6, 16), (2, 4, 6, 8)), {"scale": 0.1}),
        (((2, 8, 4, 16), (2, 2, 6, 16), (2, 2, 6, 16)), {}),
        (((1, 4, 3, 8), (1, 1, 5, 8), (1, 1, 5, 4)), {"softmax_precision": TensorProto.FLOAT}),
    ],
    ids=["plain", "scaled_value_size", "gqa", "mqa_precision"],
)
def test_flex_attention(shapes: tuple[Shape, Shape, Shape], attributes: dict[str, Any]) -> None:
    feeds = _feeds(*shapes)
    _check(_model(feeds, **attributes), feeds)


@pytest.mark.parametrize(
    ("mods"),
    [
        {"score_mod": _modifier("bias", [helper.make_node("Add", ["x", "bias"], ["y"])], {"bias": np.float32(0.5)})},
        {"score_mod": _causal_mask()},
        {"score_mod": _modifier("soft_cap", SOFT_CAP, {"cap": np.array(2.0, np.float32)})},
        {"prob_mod": _modifier("halve", [helper.make_node("Mul", ["x", "half"], ["y"])], {"half": np.float32(0.5)})},
        {
            "score_mod": _causal_mask(),
            "prob_mod": _modifier("square", [helper.make_node("Mul", ["x", "x"], ["y"])], {}),
        },
    ],
    ids=["bias", "causal_mask", "soft_cap", "prob_scale", "both"],
)
def test_flex_attention_modifiers(mods: dict[str, onnx.GraphProto]) -> None:
    """Modifier subgraphs are converted in place, on the float32 scores or probabilities."""
    feeds = _feeds((2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8))
    _check(_model(feeds, **mods), feeds)


def _numpy_attention(feeds: dict[str, np.ndarray], bias: np.ndarray) -> np.ndarray:
    q, k, v = feeds["Q"], feeds["K"], feeds["V"]
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]) + bias
    probabilities = np.exp(scores - scores.max(-1, keepdims=True))
    return (probabilities / probabilities.sum(-1, keepdims=True)) @ v


def test_flex_attention_modifier_reads_enclosing_graph() -> None:
    """A score_mod may read a value of the enclosing graph: here a run-time bias input (onnx's reference evaluator
    cannot run that: numpy is the oracle)."""
    feeds = _feeds((1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8))
    bias = {"outer_bias": np.random.default_rng(1).uniform(-1, 1, (1, 1, 3, 5)).astype(np.float32)}
    mod = _modifier("outer", [helper.make_node("Add", ["x", "outer_bias"], ["y"])], {})
    model = _model(feeds, bias, score_mod=mod)
    expected = _numpy_attention(feeds, bias["outer_bias"])
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, {**feeds, **bias})
    assert session.stats["kernels"] > 0
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-6)


def test_flex_attention_float16() -> None:
    feeds = _feeds((2, 4, 8, 16), (2, 2, 6, 16), (2, 2, 6, 16), np.float16)
    _check(_model(feeds, score_mod=_causal_mask()), feeds, rtol=1e-3)


@pytest.mark.parametrize(
    ("dtype", "attributes", "error", "message"),
    [
        (np.float64, {}, UnsupportedFeatureError, "float32 only"),
        (np.float32, {"softmax_precision": TensorProto.FLOAT16}, UnsupportedFeatureError, "softmax_precision"),
        (
            np.float32,
            {"score_mod": _modifier("reduce", [helper.make_node("ReduceMax", ["x"], ["y"])], {})},
            ModelImportError,
            "score_mod gives",
        ),
        (
            np.float32,
            {"score_mod": _modifier("custom", [helper.make_node("Mystery", ["x"], ["y"], domain="com.example")], {})},
            UnsupportedFeatureError,
            "com.example.Mystery",
        ),
    ],
    ids=["float64", "float16_softmax", "modifier_changes_shape", "modifier_unsupported_op"],
)
def test_flex_attention_refused(dtype: Any, attributes: dict[str, Any], error: type[Exception], message: str) -> None:
    feeds = _feeds((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), dtype)
    model = _model(feeds, **attributes)
    if "score_mod" in attributes and attributes["score_mod"].node[0].domain:
        model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(error, match=message):
        InferenceSession(model, cache=False)


def test_flex_attention_layers_share_a_modifier() -> None:
    """Two FlexAttention nodes with the same score_mod on scores of different shapes: each inlined copy has its own
    values (the causal mask's constants differ), and the second reads the first's output."""
    feeds = _feeds((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8))
    mask = _causal_mask()
    first = helper.make_node("FlexAttention", ["Q", "K", "V"], ["A"], domain=DOMAIN, score_mod=mask)
    second = helper.make_node("FlexAttention", ["A", "A", "A"], ["Y"], domain=DOMAIN, score_mod=mask, scale=0.5)
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, array.shape) for name, array in feeds.items()]
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, (1, 2, 4, 8))
    graph = helper.make_graph([first, second], "layers", inputs, [output])
    opsets = [helper.make_opsetid("", 26), helper.make_opsetid(DOMAIN, 1)]
    _check(helper.make_model(graph, opset_imports=opsets, ir_version=10), feeds)
