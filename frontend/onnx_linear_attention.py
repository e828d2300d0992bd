"""ONNX converter for LinearAttention (opset 27): the recurrent state of linear attention and its gated and delta
variants, unrolled over time into batched matmuls and elementwise graph ops.

Q, K and V [B, T, H * D] are split into heads [B, H, T, D]; the state S [B, Hkv, Dk, Dv] (past_state, or zeros)
is carried through the T steps, each of which computes, with k, v, q the step's rows as [B, H, 1, D]:

    S = S * exp(decay_t)                                  (update_rule gated, gated_delta)
    v = beta_t * (v - matmul(k, S))                       (update_rule delta, gated_delta)
    S = S + transpose(k) * v                              (the outer product, broadcast)
    o_t = matmul(scale * q, S)                            (query heads grouped by their key/value head)

The outputs o_t are concatenated over time and merged back to [B, T, Hq * Dv]; the last S is present_state.
Grouped-query heads reshape q [B, Hq, 1, Dk] to [B, Hkv, Hq/Hkv, Dk], so one batched matmul serves a key/value head's
query heads, as Attention does. exp(decay) is computed once for all steps. `chunk_size` is a tuning hint of the
operator with no effect on the result. At most 512 steps are unrolled (as the recurrent ops).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_half import widened_from
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    emit_reshape,
)

MAX_STEPS = 512
"""The longest sequence unrolled; a longer one is refused."""

_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def _float_data(ctx: NodeContext, value: Value, name: str) -> SSAValue:
    data = ctx.data(value)
    if graph.element_type(data) != f32:
        raise UnsupportedNodeError(f"{name} is {graph.element_type(data)}; LinearAttention computes on float32")
    if len(shape_of(data)) != 3:
        raise NodeError(f"{name} must be rank 3 (batch, sequence, heads * size), got shape {shape_of(data)}")
    return data


def _heads(ctx: NodeContext, x: SSAValue, heads: int, name: str) -> SSAValue:
    """[B, T, heads * D] -> [B, heads, T, D]."""
    batch, steps, hidden = shape_of(x)
    if hidden % heads:
        raise NodeError(f"{name} of hidden size {hidden} is not divisible by its {heads} heads")
    return ctx.emit(graph.TransposeOp(emit_reshape(ctx, x, (batch, steps, heads, hidden // heads)), [0, 2, 1, 3]))


def _step(ctx: NodeContext, x: SSAValue, t: int) -> SSAValue:
    """Row t of [B, H, T, D] as [B, H, 1, D]."""
    batch, heads, _, size = shape_of(x)
    return ctx.emit(graph.SliceOp(x, [0, 0, t, 0], [1, 1, 1, 1], (batch, heads, 1, size)))


def LinearAttention(
    ctx: NodeContext,
    query: Value,
    key: Value,
    value: Value,
    past_state: Value | None = None,
    decay: Value | None = None,
    beta: Value | None = None,
    *,
    chunk_size: int = 64,
    kv_num_heads: int | None = None,
    q_num_heads: int | None = None,
    scale: float = 0.0,
    update_rule: str | bytes = "gated_delta",
) -> tuple[Value, Value]:
    """The linear-attention recurrence -> per-step graph matmuls and elementwise ops (module docstring)."""
    del chunk_size  # a tuning hint: the result does not depend on it
    rule = as_text(update_rule)
    if rule not in _UPDATE_RULES:
        raise NodeError(f"attribute update_rule='{rule}' must be one of {', '.join(_UPDATE_RULES)}")
    if q_num_heads is None or kv_num_heads is None or kv_num_heads < 1 or q_num_heads % kv_num_heads:
        raise NodeError(f"q_num_heads={q_num_heads} must be a positive multiple of kv_num_heads={kv_num_heads}")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != (decay is not None) or delta != (beta is not None):
        wanted = f"{'decay' if gated else 'no decay'} and {'beta' if delta else 'no beta'}"
        raise NodeError(f"update_rule '{rule}' takes {wanted}")
    q, k, v = (_float_data(ctx, x, name) for x, name in ((query, "query"), (key, "key"), (value, "value")))
    batch, steps, _ = shape_of(q)
    if shape_of(k)[:2] != (batch, steps) or shape_of(v)[:2] != (batch, steps):
        raise NodeError(f"query {shape_of(q)}, key {shape_of(k)} and value {shape_of(v)} differ in batch or length")
    if steps > MAX_STEPS:
        raise UnsupportedNodeError(f"a sequence of {steps} steps is longer than the {MAX_STEPS} unrolled")
    q4 = _heads(ctx, q, q_num_heads, "query")
    k4, v4 = _heads(ctx, k, kv_num_heads, "key"), _heads(ctx, v, kv_num_heads, "value")
    key_size, value_size = shape_of(k4)[3], shape_of(v4)[3]
    if shape_of(q4)[3] != key_size:
        raise NodeError(f"query heads of size {shape_of(q4)[3]} differ from key heads of size {key_size}")
    state_shape = (batch, kv_num_heads, key_size, value_size)
    if past_state is not None and widened_from(ctx.data(past_state)) != widened_from(q):
        raise UnsupportedNodeError("a past_state of another element type than the query is not supported")
    if past_state is None:
        zeros = np.zeros(state_shape, np.float32)
        state = ctx.data(ConstantValue(f"{ctx.node.output[0]}.initial_state", zeros))
    else:
        state = ctx.data(past_state)
        if graph.element_type(state) != f32 or shape_of(state) != state_shape:
            raise NodeError(f"past_state must be float32 of shape {state_shape}, got {state.type}")
    factor = 1 / math.sqrt(key_size) if scale == 0.0 else scale
    scaled_q = ctx.emit(graph.MulOp(q4, ctx.emit(graph.ConstantOp(factor, (1,)))))
    growth = None
    if decay is not None:
        gate = _float_data(ctx, decay, "decay")
        per_head = shape_of(gate) == (batch, steps, kv_num_heads)
        if not per_head and shape_of(gate) != (batch, steps, kv_num_heads * key_size):
            raise NodeError(f"decay of shape {shape_of(gate)} must end in {kv_num_heads} or {kv_num_heads * key_size}")
        growth = ctx.emit(graph.ExpOp(_heads(ctx, gate, kv_num_heads, "decay")))
    rate = None
    if beta is not None:
        rate = _float_data(ctx, beta, "beta")
        if shape_of(rate) not in ((batch, steps, kv_num_heads), (batch, steps, 1)):
            raise NodeError(f"beta of shape {shape_of(rate)} must be ({batch}, {steps}, {kv_num_heads} or 1)")
        rate = _heads(ctx, rate, shape_of(rate)[2], "beta")

    group = q_num_heads // kv_num_heads
    outputs: list[SSAValue] = []
    for t in range(steps):
        k_t, v_t = _step(ctx, k4, t), _step(ctx, v4, t)
        if growth is not None:
            g_t = _step(ctx, growth, t)
            state = ctx.emit(graph.MulOp(state, emit_reshape(ctx, g_t, (*shape_of(g_t)[:2], shape_of(g_t)[3], 1))))
        if rate is not None:
            retrieved = ctx.emit(graph.MatMulOp(k_t, state))
            v_t = ctx.emit(graph.MulOp(_step(ctx, rate, t), ctx.emit(graph.SubOp(v_t, retrieved))))
        state = ctx.emit(graph.AddOp(state, ctx.emit(graph.MulOp(ctx.emit(graph.TransposeOp(k_t, [0, 1, 3, 2])), v_t))))
        q_t = emit_reshape(ctx, _step(ctx, scaled_q, t), (batch, kv_num_heads, group, key_size))
        read = ctx.emit(graph.MatMulOp(q_t, state))
        outputs.append(emit_reshape(ctx, read, (batch, q_num_heads, 1, value_size)))
    merged = outputs[0] if steps == 1 else ctx.emit(graph.ConcatOp(outputs, 2))
    output = ctx.emit(graph.TransposeOp(merged, [0, 2, 1, 3]))
    return emit_reshape(ctx, output, (batch, steps, q_num_heads * value_size)), state


CONVERTERS: dict[str, Converter] = {"LinearAttention": LinearAttention}
"""ONNX op type (default domain) -> converter, the linear-attention recurrence."""
