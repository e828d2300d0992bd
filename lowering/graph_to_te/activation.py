"""graph-to-te patterns for activations: each becomes one elementwise compute tagged by the op's name.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own); helpers in `builder.py`.
An activation that is a formula of its f32 element and its float parameters is a row of `FORMULAS`; prelu reads a
broadcast slope and clip bounds that may be runtime scalars, and shrink takes every number type, so they keep
patterns of their own.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, Float32Type, FloatAttr, f32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    broadcast_indices,
    build_compute,
    constant,
    f32_constant,
    read,
    scaled,
)
from minimlc.lowering.graph_to_te.extents import Extents
from minimlc.lowering.graph_to_te.nn import scalar_read


def _param(op: graph.ElementwiseUnaryOp, name: str) -> float:
    attr = op.properties[name]
    assert isinstance(attr, FloatAttr)
    return attr.value.data


def _below_zero(x: SSAValue) -> SSAValue:
    return arith.CmpfOp(x, f32_constant(0.0), "olt").result


def _exp_minus_one(x: SSAValue) -> SSAValue:
    return arith.SubfOp(math.ExpOp(x).result, f32_constant(1.0)).result


def sigmoid(x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))`."""
    one = f32_constant(1.0)
    return arith.DivfOp(
        one, arith.AddfOp(one, math.ExpOp(arith.NegfOp(x).result).result).result
    ).result


def _hard_sigmoid(x: SSAValue, alpha: float, beta: float) -> SSAValue:
    linear = arith.AddfOp(scaled(x, alpha), f32_constant(beta)).result
    return arith.MaximumfOp(
        f32_constant(0.0), arith.MinimumfOp(f32_constant(1.0), linear).result
    ).result


def _softplus(x: SSAValue) -> SSAValue:
    """`log(1 + exp(x))` as `max(x, 0) + log(1 + exp(-|x|))`, which never overflows."""
    small = math.ExpOp(arith.NegfOp(math.AbsFOp(x).result).result).result
    tail = math.LogOp(arith.AddfOp(f32_constant(1.0), small).result).result
    return arith.AddfOp(arith.MaximumfOp(x, f32_constant(0.0)).result, tail).result


def _elu(x: SSAValue, alpha: float) -> SSAValue:
    return arith.SelectOp(_below_zero(x), scaled(_exp_minus_one(x), alpha), x).result


def _celu(x: SSAValue, alpha: float) -> SSAValue:
    negative = scaled(_exp_minus_one(scaled(x, 1.0 / alpha)), alpha)
    zero = f32_constant(0.0)
    return arith.AddfOp(
        arith.MaximumfOp(x, zero).result, arith.MinimumfOp(negative, zero).result
    ).result


def _gelu(x: SSAValue, approximate: str) -> SSAValue:
    if approximate == "tanh":
        cube = arith.MulfOp(arith.MulfOp(x, x).result, x).result
        inner = scaled(arith.AddfOp(x, scaled(cube, 0.044715)).result, pymath.sqrt(2.0 / pymath.pi))
        phi = math.TanhOp(inner).result
    else:
        phi = math.ErfOp(scaled(x, 1.0 / pymath.sqrt(2.0))).result
    half_x = scaled(x, 0.5)
    return arith.MulfOp(half_x, arith.AddfOp(f32_constant(1.0), phi).result).result


def _thresholded_relu(x: SSAValue, alpha: float) -> SSAValue:
    above = arith.CmpfOp(x, f32_constant(alpha), "ogt").result
    return arith.SelectOp(above, x, f32_constant(0.0)).result


def _softsign(x: SSAValue) -> SSAValue:
    return arith.DivfOp(x, arith.AddfOp(f32_constant(1.0), math.AbsFOp(x).result).result).result


