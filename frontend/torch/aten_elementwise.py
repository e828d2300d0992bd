"""ATen converters of elementwise ops: arithmetic and comparisons with torch's type promotion (Python numbers as
scalars), math functions, activations, `where`, `clamp` and dtype casts (`_to_copy`).

    CONVERTERS[torch.ops.aten.add.Tensor](ctx, node)   # -> graph.add of both operands in the result's dtype
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.frontend.torch.aten_common import (
    AtenContext,
    Converter,
    SupportCheck,
    bind,
    float32_only,
    meta,
    promoted,
)

aten = torch.ops.aten


def _binary(op: type[graph.ElementwiseBinaryOp], lhs_name: str = "self", rhs_name: str = "other") -> Converter:
    """An arithmetic op on both operands cast to the result's dtype (`alpha` scales the second, as in add/sub)."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        dtype = meta(node).dtype
        lhs, rhs = ctx.tensor(args[lhs_name], dtype), ctx.tensor(args[rhs_name], dtype)
        if args.get("alpha", 1) != 1:
            rhs = ctx.emit(graph.MulOp, rhs, ctx.filled(args["alpha"], (), dtype))
        return ctx.emit(op, lhs, rhs)

    return convert


def _comparison(op: type[graph.ElementwiseBinaryOp], negate: bool = False) -> Converter:
    """A comparison of both operands in their promoted dtype, giving bools (`negate`: its logical not)."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        dtype = promoted(args["self"], args["other"])
        result = ctx.emit(op, ctx.tensor(args["self"], dtype), ctx.tensor(args["other"], dtype))
        return ctx.emit(graph.NotOp, result) if negate else result

    return convert


def _logical(op: type[graph.ElementwiseBinaryOp]) -> Converter:
    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        return ctx.emit(op, _truth(ctx, args["self"]), _truth(ctx, args["other"]))

    return convert


def _truth(ctx: AtenContext, arg: Any) -> SSAValue:
    """A tensor as bools (nonzero is true)."""
    return ctx.tensor(arg, torch.bool)


def logical_not(ctx: AtenContext, node: fx.Node) -> SSAValue:
    return ctx.emit(graph.NotOp, _truth(ctx, ctx.args(node)["self"]))


def _unary(op: type[graph.ElementwiseUnaryOp] | None, *attributes: Any) -> Converter:
    """A unary op on the input cast to the result's dtype (an int input of a float function becomes float)."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        value = ctx.tensor(ctx.args(node)["self"], meta(node).dtype)
        return value if op is None else ctx.emit(op, value, *attributes)

    return convert


def log1p(ctx: AtenContext, node: fx.Node) -> SSAValue:
    value = ctx.tensor(ctx.args(node)["self"], meta(node).dtype)
    return ctx.emit(graph.LogOp, ctx.emit(graph.AddOp, value, ctx.filled(1.0, (), meta(node).dtype)))


def expm1(ctx: AtenContext, node: fx.Node) -> SSAValue:
    value = ctx.emit(graph.ExpOp, ctx.tensor(ctx.args(node)["self"], meta(node).dtype))
    return ctx.emit(graph.SubOp, value, ctx.filled(1.0, (), meta(node).dtype))


