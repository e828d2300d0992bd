"""ONNX converters for activations: `Elementwise` rows where the op is one graph op of its input and its float
attributes (ONNX defaults in the row), functions where there is more to check (Celu, Gelu, PRelu, Clip).

`CONVERTERS` lists them (merged with the other families in `onnx_operators.py`). Clip's bounds are attributes before opset 11
and optional inputs from 11 on; the input slots are suffixed `_input`.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    Converter,
    Elementwise,
    NodeContext,
    NodeError,
    Value,
    as_text,
    emit_binary,
    scalar_parameter,
)


def Celu(ctx: NodeContext, X: Value, *, alpha: float = 1.0) -> Value:
    """`max(0, X) + min(0, alpha * (exp(X / alpha) - 1))` -> graph.celu."""
    if alpha == 0:
        raise NodeError("attribute alpha=0 is not allowed (it divides x)")
    return ctx.emit(graph.CeluOp(ctx.data(X), alpha))


def Gelu(ctx: NodeContext, X: Value, *, approximate: str | bytes = "none") -> Value:
    """`X * Phi(X)`, exact or with the tanh approximation -> graph.gelu."""
    if as_text(approximate) not in ("none", "tanh"):
        raise NodeError(
            f"attribute approximate='{as_text(approximate)}' is not supported (expected none or tanh)"
        )
    return ctx.emit(graph.GeluOp(ctx.data(X), as_text(approximate)))


def PRelu(ctx: NodeContext, X: Value, slope: Value) -> Value:
    """`X < 0 ? slope * X : X`, slope broadcast to X -> graph.prelu."""
    x, s = ctx.data(X), ctx.data(slope)
    if graph.broadcast_shapes(shape_of(x), shape_of(s)) != shape_of(x):
        raise NodeError(
            f"slope of shape {shape_of(s)} does not broadcast to X's shape {shape_of(x)}"
        )
    return ctx.emit(graph.PReluOp(x, s))


def Clip(
    ctx: NodeContext,
    input: Value,
    min_input: Value | None = None,
    max_input: Value | None = None,
    *,
    min: float | None = None,
    max: float | None = None,
) -> Value:
    """Clamp to [min, max] (attributes before opset 11, optional inputs from 11) -> graph.clip; for integers and
    float64 -> graph.max with min, then graph.min with max."""
    if isinstance(input, SSAValue) and graph.element_type(input) != f32:
        result = input
        for bound, op in ((min_input, graph.MaxOp), (max_input, graph.MinOp)):
            if bound is not None:
                if math.prod(shape_of(ctx.data(bound))) != 1:
                    raise NodeError(f"Clip's bounds must hold one element, got shape {shape_of(ctx.data(bound))}")
                result = emit_binary(ctx, op, result, bound)
        return result
    low = scalar_parameter(min_input, "input min") if min is None else min
    high = scalar_parameter(max_input, "input max") if max is None else max
    if low is None and high is None:
        return input
    return ctx.emit(graph.ClipOp(ctx.data(input), low, high))


def SwiGLU(ctx: NodeContext, A: Value, B: Value, *, alpha: float = 1.0) -> Value:
    """`Swish_alpha(A) * B` of two inputs of one shape -> graph.swish, graph.mul."""
    gate, linear = ctx.data(A), ctx.data(B)
    if shape_of(gate) != shape_of(linear):
        raise NodeError(f"A of shape {shape_of(gate)} and B of shape {shape_of(linear)} must have one shape")
    return ctx.emit(graph.MulOp(ctx.emit(graph.SwishOp(gate, alpha)), linear))


CONVERTERS: dict[str, Converter] = {
    # without parameters
    "Relu": Elementwise(graph.ReluOp),
    "Sigmoid": Elementwise(graph.SigmoidOp),
    "HardSwish": Elementwise(graph.HardSwishOp),
    "Softplus": Elementwise(graph.SoftplusOp),
    "Softsign": Elementwise(graph.SoftsignOp),
    "Mish": Elementwise(graph.MishOp),
    # with float parameters (gamma becomes Selu's beta)
    "LeakyRelu": Elementwise(graph.LeakyReluOp, {"alpha": 0.01}),
    "Elu": Elementwise(graph.EluOp, {"alpha": 1.0}),
    "ThresholdedRelu": Elementwise(graph.ThresholdedReluOp, {"alpha": 1.0}),
    "Swish": Elementwise(graph.SwishOp, {"alpha": 1.0}),
    "HardSigmoid": Elementwise(graph.HardSigmoidOp, {"alpha": 0.2, "beta": 0.5}),
    "Selu": Elementwise(
        graph.SeluOp, {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}
    ),
    "Shrink": Elementwise(graph.ShrinkOp, {"lambd": 0.5, "bias": 0.0}),
    "Celu": Celu,
    "Gelu": Gelu,
    # with tensor parameters
    "PRelu": PRelu,
    "Clip": Clip,
    # gated
    "SwiGLU": SwiGLU,
}
"""ONNX op type (default domain) -> converter, activation family."""