FORMULAS: dict[
    type[graph.ElementwiseUnaryOp], Callable[[graph.ElementwiseUnaryOp, SSAValue], SSAValue]
] = {
    graph.ReluOp: lambda op, x: arith.MaximumfOp(x, f32_constant(0.0)).result,
    graph.SigmoidOp: lambda op, x: sigmoid(x),
    graph.LeakyReluOp: lambda op, x: (
        arith.SelectOp(_below_zero(x), scaled(x, _param(op, "alpha")), x).result
    ),
    graph.EluOp: lambda op, x: _elu(x, _param(op, "alpha")),
    graph.CeluOp: lambda op, x: _celu(x, _param(op, "alpha")),
    graph.ThresholdedReluOp: lambda op, x: _thresholded_relu(x, _param(op, "alpha")),
    graph.SwishOp: lambda op, x: arith.MulfOp(x, sigmoid(scaled(x, _param(op, "alpha")))).result,
    graph.HardSigmoidOp: lambda op, x: _hard_sigmoid(x, _param(op, "alpha"), _param(op, "beta")),
    graph.SeluOp: lambda op, x: scaled(_elu(x, _param(op, "alpha")), _param(op, "beta")),
    graph.GeluOp: lambda op, x: _gelu(x, op.approximate.data if isinstance(op, graph.GeluOp) else "none"),
    graph.HardSwishOp: lambda op, x: arith.MulfOp(x, _hard_sigmoid(x, 1.0 / 6.0, 0.5)).result,
    graph.SoftplusOp: lambda op, x: _softplus(x),
    graph.SoftsignOp: lambda op, x: _softsign(x),
    graph.MishOp: lambda op, x: arith.MulfOp(x, math.TanhOp(_softplus(x)).result).result,
}
"""Activation op -> its value as a function of the op (for its parameters) and the element."""


class ActivationLowering(RewritePattern):
    """Lower an activation of `FORMULAS` to one elementwise compute tagged by the op's name."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ElementwiseUnaryOp, rewriter: PatternRewriter) -> None:
        if (formula := FORMULAS.get(type(op))) is None:
            return  # a math op: graph_to_te.py lowers it

        def body(indices: Indices) -> SSAValue:
            return formula(op, read(op.input, indices))

        tag = op.name.removeprefix("graph.")
        rewriter.replace(op, build_compute(tag, Extents(op).of(op.input), body))


class ClipLowering(RewritePattern):
    """Lower clip to one compute "clip": `min(max(x, low), high)` with each bound a constant or a scalar read."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ClipOp, rewriter: PatternRewriter) -> None:
        def bound(operand: SSAValue | None, prop: FloatAttr[Float32Type] | None) -> SSAValue | None:
            if operand is not None:
                return scalar_read(operand)
            return None if prop is None else f32_constant(prop.value.data)

        def body(indices: Indices) -> SSAValue:
            value = read(op.input, indices)
            if (low := bound(op.low, op.min)) is not None:
                value = arith.MaximumfOp(value, low).result
            if (high := bound(op.high, op.max)) is not None:
                value = arith.MinimumfOp(value, high).result
            return value

        rewriter.replace(op, build_compute("clip", Extents(op).of(op.input), body))


class PReluLowering(RewritePattern):
    """Lower prelu to one compute "prelu": `x < 0 ? slope * x : x`, slope read broadcast."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.PReluOp, rewriter: PatternRewriter) -> None:
        shape = Extents(op).of(op.lhs)

        def body(indices: Indices) -> SSAValue:
            x = read(op.lhs, indices)
            slope = read(op.rhs, broadcast_indices(graph.shape_of(op.rhs), shape, indices))
            negative = arith.CmpfOp(x, f32_constant(0.0), "olt").result
            return arith.SelectOp(negative, arith.MulfOp(slope, x).result, x).result

        rewriter.replace(op, build_compute("prelu", shape, body))


def shrink(x: SSAValue, lambd: float, bias: float) -> SSAValue:
    """ONNX Shrink of one element: floats in their own type, integers in f32 then truncated back (ONNX Runtime's
    `T(float(x) + bias)`)."""
    value = x if isinstance(x.type, AnyFloat) else scalar.cast(x, f32)
    kind = value.type
    below = arith.CmpfOp(value, constant(-lambd, kind), "olt").result
    above = arith.CmpfOp(value, constant(lambd, kind), "ogt").result
    shifted_up = arith.AddfOp(value, constant(bias, kind)).result
    shifted_down = arith.SubfOp(value, constant(bias, kind)).result
    upper = arith.SelectOp(above, shifted_down, constant(0.0, kind)).result
    result = arith.SelectOp(below, shifted_up, upper).result
    return result if result.type == x.type else scalar.cast(result, x.type)


class ShrinkLowering(RewritePattern):
    """Lower shrink to one elementwise compute "shrink" on its element type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ShrinkOp, rewriter: PatternRewriter) -> None:
        lambd, bias = op.lambd.value.data, op.bias.value.data

        def body(indices: Indices) -> SSAValue:
            return shrink(read(op.input, indices), lambd, bias)

        rewriter.replace(op, build_compute("shrink", Extents(op).of(op.input), body))


PATTERNS: list[RewritePattern] = [ActivationLowering(), PReluLowering(), ClipLowering(), ShrinkLowering()]
