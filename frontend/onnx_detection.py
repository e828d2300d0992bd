"""ONNX converters for detection-model ops, as compositions of graph ops: MaxUnpool, RoiAlign and DeformConv.

MaxUnpool scatters the pooled values to their flat indices in a zero tensor (`graph.scatter_elements`). RoiAlign and
DeformConv sample the input bilinearly at run-time positions (from the rois, or the offsets): the four corners of each
sample are `graph.take`s of the channels-last input at flat int64 indices computed by graph elementwise ops, weighted
by the fractional parts (0 for corners or samples outside the image, as onnx's reference). RoiAlign then averages or
takes the maximum over each bin's sampling grid; DeformConv multiplies the samples (by the mask, then) by the weights
in one `graph.matmul`, as an im2col convolution.

    %corner = graph.take %pixels, %flat {axis = 0 : i64}
        : (tensor<100x3xf32>, tensor<2x10x10xi64>) -> tensor<2x10x10x3xf32>
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    dtype_of,
    emit_reshape,
)


class _Ops:
    """Graph elementwise ops on run-time values and named constants of one node (one instance per node: the
    constants are named by its count)."""

    def __init__(self, ctx: NodeContext):
        self.ctx = ctx
        self.count = 0

    def constant(self, value: float | np.ndarray, dtype: type = np.float32) -> SSAValue:
        self.count += 1
        array = np.asarray(value, dtype)
        return self.ctx.data(ConstantValue(f"{self.ctx.node.output[0]}.c{self.count}", array))

    def __call__(self, op: type[graph.ElementwiseBinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(op(a, b))

    def where(self, condition: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.ctx.emit(graph.WhereOp(condition, x, y))

    def cast(self, value: SSAValue, element: Attribute) -> SSAValue:
        return self.ctx.emit(graph.CastOp(value, element))

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        return emit_reshape(self.ctx, value, tuple(shape))


def _axis_taps(ops: _Ops, position: SSAValue, extent: int, *, clamp_inside: bool) -> tuple[SSAValue, ...]:
    """Bilinear taps along one axis of `extent` at float `position`: (low index, high index, low weight, high
    weight), indices int64 inside [0, extent). `clamp_inside` (RoiAlign): samples in [-1, extent] are moved inside
    and weigh fully on the last pixel past it, others weigh 0; else (DeformConv) a sample weighs on the corners
    inside the image only and is 0 beyond (-1, extent)."""
    zero, last = ops.constant(0.0), ops.constant(float(extent - 1))
    valid = ops(
        graph.AndOp,
        ops(graph.GreaterOrEqualOp if clamp_inside else graph.GreaterOp, position, ops.constant(-1.0)),
        ops(graph.LessOrEqualOp if clamp_inside else graph.LessOp, position, ops.constant(float(extent))),
    )
    if clamp_inside:
        position = ops(graph.MaxOp, position, zero)
    low = ops.ctx.emit(graph.FloorOp(position))
    fraction = ops(graph.SubOp, position, low)
    if clamp_inside:
        fraction = ops.where(ops(graph.GreaterOrEqualOp, low, last), zero, fraction)
    high = ops(graph.AddOp, low, ops.constant(1.0))
    low_weight, high_weight = ops(graph.SubOp, ops.constant(1.0), fraction), fraction
    if not clamp_inside:  # a corner outside the image contributes nothing
        low_weight = ops.where(ops(graph.GreaterOrEqualOp, low, zero), low_weight, zero)
        high_weight = ops.where(ops(graph.LessOrEqualOp, high, last), high_weight, zero)
    low_weight, high_weight = (ops.where(valid, weight, zero) for weight in (low_weight, high_weight))
    low, high = (ops.cast(ops(graph.MinOp, ops(graph.MaxOp, index, zero), last), i64) for index in (low, high))
    return low, high, low_weight, high_weight


def MaxUnpool(
    ctx: NodeContext,
    X: Value,
    I: Value,  # noqa: E741 (ONNX's input name)
    output_shape: Value | None = None,
    *,
    kernel_shape: Sequence[int],
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """The inverse of MaxPool: zeros but X's values at their flat indices I -> graph.scatter_elements."""
    x, indices = ctx.data(X), ctx.data(I)
    shape = shape_of(x)
    spatial = len(shape) - 2
    if spatial < 1 or shape_of(indices) != shape or graph.element_type(indices) != i64:
        raise NodeError(f"X {x.type} and I {indices.type} must be [N, C, spatial...] float32 and int64 of one shape")
    if len(kernel_shape) != spatial:
        raise NodeError(f"kernel_shape {list(kernel_shape)} must have {spatial} values")
    steps = strides or [1] * spatial
    padding = pads or [0] * (2 * spatial)
    unpooled = (
        *shape[:2],
        *(
            (extent - 1) * step - padding[axis] - padding[axis + spatial] + kernel
            for axis, (extent, step, kernel) in enumerate(zip(shape[2:], steps, kernel_shape))
        ),
    )
    target = unpooled
    if output_shape is not None:
        if not isinstance(output_shape, ConstantValue):
            raise UnsupportedNodeError("output_shape must be a compile-time constant")
        target = tuple(int(v) for v in output_shape.array.reshape(-1))
    if len(target) != len(shape) or any(t < u for t, u in zip(target, unpooled)) or math.prod(unpooled) <= 0:
        raise NodeError(f"output shape {list(target)} does not hold the unpooled shape {list(unpooled)}")
    zero = ctx.data(ConstantValue(f"{ctx.node.output[0]}.zero", np.zeros(1, dtype_of(graph.element_type(x)))))
    flat_values = emit_reshape(ctx, x, (math.prod(shape),))
    flat_indices = emit_reshape(ctx, indices, (math.prod(shape),))
    zeros = ctx.emit(graph.ExpandOp(zero, (math.prod(unpooled),)))
    scattered = ctx.emit(graph.ScatterElementsOp(zeros, flat_indices, flat_values, 0))
    result = emit_reshape(ctx, scattered, unpooled)
    if target == unpooled:
        return result
    # As onnx's reference: the indices address the unpooled shape, which output_shape pads at the end.
    return ctx.emit(graph.PadOp(result, [0] * len(shape) + [t - u for t, u in zip(target, unpooled)]))


