"""ONNX converters for linear quantization: QuantizeLinear and DequantizeLinear, as graph casts and arithmetic.

Per-tensor, per-axis (a 1-D scale along `axis`) or blocked (`block_size`: the axis split into blocks that share a
scale, by reshaping; a partial last block is refused). Dequantizing
subtracts the zero point in int32 (exact, as ONNX Runtime does) and multiplies by the scale in float32; quantizing
divides by the scale, rounds half to even, adds the zero point, clamps to the target's range and casts. float8 and
float4 targets take `x / scale` cast with Cast's rounding and `saturate`. A float16/bfloat16 scale computes in float32
(`onnx_half`).

    %d = graph.cast %x : tensor<4xui8> -> tensor<4xi32> ; %z = graph.sub %d, %zp ; ... ; %y = graph.mul %f, %scale
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import IntegerType, UnitAttr, f32, i32
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import Shape, shape_of
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_binary,
    emit_reshape,
    normalise_axis,
)


def _element(value: Value) -> Attribute:
    if isinstance(value, ConstantValue):
        if value.array.dtype not in ELEMENT_TYPES:
            raise UnsupportedNodeError(f"'{value.name}' has element type {value.array.dtype}")
        return ELEMENT_TYPES[value.array.dtype]
    return graph.element_type(value)


def _cast(ctx: NodeContext, value: Value, element: Attribute) -> SSAValue:
    data = ctx.data(value)
    return data if graph.element_type(data) == element else ctx.emit(graph.CastOp(data, element))


def _along_axis(ctx: NodeContext, value: Value, rank: int, axis: int) -> SSAValue:
    """A scale or zero point, reshaped to broadcast along `axis` of a rank-`rank` input when it is 1-D (a blocked
    one, already of the input's rank, stays)."""
    data = ctx.data(value)
    shape = shape_of(data)
    if len(shape) == 0 or shape == (1,) or (len(shape) == rank > 1):
        return data
    if len(shape) != 1:
        raise NodeError(f"a scale or zero point must be a scalar or 1-D, got shape {shape}")
    along = normalise_axis(axis, rank)
    return emit_reshape(ctx, data, tuple(shape[0] if d == along else 1 for d in range(rank)))


def _blocked(
    ctx: NodeContext, x: Value, parameters: list[Value | None], axis: int, block_size: int
) -> tuple[SSAValue, list[SSAValue | None], Shape]:
    """Blocked quantization as per-element broadcasting: `axis` of x split into (blocks, block_size), the scale's
    and zero point's (blocks) into (blocks, 1); also x's shape, to reshape the result back to."""
    data = ctx.data(x)
    shape = shape_of(data)
    along = normalise_axis(axis, len(shape))
    if block_size < 0:
        raise NodeError(f"block_size must be positive, got {block_size}")
    if shape[along] % block_size:
        raise UnsupportedNodeError(
            f"blocked quantization with a partial block (axis extent {shape[along]}, block_size {block_size})"
        )
    blocks = shape[along] // block_size
    expected = (*shape[:along], blocks, *shape[along + 1 :])
    split: list[SSAValue | None] = []
    for parameter in parameters:
        if parameter is None:
            split.append(None)
            continue
        value = ctx.data(parameter)
        if shape_of(value) != expected:
            raise NodeError(f"a blocked scale or zero point must have shape {expected}, got {shape_of(value)}")
        split.append(emit_reshape(ctx, value, (*shape[:along], blocks, 1, *shape[along + 1 :])))
    return emit_reshape(ctx, data, (*shape[:along], blocks, block_size, *shape[along + 1 :])), split, shape


def DequantizeLinear(
    ctx: NodeContext,
    x: Value,
    x_scale: Value,
    x_zero_point: Value | None = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: int = 0,
) -> Value:
    """`(x - zero_point) * scale` -> graph.cast to i32, graph.sub, graph.cast to f32, graph.mul."""
    if _element(x_scale) != f32:
        raise UnsupportedNodeError(f"a scale of {_element(x_scale)} is not supported, only float32 (or 16-bit)")
    if output_dtype and output_dtype != 1:
        raise UnsupportedNodeError(f"output_dtype {output_dtype} other than the scale's is not supported")
    if not block_size:
        zero_point = None if x_zero_point is None else ctx.data(x_zero_point)
        return _dequantize(ctx, ctx.data(x), ctx.data(x_scale), zero_point, axis)
    data, (scale, zero_point), shape = _blocked(ctx, x, [x_scale, x_zero_point], axis, block_size)
    assert scale is not None
    return emit_reshape(ctx, _dequantize(ctx, data, scale, zero_point, axis), shape)


def _dequantize(ctx: NodeContext, x: SSAValue, x_scale: SSAValue, x_zero_point: SSAValue | None, axis: int) -> SSAValue:
    rank = len(shape_of(x))
    scale = _along_axis(ctx, x_scale, rank, axis)
    element = _element(x)
    if isinstance(element, IntegerType) and element.width.data <= 32:
        shifted = _cast(ctx, x, i32)
        if x_zero_point is not None:
            zero_point = _along_axis(ctx, x_zero_point, rank, axis)
            shifted = emit_binary(ctx, graph.SubOp, shifted, _cast(ctx, zero_point, i32))
        return _exact_product(ctx, _cast(ctx, shifted, f32), scale)
    if element not in graph.STORAGE_ONLY:  # float8, float4: no zero point but 0
        raise UnsupportedNodeError(f"dequantizing {element} is not supported")
    value = _cast(ctx, x, f32)
    if x_zero_point is not None:
        value = emit_binary(ctx, graph.SubOp, value, _cast(ctx, _along_axis(ctx, x_zero_point, rank, axis), f32))
    return _exact_product(ctx, value, scale)


def _exact_product(ctx: NodeContext, value: SSAValue, scale: SSAValue) -> SSAValue:
    """`value * scale` rounded to float32 before any reader adds to it (`graph.EXACT_ATTR`), as ONNX Runtime's
    DequantizeLinear kernel stores it."""
    product = emit_binary(ctx, graph.MulOp, value, scale)
    product.owner.attributes[graph.EXACT_ATTR] = UnitAttr()
    return product


def _integer_range(element: IntegerType) -> tuple[float, float]:
    width = element.width.data
    if graph.is_unsigned(element):
        return 0.0, float((1 << width) - 1)
    return float(-(1 << (width - 1))), float((1 << (width - 1)) - 1)


def quantize_scaled(ctx: NodeContext, scaled: SSAValue, zero_point: SSAValue | None, target: Attribute) -> SSAValue:
    """`saturate(round(scaled) + zero_point)` as the integer type `target` (rounding half to even), from float32
    `scaled` and a zero point that broadcasts against it -> graph.round, graph.add, graph.clip, graph.cast."""
    assert isinstance(target, IntegerType)
    rounded = ctx.emit(graph.RoundOp(scaled))
    if zero_point is not None:
        rounded = emit_binary(ctx, graph.AddOp, rounded, _cast(ctx, zero_point, f32))
    low, high = _integer_range(target)
    return ctx.emit(graph.CastOp(ctx.emit(graph.ClipOp(rounded, low, high)), target))


def QuantizeLinear(
    ctx: NodeContext,
    x: Value,
    y_scale: Value,
    y_zero_point: Value | None = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: int = 0,
    saturate: int = 1,
    precision: int = 0,
) -> Value:
    """`saturate(round(x / scale) + zero_point)` -> graph.div, graph.round, graph.add, graph.clip, graph.cast."""
    if precision:
        raise UnsupportedNodeError(f"precision {precision} is not supported")
    if graph.element_type(ctx.data(x)) != f32 or _element(y_scale) != f32:
        raise UnsupportedNodeError("quantizing is supported from float32 (or 16-bit floats) with a float32 scale")
    if y_zero_point is not None:
        target = _element(y_zero_point)
    elif output_dtype:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(output_dtype))
        if dtype not in ELEMENT_TYPES:
            raise UnsupportedNodeError(f"quantizing to {dtype} is not supported")
        target = ELEMENT_TYPES[dtype]
    else:
        target = graph.UNSIGNED[0]  # uint8
    if isinstance(target, IntegerType) and target.width.data > 16 and target.width.data != 32:
        raise UnsupportedNodeError(f"quantizing to {target} is not supported")
    if not isinstance(target, IntegerType) and target not in graph.STORAGE_ONLY:
        raise UnsupportedNodeError(f"quantizing to {target} is not supported")
    zero_point = None if y_zero_point is None else ctx.data(y_zero_point)
    if not block_size:
        return _quantize(ctx, ctx.data(x), ctx.data(y_scale), zero_point, axis, target, saturate)
    data, (scale, zero_point), shape = _blocked(ctx, x, [y_scale, y_zero_point], axis, block_size)
    assert scale is not None
    return emit_reshape(ctx, _quantize(ctx, data, scale, zero_point, axis, target, saturate), shape)


def _quantize(
    ctx: NodeContext,
    x: SSAValue,
    y_scale: SSAValue,
    y_zero_point: SSAValue | None,
    axis: int,
    target: Attribute,
    saturate: int,
) -> SSAValue:
    rank = len(shape_of(x))
    scaled = emit_binary(ctx, graph.DivOp, x, _along_axis(ctx, y_scale, rank, axis))
    if not isinstance(target, IntegerType):
        return ctx.emit(graph.CastOp(scaled, target, saturate=bool(saturate)))
    zero_point = None if y_zero_point is None else _along_axis(ctx, y_zero_point, rank, axis)
    return quantize_scaled(ctx, scaled, zero_point, target)


CONVERTERS: dict[str, Converter] = {
    "QuantizeLinear": QuantizeLinear,
    "DequantizeLinear": DequantizeLinear,
}