def divide_rounded(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """div with rounding_mode: true division (None), rounded toward zero ('trunc') or down ('floor')."""
    args = ctx.args(node)
    dtype = meta(node).dtype
    lhs, rhs = ctx.tensor(args["self"], dtype), ctx.tensor(args["other"], dtype)
    quotient = ctx.emit(graph.DivOp, lhs, rhs)
    mode = args.get("rounding_mode")
    if mode is None:
        return quotient
    if dtype.is_floating_point:
        return ctx.emit(graph.FloorOp, quotient) if mode == "floor" else _truncated(ctx, quotient)
    if mode == "trunc":  # integer division truncates
        return quotient
    remainder = ctx.emit(graph.ModOp, lhs, rhs, fmod=True)
    zero = ctx.filled(0, (), dtype)
    inexact = ctx.emit(graph.NotOp, ctx.emit(graph.EqualOp, remainder, zero))
    signs_differ = ctx.emit(graph.XorOp, ctx.emit(graph.LessOp, lhs, zero), ctx.emit(graph.LessOp, rhs, zero))
    lowered = ctx.emit(graph.SubOp, quotient, ctx.filled(1, (), dtype))
    return ctx.emit(graph.WhereOp, ctx.emit(graph.AndOp, inexact, signs_differ), lowered, quotient)


def _truncated(ctx: AtenContext, value: SSAValue) -> SSAValue:
    """Floats rounded toward zero: ceil below zero, floor elsewhere."""
    negative = ctx.emit(graph.LessOp, value, ctx.filled(0.0, (), torch.float32))
    return ctx.emit(graph.WhereOp, negative, ctx.emit(graph.CeilOp, value), ctx.emit(graph.FloorOp, value))


def trunc(ctx: AtenContext, node: fx.Node) -> SSAValue:
    return _truncated(ctx, ctx.value(ctx.args(node)["self"]))


def _remainder(fmod: bool) -> Converter:
    """remainder (the divisor's sign, as Python's %) and fmod (the dividend's sign) -> graph.mod."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        dtype = meta(node).dtype
        return ctx.emit(graph.ModOp, ctx.tensor(args["self"], dtype), ctx.tensor(args["other"], dtype), fmod)

    return convert


def rsqrt(ctx: AtenContext, node: fx.Node) -> SSAValue:
    root = ctx.emit(graph.SqrtOp, ctx.tensor(ctx.args(node)["self"], meta(node).dtype))
    return ctx.emit(graph.ReciprocalOp, root)


def gelu(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    return ctx.emit(graph.GeluOp, ctx.value(args["self"]), args.get("approximate", "none"))


def pow_tensor_scalar(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`x ** k`: squares and cubes by multiplying, other exponents by graph.pow."""
    args = ctx.args(node)
    dtype = meta(node).dtype
    base, exponent = ctx.tensor(args["self"], dtype), args["exponent"]
    if exponent in (2, 3):
        square = ctx.emit(graph.MulOp, base, base)
        return square if exponent == 2 else ctx.emit(graph.MulOp, square, base)
    if exponent == 0.5 and dtype.is_floating_point:
        return ctx.emit(graph.SqrtOp, base)
    return ctx.emit(graph.PowOp, base, ctx.filled(exponent, (), dtype))


def exp2(ctx: AtenContext, node: fx.Node) -> SSAValue:
    dtype = meta(node).dtype
    return ctx.emit(graph.PowOp, ctx.filled(2.0, (), dtype), ctx.tensor(ctx.args(node)["self"], dtype))


def pow_scalar(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    dtype = meta(node).dtype
    return ctx.emit(graph.PowOp, ctx.filled(args["self"], (), dtype), ctx.tensor(args["exponent"], dtype))


def _clip(
    low_name: str | None, high_name: str | None, low: float | None = None, high: float | None = None
) -> Converter:
    """`min(max(x, low), high)` with bounds from arguments named `low_name`/`high_name` or fixed ones: float
    bounds on a float32 tensor -> graph.clip, tensor bounds or other dtypes -> graph.max and graph.min."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        dtype = meta(node).dtype
        value = ctx.tensor(args["self"], dtype)
        bounds = [args.get(name) if name else fixed for name, fixed in ((low_name, low), (high_name, high))]
        if dtype == torch.float32 and not any(isinstance(bound, fx.Node) for bound in bounds):
            return ctx.emit(graph.ClipOp, value, *(None if bound is None else float(bound) for bound in bounds))
        for bound, op in zip(bounds, (graph.MaxOp, graph.MinOp)):
            if bound is not None:
                value = ctx.emit(op, value, ctx.tensor(bound, dtype))
        return value

    return convert


def leaky_relu(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    return ctx.emit(graph.LeakyReluOp, ctx.value(args["self"]), float(args["negative_slope"]))


def elu(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    return ctx.emit(graph.EluOp, ctx.value(args["self"]), float(args["alpha"]))


def _elu_check(node: fx.Node) -> str | None:
    args = bind(node)
    return None if args["scale"] == args["input_scale"] == 1 else "scale or input_scale other than 1"


def where(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    dtype = meta(node).dtype
    condition = _truth(ctx, args["condition"])
    return ctx.emit(graph.WhereOp, condition, ctx.tensor(args["self"], dtype), ctx.tensor(args["other"], dtype))


def to_copy(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """A dtype cast (device and layout changes are nothing here)."""
    return ctx.tensor(ctx.args(node)["self"], meta(node).dtype)


def full_like(ctx: AtenContext, node: fx.Node) -> SSAValue:
    return ctx.filled(ctx.args(node)["fill_value"], ctx.dims(node), meta(node).dtype)


CONVERTERS: dict[Any, Converter] = {
    aten.add.Tensor: _binary(graph.AddOp),
    aten.add.Scalar: _binary(graph.AddOp),
    aten.sub.Tensor: _binary(graph.SubOp),
    aten.sub.Scalar: _binary(graph.SubOp),
    aten.mul.Tensor: _binary(graph.MulOp),
    aten.mul.Scalar: _binary(graph.MulOp),
    aten.div.Tensor: _binary(graph.DivOp),
    aten.div.Scalar: _binary(graph.DivOp),
    aten.div.Tensor_mode: divide_rounded,
    aten.remainder.Tensor: _remainder(fmod=False),
    aten.remainder.Scalar: _remainder(fmod=False),
    aten.fmod.Tensor: _remainder(fmod=True),
    aten.fmod.Scalar: _remainder(fmod=True),
    aten.maximum.default: _binary(graph.MaxOp),
    aten.minimum.default: _binary(graph.MinOp),
    aten.pow.Tensor_Tensor: _binary(graph.PowOp, "self", "exponent"),
    aten.pow.Tensor_Scalar: pow_tensor_scalar,
    aten.pow.Scalar: pow_scalar,
    aten.eq.Tensor: _comparison(graph.EqualOp),
    aten.eq.Scalar: _comparison(graph.EqualOp),
    aten.ne.Tensor: _comparison(graph.EqualOp, negate=True),
    aten.ne.Scalar: _comparison(graph.EqualOp, negate=True),
    aten.lt.Tensor: _comparison(graph.LessOp),
    aten.lt.Scalar: _comparison(graph.LessOp),
    aten.le.Tensor: _comparison(graph.LessOrEqualOp),
    aten.le.Scalar: _comparison(graph.LessOrEqualOp),
    aten.gt.Tensor: _comparison(graph.GreaterOp),
    aten.gt.Scalar: _comparison(graph.GreaterOp),
    aten.ge.Tensor: _comparison(graph.GreaterOrEqualOp),
    aten.ge.Scalar: _comparison(graph.GreaterOrEqualOp),
    aten.logical_and.default: _logical(graph.AndOp),
    aten.logical_or.default: _logical(graph.OrOp),
    aten.logical_xor.default: _logical(graph.XorOp),
    aten.logical_not.default: logical_not,
    aten.bitwise_and.Tensor: _binary(graph.AndOp),
    aten.bitwise_or.Tensor: _binary(graph.OrOp),
    aten.bitwise_xor.Tensor: _binary(graph.XorOp),
    aten.bitwise_not.default: _unary(graph.NotOp),
    aten.neg.default: _unary(graph.NegOp),
    aten.abs.default: _unary(graph.AbsOp),
    aten.exp.default: _unary(graph.ExpOp),
    aten.exp2.default: exp2,
    aten.log.default: _unary(graph.LogOp),
    aten.log1p.default: log1p,
    aten.expm1.default: expm1,
    aten.sqrt.default: _unary(graph.SqrtOp),
    aten.rsqrt.default: rsqrt,
    aten.reciprocal.default: _unary(graph.ReciprocalOp),
    aten.tanh.default: _unary(graph.TanhOp),
    aten.erf.default: _unary(graph.ErfOp),
    aten.sin.default: _unary(graph.SinOp),
    aten.cos.default: _unary(graph.CosOp),
    aten.floor.default: _unary(graph.FloorOp),
    aten.ceil.default: _unary(graph.CeilOp),
    aten.round.default: _unary(graph.RoundOp),
    aten.trunc.default: trunc,
    aten.sign.default: _unary(graph.SignOp),
    aten.sigmoid.default: _unary(graph.SigmoidOp),
    aten.relu.default: _unary(graph.ReluOp),
    aten.gelu.default: gelu,
    aten.hardtanh.default: _clip("min_val", "max_val"),
    aten.clamp.default: _clip("min", "max"),
    aten.clamp.Tensor: _clip("min", "max"),
    aten.leaky_relu.default: leaky_relu,
    aten.elu.default: elu,
    aten.where.self: where,
    aten._to_copy.default: to_copy,
    aten.clone.default: _unary(None),
    aten.alias.default: _unary(None),
    aten.full_like.default: full_like,
}

FLOAT_ONLY = [
    aten.exp2.default,
    aten.trunc.default,
    aten.sign.default,
    aten.log1p.default,
    aten.expm1.default,
    aten.round.default,
    aten.relu.default,
    aten.reciprocal.default,
    aten.floor.default,
    aten.ceil.default,
    aten.sin.default,
    aten.cos.default,
    aten.exp.default,
    aten.log.default,
    aten.sqrt.default,
    aten.rsqrt.default,
    aten.tanh.default,
    aten.erf.default,
    aten.sigmoid.default,
    aten.gelu.default,
    aten.leaky_relu.default,
    aten.elu.default,
]

SUPPORT_CHECKS: dict[Any, SupportCheck] = {
    **dict.fromkeys(FLOAT_ONLY, float32_only),
    aten.elu.default: lambda node: float32_only(node) or _elu_check(node),
}
