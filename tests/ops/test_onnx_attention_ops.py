"""Numerics of the transformer ops (Attention, opsets 23-24, and RotaryEmbedding, opset 23), end to end through
minimlc's InferenceSession at O0 and O3, and their import errors.

Each case is a one-node model on seeded random inputs (bool masks and int64 positions and lengths are run-time
inputs too), compared with ONNX Runtime at rtol=1e-4, atol=1e-5 on every output the node has (float16 Attention:
rtol=1e-2, atol=1e-3). Every case also checks that native code ran (`stats["kernels"]`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError
from tests.ops.onnx_cases import one_node_model

RTOL = 1e-4
ATOL = 1e-5

Shape = tuple[int, ...]
Input = tuple[int, Shape]  # (TensorProto element type, shape)

F, B, I = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def _model(
    op_type: str,
    inputs: Mapping[str, Input | None],
    outputs: Sequence[str],
    opset: int,
    *,
    infer: bool = True,
    **attributes: Any,
) -> onnx.ModelProto:
    """One node; an input given as None is omitted (an empty name). `infer` gives the outputs their shapes, else
    they are declared with the first input's (for nodes shape inference refuses)."""
    declared = next(iter(_given(inputs).values()))[1]
    names = [name if given is not None else "" for name, given in inputs.items()]
    while names and not names[-1]:
        names.pop()
    node = helper.make_node(op_type, names, list(outputs), **attributes)
    graph = helper.make_graph(
        [node],
        "test",
        [helper.make_tensor_value_info(name, kind, shape) for name, (kind, shape) in _given(inputs).items()],
        [helper.make_tensor_value_info(name, F, None if infer else declared) for name in outputs if name],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True) if infer else model


def _given(inputs: Mapping[str, Input | None]) -> dict[str, Input]:
    return {name: given for name, given in inputs.items() if given is not None}


def _feeds(inputs: Mapping[str, Input | None], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for name, (kind, shape) in _given(inputs).items():
        if kind == B:
            feeds[name] = rng.uniform(size=shape) < 0.7
        elif kind == I:
            feeds[name] = rng.integers(0, 8, shape).astype(np.int64)
        else:
            feeds[name] = rng.uniform(-2.0, 2.0, shape).astype(np.float32)
    return feeds


def _check(
    op_type: str,
    inputs: Mapping[str, Input | None],
    outputs: Sequence[str] = ("Y",),
    *,
    opset: int,
    feeds: Mapping[str, np.ndarray] | None = None,
    oracle: str = "onnxruntime",
    **attributes: Any,
) -> None:
    model = _model(op_type, inputs, outputs, opset, **attributes)
    onnx.checker.check_model(model)
    given = dict(feeds) if feeds is not None else _feeds(inputs)
    if oracle == "onnxruntime":
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        expected = session.run(None, given)
    else:
        expected = ReferenceEvaluator(model).run(None, given)
    ours = InferenceSession(model)
    actual = ours.run(None, given)
    assert ours.stats["kernels"] > 0
    assert len(actual) == len(expected)
    for mine, theirs in zip(actual, expected):
        assert mine.shape == theirs.shape
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)


def _qkv(q: Shape, k: Shape, v: Shape) -> dict[str, Input | None]:
    return {"Q": (F, q), "K": (F, k), "V": (F, v)}


@pytest.mark.parametrize(
    ("shapes", "attributes"),
    [
        (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), {}),
        (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)), {"scale": 0.3}),
        (((2, 6, 4, 8), (2, 2, 4, 8), (2, 2, 4, 8)), {"is_causal": 1}),
        (((1, 4, 5, 8), (1, 1, 7, 8), (1, 1, 7, 8)), {"softcap": 2.0}),
        (((2, 4, 24), (2, 6, 24), (2, 6, 24)), {"q_num_heads": 3, "kv_num_heads": 3}),
        (((2, 4, 32), (2, 6, 16), (2, 6, 12)), {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1}),
        (((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)), {"softmax_precision": TensorProto.FLOAT}),
    ],
    ids=["4d", "4d_scaled_value_size", "4d_gqa_causal", "4d_mqa_softcap", "3d", "3d_gqa_causal", "precision"],
)
def test_attention(shapes: tuple[Shape, Shape, Shape], attributes: dict[str, Any]) -> None:
    _check("Attention", _qkv(*shapes), opset=23, **attributes)


