"""ONNX converter for FlexAttention (domain ai.onnx.preview, version 1): attention on [B, H, S, D] with optional
score and probability modifier subgraphs, as graph ops.

The chain is the one exporters write for attention, so `graph-fuse-attention` can fuse it where no modifier
stands between its ops; grouped-query heads share their key/value head's matmul as in Attention:

    %scores = graph.matmul %q, (graph.transpose %k)   (graph.mul by scale, default 1/sqrt(D))
    ... score_mod's nodes, imported here on %scores (`ControlContext.subgraph`) ...
    %probs = graph.softmax %scores {axis = 3}
    ... prob_mod's nodes on %probs ...
    %y = graph.matmul %probs, %v

float16 and bfloat16 inputs are computed in float32 (the operator's default softmax precision), rounded where the
operator computes in their type (Q and K scaled by sqrt(scale), the scores) and on store; the modifiers see
float32, as the operator specifies. float64 inputs and a softmax_precision other than
FLOAT are refused: minimlc computes the softmax in float32 only.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_attention import grouped_matmul
from minimlc.frontend.onnx_control import ControlContext
from minimlc.frontend.onnx_half import widened_from
from minimlc.frontend.onnx_ops import Converter, NodeContext, NodeError, UnsupportedNodeError, Value, dtype_of

DOMAIN = "ai.onnx.preview"


def _modified(ctx: NodeContext, body: onnx.GraphProto, x: SSAValue, name: str) -> SSAValue:
    """`body` (one input, one output of the same shape) applied to `x`, its nodes converted in place."""
    assert isinstance(ctx, ControlContext), "the importer imports the subgraphs of a node with graph attributes"
    results = ctx.subgraph(body, [x])
    if len(results) != 1 or not isinstance(results[0], SSAValue):
        raise NodeError(f"{name} must have one output computed from its input")
    result = results[0]
    if shape_of(result) != shape_of(x) or graph.element_type(result) != f32:
        raise NodeError(f"{name} gives {result.type}, not its input's {x.type}")
    return result


def _rounded(ctx: NodeContext, x: SSAValue, half: Attribute) -> SSAValue:
    """`x` rounded to the 16-bit type `half` (to nearest even) and widened back to float32."""
    return ctx.emit(graph.CastOp(ctx.emit(graph.CastOp(x, half)), f32))


def FlexAttention(
    ctx: NodeContext,
    Q: Value,
    K: Value,
    V: Value,
    *,
    scale: float | None = None,
    score_mod: onnx.GraphProto | None = None,
    prob_mod: onnx.GraphProto | None = None,
    softmax_precision: int | None = None,
) -> Value:
    """Attention with inlined score/probability modifiers -> graph matmuls, softmax and the modifiers' ops (module
    docstring)."""
    q, k, v = (ctx.data(x) for x in (Q, K, V))
    for x, name in ((q, "Q"), (k, "K"), (v, "V")):
        if graph.element_type(x) != f32:
            raise UnsupportedNodeError(f"{name} is {graph.element_type(x)}; FlexAttention computes on float32")
        if len(shape_of(x)) != 4:
            raise NodeError(f"{name} must be rank 4 (batch, heads, sequence, size), got shape {shape_of(x)}")
    if softmax_precision not in (None, onnx.TensorProto.FLOAT):
        name = onnx.TensorProto.DataType.Name(softmax_precision)
        raise UnsupportedNodeError(f"softmax_precision={softmax_precision} ({name}) is not supported (FLOAT)")
    batch, q_heads, _, head_size = shape_of(q)
    if shape_of(k)[:3] != shape_of(v)[:3] or shape_of(k)[3] != head_size or shape_of(k)[0] != batch:
        raise NodeError(f"K {shape_of(k)} and V {shape_of(v)} do not match Q {shape_of(q)}")
    if q_heads % shape_of(k)[1]:
        raise NodeError(f"Q's {q_heads} heads are not a multiple of K's {shape_of(k)[1]}")

    factor = 1 / math.sqrt(head_size) if scale is None else scale
    half = widened_from(q)
    if half is None:
        scores = grouped_matmul(ctx, q, ctx.emit(graph.TransposeOp(k, [0, 1, 3, 2])))
        if factor != 1.0:
            scores = ctx.emit(graph.MulOp(scores, ctx.emit(graph.ConstantOp(factor, (1,)))))
    else:  # as specified: Q and K scaled by sqrt(scale) in their 16-bit type, the scores rounded to it
        root = float(np.asarray(np.sqrt(np.float32(factor)), dtype_of(half)))
        q, k = (_rounded(ctx, ctx.emit(graph.MulOp(x, ctx.emit(graph.ConstantOp(root, (1,))))), half) for x in (q, k))
        scores = _rounded(ctx, grouped_matmul(ctx, q, ctx.emit(graph.TransposeOp(k, [0, 1, 3, 2]))), half)
    if score_mod is not None:
        scores = _modified(ctx, score_mod, scores, "score_mod")
    probabilities = ctx.emit(graph.SoftmaxOp(scores, 3))
    if prob_mod is not None:
        probabilities = _modified(ctx, prob_mod, probabilities, "prob_mod")
    return grouped_matmul(ctx, probabilities, v)


CONVERTERS: dict[str, Converter] = {f"{DOMAIN}.FlexAttention": FlexAttention}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`), the preview-domain attention."""
