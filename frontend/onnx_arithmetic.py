"""Converters of the ONNX arithmetic with type rules of its own: Pow (integer bases to float exponents in float64)
and Mod (the divisor's or the dividend's sign)."""

from __future__ import annotations

from xdsl.dialects.builtin import f64

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import Converter, NodeContext, NodeError, UnsupportedNodeError, Value, emit_binary


def Pow(ctx: NodeContext, X: Value, Y: Value) -> Value:
    """`X ** Y` of the base's type -> graph.pow, an integer exponent of a float base cast to float32 (and of an
    integer base to the base's type). An integer base with a float exponent computes in float64, truncated back."""
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