@pytest.mark.parametrize(
    ("mask", "attributes"),
    [
        ((F, (4, 6)), {}),
        ((F, (2, 1, 4, 6)), {"is_causal": 1}),
        ((B, (2, 3, 4, 6)), {}),
        ((B, (4, 6)), {"is_causal": 1}),
    ],
    ids=["float_2d", "float_4d_causal", "bool_4d", "bool_2d_causal"],
)
def test_attention_mask(mask: Input, attributes: dict[str, Any]) -> None:
    inputs = {**_qkv((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), "attn_mask": mask}
    _check("Attention", inputs, opset=23, **attributes)


def test_attention_short_mask_padded() -> None:
    """A mask shorter than the keys is padded with -inf (False); ONNX Runtime refuses it: onnx's reference."""
    inputs = {**_qkv((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), "attn_mask": (B, (4, 3))}
    feeds = _feeds(inputs)
    feeds["attn_mask"][:, 0] = True
    _check("Attention", inputs, opset=23, feeds=feeds, oracle="reference")


def test_attention_fully_masked_row_is_zero() -> None:
    inputs = {**_qkv((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), "attn_mask": (B, (3, 4))}
    feeds = _feeds(inputs)
    feeds["attn_mask"] = np.array([[True, False, True, True], [False] * 4, [True] * 4])
    _check("Attention", inputs, ("Y", "", "", "qk"), opset=23, feeds=feeds, qk_matmul_output_mode=3)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("heads", [(3, 3), (6, 3)], ids=["mha", "gqa"])
def test_attention_kv_cache(mode: int, heads: tuple[int, int]) -> None:
    """past_key/past_value concatenated before the new keys, the present outputs, every qk_matmul_output_mode.

    Mode 2 exposes the causal bias, -inf as the operator specifies and onnx's reference computes; ONNX Runtime
    writes the lowest float32 there instead, so that mode compares with the reference."""
    q_heads, kv_heads = heads
    inputs = {
        **_qkv((2, q_heads, 4, 8), (2, kv_heads, 3, 8), (2, kv_heads, 3, 6)),
        "attn_mask": (F, (4, 8)),
        "past_key": (F, (2, kv_heads, 5, 8)),
        "past_value": (F, (2, kv_heads, 5, 6)),
    }
    outputs = ("Y", "present_key", "present_value", "qk")
    attributes = {"softcap": 1.5} if mode == 1 else {}
    oracle = "reference" if mode == 2 else "onnxruntime"
    _check("Attention", inputs, outputs, opset=23, oracle=oracle, qk_matmul_output_mode=mode, is_causal=1, **attributes)


def test_attention_3d_kv_cache() -> None:
    inputs = {
        **_qkv((2, 1, 16), (2, 1, 8), (2, 1, 8)),
        "attn_mask": None,
        "past_key": (F, (2, 2, 5, 4)),
        "past_value": (F, (2, 2, 5, 4)),
    }
    _check("Attention", inputs, ("Y", "present_key", "present_value"), opset=23, q_num_heads=4, kv_num_heads=2)


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_nonpad_kv_seqlen(causal: int) -> None:
    """Opset 24's external cache: keys past `nonpad_kv_seqlen[b]` are masked, the causal frontier follows it."""
    inputs = {
        **_qkv((3, 4, 2, 8), (3, 2, 6, 8), (3, 2, 6, 8)),
        "attn_mask": None,
        "past_key": None,
        "past_value": None,
        "nonpad_kv_seqlen": (I, (3,)),
    }
    feeds = _feeds(inputs)
    feeds["nonpad_kv_seqlen"] = np.array([6, 3, 2], np.int64)
    _check("Attention", inputs, opset=24, feeds=feeds, is_causal=causal)


def test_attention_one_session_two_inputs() -> None:
    """The mask and lengths are run-time data: one compiled session answers two different feeds."""
    inputs = {**_qkv((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)), "attn_mask": (B, (3, 3))}
    model = _model("Attention", inputs, ["Y"], 23)
    ours = InferenceSession(model)
    reference = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for seed in (1, 2):
        feeds = _feeds(inputs, seed)
        feeds["attn_mask"][:, 0] = True
        np.testing.assert_allclose(ours.run(None, feeds)[0], reference.run(None, feeds)[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("inputs", "attributes", "error"),
    [
        (_qkv((2, 4, 24), (2, 6, 24), (2, 6, 24)), {}, ModelImportError),
        (_qkv((2, 3, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8)), {}, ModelImportError),
        (_qkv((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), {"softmax_precision": TensorProto.FLOAT16},
         UnsupportedFeatureError),
    ],
    ids=["3d_without_heads", "heads_not_dividing", "float16_softmax"],
)
def test_attention_refused(
    inputs: dict[str, Input | None], attributes: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error, match="Attention"):
        InferenceSession(_model("Attention", inputs, ["Y"], 23, infer=False, **attributes))


def test_attention_past_key_alone_refused() -> None:
    inputs = {**_qkv((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)), "attn_mask": None, "past_key": (F, (1, 2, 2, 4))}
    with pytest.raises(ModelImportError, match="past_key and past_value"):
        InferenceSession(_model("Attention", inputs, ["Y"], 23, infer=False))


def _rotary_inputs(shape: Shape, half: int, position_ids: bool) -> dict[str, Input | None]:
    batch, length = shape[0], shape[-2] if len(shape) == 4 else shape[1]
    cache = (64, half) if position_ids else (batch, length, half)
    inputs: dict[str, Input | None] = {"X": (F, shape), "cos": (F, cache), "sin": (F, cache)}
    if position_ids:
        inputs["position_ids"] = (I, (batch, length))
    return inputs


@pytest.mark.parametrize(
    ("shape", "half", "position_ids", "attributes"),
    [
        ((2, 4, 3, 8), 4, True, {}),
        ((2, 4, 3, 8), 4, True, {"interleaved": 1}),
        ((2, 4, 3, 8), 2, True, {"rotary_embedding_dim": 4}),
        ((2, 4, 3, 8), 2, False, {"rotary_embedding_dim": 4, "interleaved": 1}),
        ((2, 3, 32), 4, True, {"num_heads": 4}),
        ((2, 3, 32), 2, False, {"num_heads": 4, "rotary_embedding_dim": 4, "interleaved": 1}),
    ],
    ids=["4d", "4d_interleaved", "4d_partial", "4d_partial_interleaved_cache", "3d", "3d_partial_interleaved"],
)
def test_rotary_embedding(shape: Shape, half: int, position_ids: bool, attributes: dict[str, Any]) -> None:
    inputs = _rotary_inputs(shape, half, position_ids)
    feeds = _feeds(inputs)
    if position_ids:
        feeds["position_ids"] = np.random.default_rng(3).integers(0, 64, feeds["position_ids"].shape)
    _check("RotaryEmbedding", inputs, opset=23, feeds=feeds, **attributes)


def test_rotary_embedding_3d_without_heads_refused() -> None:
    with pytest.raises(ModelImportError, match="num_heads"):
        InferenceSession(_model("RotaryEmbedding", _rotary_inputs((2, 3, 32), 4, True), ["Y"], 23, infer=False))


@pytest.mark.parametrize(
    ("shapes", "optional", "attributes", "opset"),
    [
        (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), {}, {}, 23),
        (((2, 4, 3, 8), (2, 2, 3, 8), (2, 2, 3, 6)), {"attn_mask": (3, 8), "past": (2, 2, 5)}, {"is_causal": 1}, 23),
        (((2, 2, 32), (2, 5, 16), (2, 5, 16)), {"attn_mask": (2, 5)}, {"q_num_heads": 4, "kv_num_heads": 2}, 23),
        (((3, 4, 1, 8), (3, 2, 6, 8), (3, 2, 6, 8)), {"nonpad_kv_seqlen": (3,)}, {"is_causal": 1}, 24),
    ],
    ids=["4d", "gqa_past_present_mask_causal", "3d_mask", "nonpad_decode"],
)
def test_attention_float16(
    shapes: tuple[Shape, Shape, Shape], optional: dict[str, Shape], attributes: dict[str, Any], opset: int
) -> None:
    """float16 Q, K, V (and mask, past and present) computed in float32 and rounded on store, against ONNX Runtime
    at rtol=1e-2, atol=1e-3, about one float16 step at 1 (its kernels round intermediates to float16 too)."""
    rng = np.random.default_rng(0)
    half = np.float16
    feeds = {name: rng.uniform(-1.0, 1.0, shape).astype(half) for name, shape in zip("QKV", shapes)}
    outputs = 1
    if "attn_mask" in optional:
        feeds["attn_mask"] = rng.uniform(-1.0, 0.0, optional["attn_mask"]).astype(half)
    if "past" in optional:
        batch, heads, length = optional["past"]
        feeds["past_key"] = rng.uniform(-1.0, 1.0, (batch, heads, length, shapes[1][3])).astype(half)
        feeds["past_value"] = rng.uniform(-1.0, 1.0, (batch, heads, length, shapes[2][3])).astype(half)
        outputs = 3
    if "nonpad_kv_seqlen" in optional:
        feeds["nonpad_kv_seqlen"] = np.array([6, 3, 1], np.int64)
    order = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
    inputs = [name if name in feeds else "" for name in order]
    while not inputs[-1]:
        inputs.pop()
    model = one_node_model("Attention", feeds, attributes, inputs=inputs, outputs=outputs, opset=opset)
    expected = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ours = InferenceSession(model, cache=False)
    actual = ours.run(None, feeds)
    assert ours.stats["kernels"] > 0
    for mine, theirs in zip(actual, expected.run(None, feeds), strict=True):
        assert mine.dtype == theirs.dtype == half and mine.shape == theirs.shape
        np.testing.assert_allclose(mine.astype(np.float32), theirs.astype(np.float32), rtol=1e-2, atol=1e-3)
