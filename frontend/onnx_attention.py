"""ONNX converters for transformer ops, written as graph ops: Attention (opset 23-25) and RotaryEmbedding (23).

Attention becomes batched matmuls, a softmax and elementwise ops on [batch, heads, sequence, head size] tensors
(3-D inputs are split into heads by a reshape and a transpose, and merged back at the end):

    scores = matmul(Q, transpose(K)) * scale          (K, V: past_key/past_value concatenated first)
    logits = softcap * tanh(scores / softcap) + bias  (softcap > 0 only; bias only where something masks)
    Y      = matmul(softmax(logits), V)

Grouped-query attention (q_num_heads = r * kv_num_heads) multiplies each key/value head by its r query heads
at once: Q [B, Hq, S, D] is reshaped to [B, Hkv, r*S, D], so keys and values are never repeated. The additive
bias sums, each as it applies, the mask (a bool mask as 0 / -inf, padded with -inf up to the key length), the
causal and sliding-window frontiers (a constant [S, T] table when the offset is the past length; from the run-time
`nonpad_kv_seqlen` per batch otherwise) and the key padding of `nonpad_kv_seqlen`. A query row whose bias is -inf
everywhere gets zero probabilities (a `graph.where` on the row maximum of the bias), as the operator specifies.
`softmax_precision` float and double are computed in float32, the precision of the result. float16 and bfloat16
inputs are computed in float32 and every output rounded once on store (`onnx_half`); `grouped_matmul` also serves
FlexAttention (`onnx_flex_attention`).

RotaryEmbedding gathers the cos/sin caches at the run-time `position_ids` (`graph.take`), slices the rotated part
of each head into its two halves (or even/odd lanes when interleaved) and concatenates the rotated halves back.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_reshape,
)

_SOFTMAX_PRECISIONS = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)


def _constant(ctx: NodeContext, name: str, array: np.ndarray) -> SSAValue:
    """A constant table of this node as a weight, named after the node's first output."""
    return ctx.data(ConstantValue(f"{ctx.node.output[0]}.{name}", np.ascontiguousarray(array)))


def _float_data(ctx: NodeContext, value: Value, name: str) -> SSAValue:
    data = ctx.data(value)
    if graph.element_type(data) != f32:
        raise UnsupportedNodeError(f"{name} is {graph.element_type(data)}; {ctx.node.op_type} computes on float32")
    return data


