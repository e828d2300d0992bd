"""ONNX converters for the ops on the bits of elements: BitShift, BitwiseAnd/Or/Xor/Not, BitCast, and the float
classifications IsNaN and IsInf.

Each converter is named exactly like its ONNX op, inputs positional and attributes as keyword arguments with ONNX's
defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`). Bitwise ops and shifts
take integers (the graph's `and`/`or`/`xor`/`not`, which are logical on bools, and `shift_left`/`shift_right`);
BitCast reinterprets between types of one width; IsNaN and IsInf take float32 and float64 (float16 and bfloat16 are
cast up exactly by `onnx_half`).

    BitShift(X: ui8, Y: ui8, direction="RIGHT") -> graph.shift_right %x, %y : (tensor<3xui8>, ...) -> tensor<3xui8>
"""

from __future__ import annotations

import numpy as np
from onnx import helper
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    emit_binary,
)


def _integers(ctx: NodeContext, *inputs: Value) -> list[SSAValue]:
    """The inputs as data operands, which must be integer tensors."""
    values = [ctx.data(value) for value in inputs]
    for value in values:
        if graph.element_type(value) not in graph.INTEGERS:
            raise NodeError(f"{ctx.node.op_type} takes integer tensors, got {graph.element_type(value)}")
    return values


def BitShift(ctx: NodeContext, X: Value, Y: Value, *, direction: str | bytes = "") -> Value:
    """`X << Y` or `X >> Y` (logical if unsigned, arithmetic if signed) -> graph.shift_left or graph.shift_right."""
    kinds = {"LEFT": graph.ShiftLeftOp, "RIGHT": graph.ShiftRightOp}
    if (op := kinds.get(as_text(direction))) is None:
        raise NodeError(f"attribute direction='{as_text(direction)}' must be LEFT or RIGHT")
    return emit_binary(ctx, op, *_integers(ctx, X, Y))


def BitwiseAnd(ctx: NodeContext, A: Value, B: Value) -> Value:
    """Bitwise and of integers -> graph.and."""
    return emit_binary(ctx, graph.AndOp, *_integers(ctx, A, B))


def BitwiseOr(ctx: NodeContext, A: Value, B: Value) -> Value:
    """Bitwise or of integers -> graph.or."""
    return emit_binary(ctx, graph.OrOp, *_integers(ctx, A, B))


def BitwiseXor(ctx: NodeContext, A: Value, B: Value) -> Value:
    """Bitwise exclusive or of integers -> graph.xor."""
    return emit_binary(ctx, graph.XorOp, *_integers(ctx, A, B))


def BitwiseNot(ctx: NodeContext, X: Value) -> Value:
    """Every bit of an integer flipped -> graph.not."""
    (x,) = _integers(ctx, X)
    return ctx.emit(graph.NotOp(x))


def BitCast(ctx: NodeContext, input: Value, *, to: int = 0) -> Value:
    """The input's bits as the element type `to` of the same width -> graph.bitcast."""
    x = ctx.data(input)
    source = graph.element_type(x)
    try:
        target = ELEMENT_TYPES.get(np.dtype(helper.tensor_dtype_to_np_dtype(to)))
    except (KeyError, TypeError, ValueError):
        target = None
    for element in (source, target):
        if element not in graph.BIT_CASTABLE:
            name = helper.tensor_dtype_to_string(to) if element is target else str(source)
            raise UnsupportedNodeError(f"BitCast of {name} is not supported, only of numbers, bools and 16-bit floats")
    assert target is not None
    if graph.bit_width(source) != graph.bit_width(target):
        raise NodeError(f"BitCast from {source} to {target} changes the element width")
    return ctx.emit(graph.BitCastOp(x, target))


def _floats(ctx: NodeContext, X: Value) -> SSAValue:
    x = ctx.data(X)
    if graph.element_type(x) not in graph.FLOATS:
        raise UnsupportedNodeError(f"{ctx.node.op_type} of {graph.element_type(x)} is not supported, only of floats")
    return x


def IsNaN(ctx: NodeContext, X: Value) -> Value:
    """Whether each element is NaN -> graph.is_nan."""
    return ctx.emit(graph.IsNaNOp(_floats(ctx, X)))


def IsInf(ctx: NodeContext, X: Value, *, detect_negative: int = 1, detect_positive: int = 1) -> Value:
    """Whether each element is an infinity it detects -> graph.is_inf."""
    op = graph.IsInfOp(_floats(ctx, X), positive=bool(detect_positive), negative=bool(detect_negative))
    return ctx.emit(op)


CONVERTERS: dict[str, Converter] = {
    "BitShift": BitShift,
    "BitwiseAnd": BitwiseAnd,
    "BitwiseOr": BitwiseOr,
    "BitwiseXor": BitwiseXor,
    "BitwiseNot": BitwiseNot,
    "BitCast": BitCast,
    "IsNaN": IsNaN,
    "IsInf": IsInf,
}
"""ONNX op type (default domain) -> converter, bitwise family."""
