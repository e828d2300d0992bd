"""Converters of the ONNX arithmetic with type rules of its own: Pow (integer bases to float exponents in float64,
squares and cubes by multiplying) and Mod (the divisor's or the dividend's sign)."""

from __future__ import annotations

from xdsl.dialects.builtin import f64
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
    emit_binary,
)

SQUARE_AND_CUBE = (2.0, 3.0)
"""Constant exponents a float base is raised to by multiplying (`x * x`, `x * x * x`), as ONNX Runtime does: a vector
loop of multiplies, where `powf` is one libm call per element (GPT-2's tanh GELU cubes its input)."""


def Pow(ctx: NodeContext, X: Value, Y: Value) -> Value:
    """`X ** Y` of the base's type -> graph.pow, an integer exponent of a float base cast to float32 (and of an
    integer base to the base's type). An integer base with a float exponent computes in float64, truncated back. A
    float base to a model constant 2 or 3 of one element (`SQUARE_AND_CUBE`) -> graph.mul."""
    if (power := _square_or_cube(ctx, X, Y)) is not None:
        return power
    base, exponent = ctx.data(X), ctx.data(Y)
    base_type, exponent_type = graph.element_type(base), graph.element_type(exponent)
    if base_type not in graph.NUMBERS or exponent_type not in graph.NUMBERS:
        raise UnsupportedNodeError(f"Pow of {base_type} to {exponent_type} exponents is not supported")
    if base_type in graph.INTEGERS and exponent_type in graph.FLOATS:  # in double, truncated back, as ONNX Runtime
        wide = [ctx.emit(graph.CastOp(value, f64)) for value in (base, exponent)]
        return ctx.emit(graph.CastOp(emit_binary(ctx, graph.PowOp, *wide), base_type))
    if exponent_type != base_type:
        exponent = ctx.emit(graph.CastOp(exponent, base_type))
    return emit_binary(ctx, graph.PowOp, base, exponent)


def _square_or_cube(ctx: NodeContext, X: Value, Y: Value) -> SSAValue | None:
    """`x * x` or `x * x * x` where `Y` is a constant 2 or 3 of one element that does not broadcast `X` to more
    dimensions, and `X` is a float tensor; else None."""
    if not isinstance(Y, ConstantValue) or Y.array.size != 1:
        return None
    base = ctx.data(X)
    if graph.element_type(base) not in graph.FLOATS or Y.array.ndim > len(shape_of(base)):
        return None
    exponent = float(Y.array.reshape(()))
    if exponent not in SQUARE_AND_CUBE:
        return None
    power = emit_binary(ctx, graph.MulOp, base, base)
    return emit_binary(ctx, graph.MulOp, power, base) if exponent == 3.0 else power


def Mod(ctx: NodeContext, A: Value, B: Value, *, fmod: int = 0) -> Value:
    """Remainder with the divisor's sign, or the dividend's with `fmod` -> graph.mod."""
    lhs, rhs = ctx.data(A), ctx.data(B)
    if graph.element_type(lhs) not in graph.NUMBERS:
        raise UnsupportedNodeError(f"Mod of {graph.element_type(lhs)} is not supported, only of numbers")
    if graph.broadcast_shapes(shape_of(lhs), shape_of(rhs)) is None:
        raise NodeError(f"input shapes {shape_of(lhs)} and {shape_of(rhs)} are not broadcast-compatible")
    return ctx.emit(graph.ModOp(lhs, rhs, bool(fmod)))


CONVERTERS: dict[str, Converter] = {"Pow": Pow, "Mod": Mod}
"""ONNX op type -> converter, arithmetic with type rules of its own."""