def _channels_last_pixels(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """[N, C, H, W] -> [N * H * W, C], so that one flat pixel index takes every channel."""
    n, c, h, w = shape_of(x)
    return emit_reshape(ctx, ctx.emit(graph.TransposeOp(x, [0, 2, 3, 1])), (n * h * w, c))


def RoiAlign(
    ctx: NodeContext,
    X: Value,
    rois: Value,
    batch_indices: Value,
    *,
    coordinate_transformation_mode: str | bytes = "half_pixel",
    mode: str | bytes = "avg",
    output_height: int = 1,
    output_width: int = 1,
    sampling_ratio: int = 0,
    spatial_scale: float = 1.0,
) -> Value:
    """Bilinear samples on a sampling_ratio^2 grid per output bin of each roi, averaged (avg) or their maximum
    (max, of the corners' weighted values, as onnx) -> graph.take of the corners and reductions: [R, C, h, w]."""
    x, boxes, batches = ctx.data(X), ctx.data(rois), ctx.data(batch_indices)
    transform, pooling = as_text(coordinate_transformation_mode), as_text(mode)
    if ctx.opset < 16:
        transform = "output_half_pixel"
    if transform not in ("half_pixel", "output_half_pixel") or pooling not in ("avg", "max"):
        raise NodeError(f"unknown coordinate_transformation_mode '{transform}' or mode '{pooling}'")
    shape = shape_of(x)
    if len(shape) != 4 or len(shape_of(boxes)) != 2 or shape_of(boxes)[1] != 4:
        raise NodeError(f"X must be [N, C, H, W] and rois [R, 4], got {x.type} and {boxes.type}")
    count = shape_of(boxes)[0]
    if shape_of(batches) != (count,) or graph.element_type(batches) != i64:
        raise NodeError(f"batch_indices must be [{count}] int64, got {batches.type}")
    if graph.element_type(x) != f32 or graph.element_type(boxes) != f32:
        raise UnsupportedNodeError(f"X and rois must be float32, got {x.type} and {boxes.type}")
    if sampling_ratio <= 0:
        raise UnsupportedNodeError("sampling_ratio 0 (a grid sized by each run-time roi) is not supported")
    _, channels, height, width = shape
    ops = _Ops(ctx)
    grid = sampling_ratio
    corners = ops(
        graph.SubOp,
        ops(graph.MulOp, boxes, ops.constant(spatial_scale)),
        ops.constant(0.5 if transform == "half_pixel" else 0.0),
    )
    axes: list[tuple[SSAValue, ...]] = []
    for column, bins, extent in ((1, output_height, height), (0, output_width, width)):
        start = ctx.emit(graph.SliceOp(corners, [0, column], [1, 1], [count, 1]))
        end = ctx.emit(graph.SliceOp(corners, [0, column + 2], [1, 1], [count, 1]))
        size = ops(graph.SubOp, end, start)
        if transform == "output_half_pixel":
            size = ops(graph.MaxOp, size, ops.constant(1.0))
        steps = (np.arange(bins)[:, None] + (np.arange(grid)[None, :] + 0.5) / grid).reshape(1, bins * grid) / bins
        positions = ops(graph.AddOp, start, ops(graph.MulOp, ops.constant(steps), size))  # [R, bins * grid]
        axes.append(_axis_taps(ops, positions, extent, clamp_inside=True))
    (y_low, y_high, y_low_w, y_high_w), (x_low, x_high, x_low_w, x_high_w) = axes
    samples_y, samples_x = output_height * grid, output_width * grid
    pixels = _channels_last_pixels(ctx, x)
    image_rows = ops(graph.MulOp, ops.reshape(batches, (count, 1)), ops.constant(height, np.int64))
    values: list[SSAValue] = []
    for y_index, y_weight in ((y_low, y_low_w), (y_high, y_high_w)):
        row = ops.reshape(
            ops(graph.MulOp, ops(graph.AddOp, image_rows, y_index), ops.constant(width, np.int64)),
            (count, samples_y, 1),
        )
        for x_index, x_weight in ((x_low, x_low_w), (x_high, x_high_w)):
            flat = ops(graph.AddOp, row, ops.reshape(x_index, (count, 1, samples_x)))
            taken = ctx.emit(graph.TakeOp(pixels, flat, 0))  # [R, samples_y, samples_x, C]
            weight = ops(
                graph.MulOp,
                ops.reshape(y_weight, (count, samples_y, 1, 1)),
                ops.reshape(x_weight, (count, 1, samples_x, 1)),
            )
            values.append(ops(graph.MulOp, taken, weight))
    if pooling == "avg":
        combined = ops(graph.AddOp, ops(graph.AddOp, values[0], values[1]), ops(graph.AddOp, values[2], values[3]))
        binned = ops.reshape(combined, (count, output_height, grid, output_width, grid, channels))
        pooled = ctx.emit(graph.ReduceMeanOp(binned, [2, 4], keepdims=False))
    else:
        combined = ops(graph.MaxOp, ops(graph.MaxOp, values[0], values[1]), ops(graph.MaxOp, values[2], values[3]))
        binned = ops.reshape(combined, (count, output_height, grid, output_width, grid, channels))
        pooled = ctx.emit(graph.ReduceMaxOp(binned, [2, 4], keepdims=False))
    return ctx.emit(graph.TransposeOp(pooled, [0, 3, 1, 2]))


def _deform_samples(
    ops: _Ops, x: SSAValue, offset: SSAValue, kernel: Sequence[int], origins: Sequence[np.ndarray]
) -> SSAValue:
    """Bilinear samples of every channel of `x` at each offset group's tap positions: [N, G, K, oH, oW, C]."""
    ctx = ops.ctx
    n, _, height, width = shape_of(x)
    _, pairs, out_h, out_w = shape_of(offset)
    groups, taps = pairs // (2 * math.prod(kernel)), math.prod(kernel)
    moves = ops.reshape(offset, (n, groups, taps, 2, out_h, out_w))
    axes: list[tuple[SSAValue, ...]] = []
    for axis, (origin, extent) in enumerate(zip(origins, (height, width))):
        move = ops.reshape(
            ctx.emit(graph.SliceOp(moves, [0, 0, 0, axis, 0, 0], [1] * 6, [n, groups, taps, 1, out_h, out_w])),
            (n, groups, taps, out_h, out_w),
        )
        axes.append(_axis_taps(ops, ops(graph.AddOp, move, ops.constant(origin)), extent, clamp_inside=False))
    (y_low, y_high, y_low_w, y_high_w), (x_low, x_high, x_low_w, x_high_w) = axes
    images = ops.constant(np.arange(n).reshape(n, 1, 1, 1, 1) * height, np.int64)
    pixels = _channels_last_pixels(ctx, x)
    total: SSAValue | None = None
    for y_index, y_weight in ((y_low, y_low_w), (y_high, y_high_w)):
        row = ops(graph.MulOp, ops(graph.AddOp, images, y_index), ops.constant(width, np.int64))
        for x_index, x_weight in ((x_low, x_low_w), (x_high, x_high_w)):
            taken = ctx.emit(graph.TakeOp(pixels, ops(graph.AddOp, row, x_index), 0))
            weight = ops.reshape(ops(graph.MulOp, y_weight, x_weight), (n, groups, taps, out_h, out_w, 1))
            weighted = ops(graph.MulOp, taken, weight)
            total = weighted if total is None else ops(graph.AddOp, total, weighted)
    assert total is not None
    return total


def DeformConv(
    ctx: NodeContext,
    X: Value,
    W: Value,
    offset: Value,
    B: Value | None = None,
    mask: Value | None = None,
    *,
    dilations: Sequence[int] | None = None,
    group: int = 1,
    kernel_shape: Sequence[int] | None = None,
    offset_group: int = 1,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """2-D deformable convolution: bilinear samples at the offset taps (times the mask), then a batched
    graph.matmul with the grouped weights (im2col), plus the bias."""
    x, weights, moves = ctx.data(X), ctx.data(W), ctx.data(offset)
    shape, weight_shape, move_shape = shape_of(x), shape_of(weights), shape_of(moves)
    if len(shape) != 4:
        raise UnsupportedNodeError(f"only 2-D DeformConv is supported, got an input of shape {shape}")
    n, channels, height, width = shape
    kernel = list(kernel_shape or weight_shape[2:])
    dilation, stride, padding = list(dilations or [1, 1]), list(strides or [1, 1]), list(pads or [0] * 4)
    out_channels = weight_shape[0]
    taps = math.prod(kernel)
    out_h = (height + padding[0] + padding[2] - (kernel[0] - 1) * dilation[0] - 1) // stride[0] + 1
    out_w = (width + padding[1] + padding[3] - (kernel[1] - 1) * dilation[1] - 1) // stride[1] + 1
    if (
        len(weight_shape) != 4
        or list(weight_shape[2:]) != kernel
        or channels != weight_shape[1] * group
        or out_channels % group
        or channels % offset_group
        or move_shape != (n, offset_group * taps * 2, out_h, out_w)
    ):
        raise NodeError(
            f"X {shape}, W {weight_shape}, offset {move_shape} do not fit group {group}, offset_group "
            f"{offset_group}, kernel {kernel}, pads {padding}, strides {stride}, dilations {dilation}"
        )
    for value in (x, weights, moves, *(ctx.data(v) for v in (B, mask) if v is not None)):
        if graph.element_type(value) != f32:
            raise UnsupportedNodeError(f"DeformConv computes on float32, got {value.type}")
    ops = _Ops(ctx)
    rows = np.arange(kernel[0]).repeat(kernel[1])[:, None] * dilation[0] + np.arange(out_h)[None, :] * stride[0]
    columns = np.tile(np.arange(kernel[1]), kernel[0])[:, None] * dilation[1] + np.arange(out_w)[None, :] * stride[1]
    origins = ((rows - padding[0])[:, :, None], (columns - padding[1])[:, None, :])  # [K, oH, 1], [K, 1, oW]
    samples = _deform_samples(ops, x, moves, kernel, origins)  # [N, G, K, oH, oW, C]
    if mask is not None:
        scale = ops.reshape(ctx.data(mask), (n, offset_group, taps, out_h, out_w, 1))
        samples = ops(graph.MulOp, samples, scale)
    if offset_group > 1:  # keep each offset group's own channels
        owned = np.zeros((1, offset_group, 1, 1, 1, offset_group, channels // offset_group), np.float32)
        owned[0, np.arange(offset_group), 0, 0, 0, np.arange(offset_group)] = 1
        split = ops.reshape(samples, (n, offset_group, taps, out_h, out_w, offset_group, channels // offset_group))
        samples = ctx.emit(graph.ReduceSumOp(ops(graph.MulOp, split, ops.constant(owned)), [1], keepdims=False))
    per_group = channels // group
    columns_value = ctx.emit(
        graph.TransposeOp(ops.reshape(samples, (n, taps, out_h, out_w, channels)), [0, 2, 3, 4, 1])
    )
    columns_value = ops.reshape(columns_value, (n * out_h * out_w, group, per_group * taps))
    columns_value = ctx.emit(graph.TransposeOp(columns_value, [1, 0, 2]))
    kernels = ops.reshape(weights, (group, out_channels // group, per_group * taps))
    product = ctx.emit(graph.MatMulOp(columns_value, ctx.emit(graph.TransposeOp(kernels, [0, 2, 1]))))
    pixels = ops.reshape(ctx.emit(graph.TransposeOp(product, [1, 0, 2])), (n, out_h, out_w, out_channels))
    result = ctx.emit(graph.TransposeOp(pixels, [0, 3, 1, 2]))
    if B is not None:
        result = ops(graph.AddOp, result, ops.reshape(ctx.data(B), (out_channels, 1, 1)))
    return result


CONVERTERS: dict[str, Converter] = {
    "MaxUnpool": MaxUnpool,
    "RoiAlign": RoiAlign,
    "DeformConv": DeformConv,
}
"""ONNX op type (default domain) -> converter."""