def _split_heads(ctx: NodeContext, x: SSAValue, heads: int | None, name: str) -> SSAValue:
    """[B, S, heads * D] -> [B, heads, S, D]."""
    batch, length, hidden = shape_of(x)
    if heads is None or heads < 1 or hidden % heads:
        raise NodeError(f"3-D {name} of hidden size {hidden} needs a number of heads dividing it, got {heads}")
    split = emit_reshape(ctx, x, (batch, length, heads, hidden // heads))
    return ctx.emit(graph.TransposeOp(split, [0, 2, 1, 3]))


def grouped_matmul(ctx: NodeContext, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs` [B, Hq, S, X] times `rhs` [B, Hkv, X, Y], query head h with key/value head h // (Hq / Hkv)."""
    batch, q_heads, length, inner = shape_of(lhs)
    kv_heads = shape_of(rhs)[1]
    if q_heads == kv_heads:
        return ctx.emit(graph.MatMulOp(lhs, rhs))
    grouped = emit_reshape(ctx, lhs, (batch, kv_heads, q_heads // kv_heads * length, inner))
    product = ctx.emit(graph.MatMulOp(grouped, rhs))
    return emit_reshape(ctx, product, (batch, q_heads, length, shape_of(rhs)[3]))


def _additive(ctx: NodeContext, allowed: SSAValue) -> SSAValue:
    """A bool tensor as an additive bias: 0 where it holds, -inf elsewhere."""
    zero = _constant(ctx, "zero", np.zeros(1, np.float32))
    return ctx.emit(graph.WhereOp(allowed, zero, _constant(ctx, "neg_inf", np.full(1, -np.inf, np.float32))))


def _mask_bias(ctx: NodeContext, attn_mask: Value, target: tuple[int, ...]) -> SSAValue:
    """The attention mask as an additive bias broadcastable to `target` [B, Hq, S, T]."""
    mask = ctx.data(attn_mask)
    shape = shape_of(mask)
    element = graph.element_type(mask)
    if element not in (f32, graph.BOOL):
        raise UnsupportedNodeError(f"attn_mask is {element}; only bool and float32 masks are supported")
    bias = _additive(ctx, mask) if element == graph.BOOL else mask
    keys = target[-1]
    if not shape or len(shape) > 4 or shape[-1] > keys:
        raise NodeError(f"attn_mask of shape {shape} does not fit attention scores of shape {target}")
    if shape[-1] < keys:
        fill = np.full((*shape[:-1], keys - shape[-1]), -np.inf, np.float32)
        bias = ctx.emit(graph.ConcatOp([bias, _constant(ctx, "mask_fill", fill)], len(shape) - 1))
    if graph.broadcast_shapes(shape_of(bias), target) != target:
        raise NodeError(f"attn_mask of shape {shape} does not broadcast to attention scores of shape {target}")
    return bias


def _frontier(causal: bool, left: int, right: int, diff: np.ndarray) -> np.ndarray:
    """Where query-key distance `diff` (query position minus key position) is allowed."""
    allowed = np.ones(diff.shape, bool)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= diff >= -right
    return allowed


def _run_time_frontier(
    ctx: NodeContext, causal: bool, left: int, right: int, nonpad: SSAValue, length: int, keys: int
) -> SSAValue:
    """The causal/window bias [B, 1, S, T] of an external cache: query i of batch b sits at nonpad[b] - S + i."""
    batch = shape_of(nonpad)[0]
    positions = np.arange(length)[:, None] - np.arange(keys)[None, :] - length
    distance = _constant(ctx, "distance", positions.astype(np.int64))
    diff = ctx.emit(graph.AddOp(distance, emit_reshape(ctx, nonpad, (batch, 1, 1))))
    bounds = [(graph.GreaterOrEqualOp, 0)] if causal else []
    bounds += [(graph.LessOrEqualOp, left)] if left >= 0 else []
    bounds += [(graph.GreaterOrEqualOp, -right)] if right >= 0 else []
    allowed: SSAValue | None = None
    for compare, bound in bounds:
        test = ctx.emit(compare(diff, _constant(ctx, f"bound_{bound}", np.array([bound], np.int64))))
        allowed = test if allowed is None else ctx.emit(graph.AndOp(allowed, test))
    assert allowed is not None
    return emit_reshape(ctx, _additive(ctx, allowed), (batch, 1, length, keys))


def _padding_bias(ctx: NodeContext, nonpad: SSAValue, keys: int) -> SSAValue:
    """-inf for the keys at or past `nonpad_kv_seqlen[b]`, as [B, 1, 1, T]."""
    batch = shape_of(nonpad)[0]
    indices = _constant(ctx, "key_index", np.arange(keys, dtype=np.int64))
    allowed = ctx.emit(graph.LessOp(indices, emit_reshape(ctx, nonpad, (batch, 1))))
    return emit_reshape(ctx, _additive(ctx, allowed), (batch, 1, 1, keys))


def _sum(ctx: NodeContext, terms: list[SSAValue]) -> SSAValue | None:
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = ctx.emit(graph.AddOp(total, term))
    return total


def Attention(
    ctx: NodeContext,
    Q: Value,
    K: Value,
    V: Value,
    attn_mask: Value | None = None,
    past_key: Value | None = None,
    past_value: Value | None = None,
    nonpad_kv_seqlen: Value | None = None,
    *,
    is_causal: int = 0,
    kv_num_heads: int | None = None,
    q_num_heads: int | None = None,
    qk_matmul_output_mode: int = 0,
    scale: float | None = None,
    softcap: float = 0.0,
    softmax_precision: int | None = None,
    left_window_size: int = -1,
    right_window_size: int = -1,
) -> tuple[Value, ...]:
    """Scaled dot-product attention -> graph matmuls, softmax and elementwise ops (module docstring)."""
    q, k, v = (_float_data(ctx, value, name) for value, name in ((Q, "Q"), (K, "K"), (V, "V")))
    ranks = {len(shape_of(x)) for x in (q, k, v)}
    if ranks not in ({3}, {4}):
        raise NodeError(f"Q, K and V must all be 3-D or all 4-D, got shapes {[shape_of(x) for x in (q, k, v)]}")
    merged = ranks == {3}
    if merged:
        q = _split_heads(ctx, q, q_num_heads, "Q")
        k, v = (_split_heads(ctx, x, kv_num_heads, name) for x, name in ((k, "K"), (v, "V")))
    batch, q_heads, length, head_size = shape_of(q)
    if shape_of(k)[:2] != shape_of(v)[:2] or shape_of(k)[2] != shape_of(v)[2] or shape_of(k)[3] != head_size:
        raise NodeError(f"K {shape_of(k)} and V {shape_of(v)} do not match Q {shape_of(q)}")
    kv_heads = shape_of(k)[1]
    if shape_of(k)[0] != batch or q_heads % kv_heads:
        raise NodeError(f"K/V of shape {shape_of(k)}: batch must be {batch}, heads must divide {q_heads}")
    if qk_matmul_output_mode not in (0, 1, 2, 3):
        raise NodeError(f"attribute qk_matmul_output_mode={qk_matmul_output_mode} must be 0, 1, 2 or 3")
    if softmax_precision is not None and softmax_precision not in _SOFTMAX_PRECISIONS:
        name = onnx.TensorProto.DataType.Name(softmax_precision)
        raise UnsupportedNodeError(f"softmax_precision={softmax_precision} ({name}) is not supported (FLOAT, DOUBLE)")
    if (past_key is None) != (past_value is None):
        raise NodeError("past_key and past_value must be given together")
    past = 0
    if past_key is not None and past_value is not None:
        if nonpad_kv_seqlen is not None:
            raise NodeError("nonpad_kv_seqlen cannot be combined with past_key and past_value")
        cached_k, cached_v = _float_data(ctx, past_key, "past_key"), _float_data(ctx, past_value, "past_value")
        past = shape_of(cached_k)[2]
        for cached, new, name in ((cached_k, k, "past_key"), (cached_v, v, "past_value")):
            wanted = (*shape_of(new)[:2], past, shape_of(new)[3])
            if shape_of(cached) != wanted:
                raise NodeError(f"{name} of shape {shape_of(cached)} must have shape {wanted}")
        k = ctx.emit(graph.ConcatOp([cached_k, k], 2))
        v = ctx.emit(graph.ConcatOp([cached_v, v], 2))
    keys = shape_of(k)[2]

    scores = grouped_matmul(ctx, q, ctx.emit(graph.TransposeOp(k, [0, 1, 3, 2])))
    factor = 1 / math.sqrt(head_size) if scale is None else scale
    if factor != 1.0:
        scores = ctx.emit(graph.MulOp(scores, ctx.emit(graph.ConstantOp(factor, (1,)))))
    capped = scores
    if softcap > 0:
        cap = ctx.emit(graph.ConstantOp(softcap, (1,)))
        capped = ctx.emit(graph.MulOp(ctx.emit(graph.TanhOp(ctx.emit(graph.DivOp(scores, cap)))), cap))

    target = (batch, q_heads, length, keys)
    terms = [] if attn_mask is None else [_mask_bias(ctx, attn_mask, target)]
    nonpad = None
    if nonpad_kv_seqlen is not None:
        nonpad = ctx.data(nonpad_kv_seqlen)
        if graph.element_type(nonpad) != i64 or shape_of(nonpad) != (batch,):
            raise NodeError(f"nonpad_kv_seqlen must be int64 of shape ({batch},), got {nonpad.type}")
    windowed = bool(is_causal) or left_window_size >= 0 or right_window_size >= 0
    always_attends = attn_mask is None and nonpad is None
    if windowed and nonpad is None:
        distance = np.arange(length)[:, None] + past - np.arange(keys)[None, :]
        allowed = _frontier(bool(is_causal), left_window_size, right_window_size, distance)
        always_attends = always_attends and bool(allowed.any(axis=1).all())
        terms.append(_constant(ctx, "frontier", np.where(allowed, 0, -np.inf).astype(np.float32)))
    elif windowed and nonpad is not None:
        causal = bool(is_causal)
        terms.append(_run_time_frontier(ctx, causal, left_window_size, right_window_size, nonpad, length, keys))
    if nonpad is not None:
        terms.append(_padding_bias(ctx, nonpad, keys))
    bias = _sum(ctx, terms)
    logits = capped if bias is None else ctx.emit(graph.AddOp(capped, bias))

    probabilities = ctx.emit(graph.SoftmaxOp(logits, 3))
    if bias is not None and not always_attends:
        row_max = ctx.emit(graph.ReduceMaxOp(bias, [len(shape_of(bias)) - 1], keepdims=True))
        neg_inf = _constant(ctx, "neg_inf", np.full(1, -np.inf, np.float32))
        masked_row = ctx.emit(graph.EqualOp(row_max, neg_inf))
        zero = _constant(ctx, "zero", np.zeros(1, np.float32))
        probabilities = ctx.emit(graph.WhereOp(masked_row, zero, probabilities))
    qk_output = (scores, capped, logits, probabilities)[qk_matmul_output_mode]

    y = grouped_matmul(ctx, probabilities, v)
    if merged:
        values = shape_of(v)[3]
        y = emit_reshape(ctx, ctx.emit(graph.TransposeOp(y, [0, 2, 1, 3])), (batch, length, q_heads * values))
    return y, k, v, qk_output


def _rotated_halves(
    ctx: NodeContext, x: SSAValue, rotated: int, interleaved: bool
) -> tuple[SSAValue, SSAValue]:
    """The two halves of the first `rotated` lanes of the last axis: first/second half, or even/odd lanes."""
    shape = shape_of(x)
    half_shape = (*shape[:-1], rotated // 2)
    rank = len(shape)
    starts = (0, 1) if interleaved else (0, rotated // 2)
    step = 2 if interleaved else 1
    first, second = (
        ctx.emit(graph.SliceOp(x, [0] * (rank - 1) + [start], [1] * (rank - 1) + [step], half_shape))
        for start in starts
    )
    return first, second


def RotaryEmbedding(
    ctx: NodeContext,
    input: Value,
    cos_cache: Value,
    sin_cache: Value,
    position_ids: Value | None = None,
    *,
    interleaved: int = 0,
    num_heads: int = 0,
    rotary_embedding_dim: int = 0,
) -> Value:
    """Rotate pairs of lanes of each head by the cached angles of its position -> graph take, slices, elementwise
    ops and a concat (module docstring)."""
    x = _float_data(ctx, input, "input")
    shape = shape_of(x)
    if len(shape) == 3:
        batch, length, hidden = shape
        if num_heads < 1 or hidden % num_heads:
            raise NodeError(f"3-D input of hidden size {hidden} needs num_heads dividing it, got {num_heads}")
        x = emit_reshape(ctx, x, (batch, length, num_heads, hidden // num_heads))
    elif len(shape) == 4:
        batch, _, length, _ = shape
    else:
        raise NodeError(f"input must be 3-D or 4-D, got shape {shape}")
    head_size = shape_of(x)[3]
    rotated = rotary_embedding_dim or head_size
    if rotated % 2 or rotated > head_size:
        raise NodeError(f"rotary_embedding_dim={rotated} must be even and at most the head size {head_size}")
    caches = [_float_data(ctx, cache, name) for cache, name in ((cos_cache, "cos_cache"), (sin_cache, "sin_cache"))]
    if position_ids is not None:
        ids = ctx.data(position_ids)
        if graph.element_type(ids) not in graph.INDICES or shape_of(ids) != (batch, length):
            raise NodeError(f"position_ids must be integers of shape ({batch}, {length}), got {ids.type}")
        caches = [ctx.emit(graph.TakeOp(cache, ids, 0)) for cache in caches]
    wanted = (batch, length, rotated // 2)
    if any(shape_of(cache) != wanted for cache in caches):
        raise NodeError(f"cos/sin caches give shapes {[shape_of(c) for c in caches]}, not {wanted}")
    # [B, S, half] broadcast over heads: [B, S, 1, half] for [B, S, H, D], [B, 1, S, half] for [B, H, S, D]
    per_head = (batch, length, 1, rotated // 2) if len(shape) == 3 else (batch, 1, length, rotated // 2)
    cos, sin = (emit_reshape(ctx, cache, per_head) for cache in caches)
    first, second = _rotated_halves(ctx, x, rotated, bool(interleaved))
    real = ctx.emit(graph.SubOp(ctx.emit(graph.MulOp(cos, first)), ctx.emit(graph.MulOp(sin, second))))
    imaginary = ctx.emit(graph.AddOp(ctx.emit(graph.MulOp(sin, first)), ctx.emit(graph.MulOp(cos, second))))
    if interleaved:
        pair_shape = (*shape_of(real), 1)
        pairs = [emit_reshape(ctx, part, pair_shape) for part in (real, imaginary)]
        paired = ctx.emit(graph.ConcatOp(pairs, len(pair_shape) - 1))
        parts = [emit_reshape(ctx, paired, (*shape_of(real)[:-1], rotated))]
    else:
        parts = [real, imaginary]
    if rotated < head_size:
        rank = len(shape_of(x))
        rest_shape = (*shape_of(x)[:-1], head_size - rotated)
        parts.append(ctx.emit(graph.SliceOp(x, [0] * (rank - 1) + [rotated], [1] * rank, rest_shape)))
    result = ctx.emit(graph.ConcatOp(parts, 3))
    return emit_reshape(ctx, result, shape) if len(shape) == 3 else result


CONVERTERS: dict[str, Converter] = {"Attention": Attention, "RotaryEmbedding": RotaryEmbedding}
"""ONNX op type (default domain) -> converter, transformer ops."""
