"""ONNX converter for CausalConvWithState (opset 27), the short causal convolution of state-space and linear
attention models, as graph ops.

The input [B, C, L] is extended on the left by the carried state [B, C, k-1] (zeros without `past_state`), a
depthwise convolution (one group per channel, no padding) of kernel k gives L outputs, SiLU is optionally applied,
and the new state is the last k-1 positions of the extended input:

    %padded = graph.concat %past_state, %input {axis = 2}             : [B, C, k-1 + L]
    %conv = graph.conv %padded, %weight, %bias {group = C, pads = 0}  : [B, C, L]
    %output = graph.swish %conv {alpha = 1.0}                         (activation "silu" or "swish")
    %present_state = graph.slice %padded [.., L : L + k-1]

With k = 1 the state is empty: `present_state` is an honest [B, C, 0] constant.
"""

from __future__ import annotations

import numpy as np

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
    dtype_of,
)

_ACTIVATIONS = ("none", "silu", "swish")


def CausalConvWithState(
    ctx: NodeContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,
    past_state: Value | None = None,
    *,
    activation: str | bytes = "none",
) -> tuple[Value, Value]:
    """Depthwise causal 1-D convolution carrying its left context -> graph concat, conv, swish, slice (module
    docstring)."""
    x, w = ctx.data(input), ctx.data(weight)
    kind = as_text(activation)
    if kind not in _ACTIVATIONS:
        raise UnsupportedNodeError(f"activation '{kind}' is not supported ({', '.join(_ACTIVATIONS)})")
    if len(shape_of(x)) != 3:
        raise NodeError(f"input must be rank 3 (batch, channels, length), got shape {shape_of(x)}")
    batch, channels, length = shape_of(x)
    if len(shape_of(w)) != 3 or shape_of(w)[:2] != (channels, 1) or shape_of(w)[2] < 1:
        raise NodeError(f"weight must have shape ({channels}, 1, k), got {shape_of(w)}")
    taps = shape_of(w)[2]
    carried = (batch, channels, taps - 1)
    b = None if bias is None else ctx.data(bias)
    if b is not None and shape_of(b) != (channels,):
        raise NodeError(f"bias must have shape ({channels},), got {shape_of(b)}")
    if past_state is None:
        padded = ctx.emit(graph.PadOp(x, [0, 0, taps - 1, 0, 0, 0])) if taps > 1 else x
    else:
        state = ctx.data(past_state)
        if shape_of(state) != carried or graph.element_type(state) != graph.element_type(x):
            raise NodeError(f"past_state must be {graph.element_type(x)} of shape {carried}, got {state.type}")
        padded = ctx.emit(graph.ConcatOp([state, x], 2)) if taps > 1 else x
    conv = ctx.emit(graph.ConvOp(padded, w, b, strides=[1], pads=[0, 0], dilations=[1], group=channels))
    output = ctx.emit(graph.SwishOp(conv, 1.0)) if kind in ("silu", "swish") else conv
    if taps == 1:
        empty = np.zeros(carried, dtype_of(widened_from(x) or graph.element_type(x)))
        return output, ConstantValue(f"{ctx.node.output[0]}.present_state", empty)
    present = ctx.emit(graph.SliceOp(padded, [0, 0, length], [1, 1, 1], carried))
    return output, present


CONVERTERS: dict[str, Converter] = {"CausalConvWithState": CausalConvWithState}
"""ONNX op type (default domain) -> converter, the causal convolution with carried state."""
