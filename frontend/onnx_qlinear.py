"""ONNX converters for integer quantized ops: MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv and
DynamicQuantizeLinear.

The products are `graph.matmul_integer` / `graph.conv_integer` (i32 sums of 8-bit values less their zero points,
exact); QLinear* add the int32 bias, then requantize as ONNX Runtime (MLAS) does: the i32 sum, converted to float32,
times `(a_scale * b_scale) / y_scale` (float32, in that order), rounded half to even, plus `y_zero_point`, saturated
to the output type. An omitted zero point is a zero of the operand's type.

    %acc = graph.matmul_integer %a, %b, %az, %bz : (...) -> tensor<4x3xi32>
    %f = graph.cast %acc : tensor<4x3xi32> -> tensor<4x3xf32> ; %y = graph.mul %f, %multiplier ; graph.round ...
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, IntegerType, f32, i32
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.dialects.graph.core import VALUE_BITS_ATTR
from minimlc.frontend.onnx_nn import _window  # pyright: ignore[reportPrivateUsage]
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    dtype_of,
    emit_binary,
    emit_reshape,
)
from minimlc.frontend.onnx_quantize import quantize_scaled

EIGHT_BIT = {np.dtype(np.int8), np.dtype(np.uint8)}


def _eight_bit(ctx: NodeContext, value: Value, what: str) -> SSAValue:
    data = ctx.data(value)
    if dtype_of(graph.element_type(data)) not in EIGHT_BIT:
        element = graph.element_type(data)
        raise UnsupportedNodeError(f"{what} has element type {element}, only int8 and uint8 are supported")
    return data


def _weight(ctx: NodeContext, value: Value, what: str) -> SSAValue:
    """`_eight_bit` for a product's second operand; where it is an int8 initializer, its `graph.weight` states the
    signed bits its values fit if fewer than 8 (`VALUE_BITS_ATTR`: 7-bit weights take AVX2's `vpmaddubsw`).

        graph.weight "w" {minimlc.value_bits = 7 : i64} : tensor<8x16x3x3xi8>
    """
    data = _eight_bit(ctx, value, what)
    if isinstance(value, ConstantValue) and value.array.dtype == np.int8 and isinstance(data.owner, graph.WeightOp):
        bits = signed_bits(value.array)
        if bits < 8:
            data.owner.attributes[VALUE_BITS_ATTR] = IntegerAttr(bits, 64)
    return data


def signed_bits(values: np.ndarray) -> int:
    """The fewest bits (at least 1) of a two's complement integer that hold every one of `values`."""
    if not values.size:
        return 1
    return max(-int(values.min()) - 1, int(values.max()), 0).bit_length() + 1


def _zero_point(
    ctx: NodeContext, zero_point: Value | None, of: SSAValue, what: str, extents: Sequence[int]
) -> SSAValue:
    """`zero_point` as a rank-1 tensor of `of`'s element type (one element, or one per `extents`' extent); a zero
    when omitted."""
    element = graph.element_type(of)
    if zero_point is None:
        zero_point = ConstantValue(f"{ctx.node.output[0]}_{what}_zero_point", np.zeros((1,), dtype_of(element)))
    data = ctx.data(zero_point)
    if graph.element_type(data) != element:
        raise NodeError(f"{what}'s zero point has element type {graph.element_type(data)}, not {element}")
    shape = shape_of(data)
    if int(np.prod(shape)) == 1:
        return emit_reshape(ctx, data, (1,)) if shape != (1,) else data
    if len(shape) != 1 or shape[0] not in extents:
        raise UnsupportedNodeError(f"{what}'s zero point of shape {shape} is not supported (one element or {extents})")
    return data


def _known_zero(zero_point: Value | None, of: SSAValue, sizes: Sequence[int]) -> bool:
    """Whether `zero_point` is omitted or a constant of zeros of `of`'s type, of rank <= 1 and one of `sizes`."""
    if zero_point is None:
        return True
    if not isinstance(zero_point, ConstantValue):
        return False
    array = zero_point.array
    typed = array.dtype == dtype_of(graph.element_type(of))
    return typed and array.ndim <= 1 and array.size in sizes and not array.any()


def _static_zero(ctx: NodeContext, of: SSAValue) -> SSAValue:
    """A zero point of `of`'s type known to be 0 here (`graph.static_zero`): the integer convolution and matmul may
    then take their u8 x s8 dot-product form (graph_to_te/quantized.py)."""
    *fill, cast = graph.static_zero(graph.element_type(of))
    for op in fill:
        ctx.emit(op)
    return ctx.emit(cast)


def _float_scale(ctx: NodeContext, scale: Value, what: str) -> SSAValue:
    data = ctx.data(scale)
    if graph.element_type(data) != f32:
        raise UnsupportedNodeError(f"{what} has element type {graph.element_type(data)}, only float32 (or 16-bit)")
    return data


def _matmul_integer(ctx: NodeContext, a: SSAValue, b: SSAValue, a_zero: Value | None, b_zero: Value | None) -> SSAValue:
    a_shape, b_shape = shape_of(a), shape_of(b)
    if graph.matmul_shape(a_shape, b_shape) is None:
        raise NodeError(f"A of shape {a_shape} and B of shape {b_shape} are not matmul-compatible")
    rows = a_shape[-2:-1] if len(a_shape) > 1 else ()
    columns = b_shape[-1:] if len(b_shape) > 1 else ()
    b_zero_point = _static_zero(ctx, b) if _known_zero(b_zero, b, (1, *columns)) else None
    if b_zero_point is None:
        b_zero_point = _zero_point(ctx, b_zero, b, "b", columns)
    return ctx.emit(graph.MatMulIntegerOp(a, b, _zero_point(ctx, a_zero, a, "a", rows), b_zero_point))


def MatMulInteger(
    ctx: NodeContext, A: Value, B: Value, a_zero_point: Value | None = None, b_zero_point: Value | None = None
) -> Value:
    """`(A - a_zero_point) @ (B - b_zero_point)` in int32 -> graph.matmul_integer."""
    return _matmul_integer(ctx, _eight_bit(ctx, A, "A"), _weight(ctx, B, "B"), a_zero_point, b_zero_point)


def _conv_integer(
    ctx: NodeContext,
    x: SSAValue,
    w: SSAValue,
    x_zero: Value | None,
    w_zero: Value | None,
    *,
    auto_pad: str | bytes,
    dilations: Sequence[int] | None,
    group: int,
    kernel_shape: Sequence[int] | None,
    pads: Sequence[int] | None,
    strides: Sequence[int] | None,
) -> SSAValue:
    x_shape, w_shape = shape_of(x), shape_of(w)
    if len(w_shape) != len(x_shape) or len(x_shape) < 3:
        raise NodeError(f"x of shape {x_shape} and w of shape {w_shape} must have the same rank, 3 or more")
    if kernel_shape is not None and tuple(kernel_shape) != w_shape[2:]:
        raise NodeError(f"attribute kernel_shape {list(kernel_shape)} differs from w's spatial shape {w_shape[2:]}")
    if group < 1 or x_shape[1] != w_shape[1] * group or w_shape[0] % group:
        raise NodeError(
            f"attribute group={group} does not match x's {x_shape[1]} channels and w's shape {w_shape} "
            "(need C == w[1] * group and w[0] divisible by group)"
        )
    strides, pads, dilations = _window(
        x_shape, w_shape[2:], auto_pad=auto_pad, pads=pads, strides=strides, dilations=dilations
    )
    x_zero_point = _zero_point(ctx, x_zero, x, "x", ())
    if _known_zero(w_zero, w, (1, w_shape[0])):
        w_zero_point = _static_zero(ctx, w)
    else:
        w_zero_point = _zero_point(ctx, w_zero, w, "w", (w_shape[0],))
    return ctx.emit(
        graph.ConvIntegerOp(
            x, w, x_zero_point, w_zero_point, strides=strides, pads=pads, dilations=dilations, group=group
        )
    )


def ConvInteger(
    ctx: NodeContext,
    x: Value,
    w: Value,
    x_zero_point: Value | None = None,
    w_zero_point: Value | None = None,
    *,
    auto_pad: str | bytes = "NOTSET",
    dilations: Sequence[int] | None = None,
    group: int = 1,
    kernel_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """Convolution of `x - x_zero_point` and `w - w_zero_point` in int32 -> graph.conv_integer."""
    return _conv_integer(
        ctx,
        _eight_bit(ctx, x, "x"),
        _weight(ctx, w, "w"),
        x_zero_point,
        w_zero_point,
        auto_pad=auto_pad,
        dilations=dilations,
        group=group,
        kernel_shape=kernel_shape,
        pads=pads,
        strides=strides,
    )


def _requantize(
    ctx: NodeContext, accumulator: SSAValue, multiplier: SSAValue, y_zero_point: Value, target: Attribute
) -> SSAValue:
    """`saturate(round(float(accumulator) * multiplier) + y_zero_point)` as `target`."""
    scaled = emit_binary(ctx, graph.MulOp, ctx.emit(graph.CastOp(accumulator, f32)), multiplier)
    return quantize_scaled(ctx, scaled, ctx.data(y_zero_point), target)


def _output_zero_point(ctx: NodeContext, y_zero_point: Value) -> tuple[SSAValue, Attribute]:
    zero = ctx.data(y_zero_point)
    if int(np.prod(shape_of(zero))) != 1:
        raise UnsupportedNodeError(f"y_zero_point of shape {shape_of(zero)} is not supported (one element only)")
    target = graph.element_type(zero)
    if not isinstance(target, IntegerType) or dtype_of(target) not in EIGHT_BIT:
        raise UnsupportedNodeError(f"y_zero_point has element type {target}, only int8 and uint8 are supported")
    return zero, target


def _multiplier(ctx: NodeContext, scales: Sequence[tuple[Value, str]], y_scale: Value) -> SSAValue:
    """`(first * second) / y_scale` in float32, as ONNX Runtime computes the output scale."""
    (first, first_name), (second, second_name) = scales
    for scale, name in ((first, first_name), (second, second_name), (y_scale, "y_scale")):
        _float_scale(ctx, scale, name)
    if int(np.prod(shape_of(ctx.data(y_scale)))) != 1:
        raise UnsupportedNodeError("y_scale must have one element")
    product = emit_binary(ctx, graph.MulOp, first, second)
    return emit_binary(ctx, graph.DivOp, product, y_scale)


def QLinearMatMul(
    ctx: NodeContext,
    a: Value,
    a_scale: Value,
    a_zero_point: Value,
    b: Value,
    b_scale: Value,
    b_zero_point: Value,
    y_scale: Value,
    y_zero_point: Value,
) -> Value:
    """Quantized matmul -> graph.matmul_integer, then requantized with float32 arithmetic."""
    lhs, rhs = _eight_bit(ctx, a, "a"), _weight(ctx, b, "b")
    if int(np.prod(shape_of(ctx.data(a_scale)))) != 1:
        raise UnsupportedNodeError("a_scale must have one element (per-tensor)")
    b_scale_shape = shape_of(ctx.data(b_scale))
    if int(np.prod(b_scale_shape)) != 1 and (len(b_scale_shape) != 1 or len(shape_of(rhs)) < 2):
        raise UnsupportedNodeError(f"b_scale of shape {b_scale_shape} is not supported (one element or per column)")
    accumulator = _matmul_integer(ctx, lhs, rhs, a_zero_point, b_zero_point)
    zero, target = _output_zero_point(ctx, y_zero_point)
    multiplier = _multiplier(ctx, [(a_scale, "a_scale"), (b_scale, "b_scale")], y_scale)
    return _requantize(ctx, accumulator, multiplier, zero, target)


def QLinearConv(
    ctx: NodeContext,
    x: Value,
    x_scale: Value,
    x_zero_point: Value,
    w: Value,
    w_scale: Value,
    w_zero_point: Value,
    y_scale: Value,
    y_zero_point: Value,
    B: Value | None = None,
    *,
    auto_pad: str | bytes = "NOTSET",
    dilations: Sequence[int] | None = None,
    group: int = 1,
    kernel_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """Quantized convolution -> graph.conv_integer, plus the int32 bias, then requantized per output channel."""
    data, weight = _eight_bit(ctx, x, "x"), _weight(ctx, w, "w")
    accumulator = _conv_integer(
        ctx,
        data,
        weight,
        x_zero_point,
        w_zero_point,
        auto_pad=auto_pad,
        dilations=dilations,
        group=group,
        kernel_shape=kernel_shape,
        pads=pads,
        strides=strides,
    )
    out_channels, rank = shape_of(weight)[0], len(shape_of(data))
    per_channel = (out_channels, *(1 for _ in range(rank - 2)))
    if B is not None:
        bias = ctx.data(B)
        if graph.element_type(bias) != i32 or shape_of(bias) != (out_channels,):
            got = f"{graph.element_type(bias)} {shape_of(bias)}"
            raise NodeError(f"B must be int32 of shape ({out_channels},), got {got}")
        accumulator = emit_binary(ctx, graph.AddOp, accumulator, emit_reshape(ctx, bias, per_channel))
    if int(np.prod(shape_of(ctx.data(x_scale)))) != 1:
        raise UnsupportedNodeError("x_scale must have one element (per-tensor)")
    weight_scale = _float_scale(ctx, w_scale, "w_scale")
    scale_shape = shape_of(weight_scale)
    if int(np.prod(scale_shape)) != 1:
        if scale_shape != (out_channels,):
            raise NodeError(f"w_scale of shape {scale_shape} is neither one element nor ({out_channels},)")
        weight_scale = emit_reshape(ctx, weight_scale, per_channel)
    zero, target = _output_zero_point(ctx, y_zero_point)
    multiplier = _multiplier(ctx, [(x_scale, "x_scale"), (weight_scale, "w_scale")], y_scale)
    return _requantize(ctx, accumulator, multiplier, zero, target)


def DynamicQuantizeLinear(ctx: NodeContext, x: Value) -> tuple[Value, Value, Value]:
    """uint8 quantization with the scale and zero point of x's range (widened to hold 0), as ONNX Runtime computes
    them: graph.reduce_min/max, then float32 arithmetic (a range of zero gives scale 1)."""
    data = ctx.data(x)
    if graph.element_type(data) != f32:
        raise UnsupportedNodeError(f"x has element type {graph.element_type(data)}, only float32 (or 16-bit)")
    axes = tuple(range(len(shape_of(data))))
    zero = ctx.emit(graph.ConstantOp(0.0, ()))
    low = ctx.emit(graph.MinOp(ctx.emit(graph.ReduceMinOp(data, axes, False)), zero))
    high = ctx.emit(graph.MaxOp(ctx.emit(graph.ReduceMaxOp(data, axes, False)), zero))
    span = ctx.emit(graph.DivOp(ctx.emit(graph.SubOp(high, low)), ctx.emit(graph.ConstantOp(255.0, ()))))
    scale = ctx.emit(graph.WhereOp(ctx.emit(graph.EqualOp(high, low)), ctx.emit(graph.ConstantOp(1.0, ())), span))
    uint8 = graph.UNSIGNED[0]
    shifted = ctx.emit(graph.SubOp(zero, ctx.emit(graph.DivOp(low, scale))))
    zero_point = quantize_scaled(ctx, shifted, None, uint8)
    quantized = quantize_scaled(ctx, ctx.emit(graph.DivOp(data, scale)), zero_point, uint8)
    return quantized, scale, zero_point


CONVERTERS: dict[str, Converter] = {
    "MatMulInteger": MatMulInteger,
    "ConvInteger": ConvInteger,
    "QLinearMatMul": QLinearMatMul,
    "QLinearConv": QLinearConv,
    "DynamicQuantizeLinear": DynamicQuantizeLinear,
}
