"""ONNX converters for spatial ops: depth/space rearrangement, centre crop/pad, Lp pooling and normalisation,
affine grids, image folding (Col2Im), transposed convolution and grid sampling.

Most are compositions of existing graph ops (reshape, transpose, pad, pooling, elementwise, matmul), so they get the
schedules those ops have: DepthToSpace is `reshape, transpose, reshape`; LpPool is `pow(average_pool(|x|^p) * k,
1/p)`; ConvTranspose is a batched matmul of the weights with the input (one column of kernel taps per pixel) folded
back into the image by `graph.col2im`, the lowering of ONNX Col2Im. GridSample is `graph.grid_sample`. Shape-setting
inputs (CenterCropPad's shape, AffineGrid's size) are compile-time constants (`onnx_operators.CONSTANT_OPERANDS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_nn import AveragePool
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    emit_reshape,
    normalise_axis,
)


def _constant_ints(value: Value | None, what: str) -> list[int]:
    if not isinstance(value, ConstantValue):
        raise NodeError(f"{what} must be a compile-time constant (an initializer or a Constant output)")
    return [int(v) for v in value.array.reshape(-1)]


def _constant(ctx: NodeContext, suffix: str, array: np.ndarray) -> SSAValue:
    """A compile-time table as a weight named after the node's output."""
    return ctx.data(ConstantValue(f"{ctx.node.output[0]}.{suffix}", array))


# Depth and space


def DepthToSpace(ctx: NodeContext, input: Value, *, blocksize: int | None = None, mode: str | bytes = "DCR") -> Value:
    """Move blocks of channels into space -> reshape, transpose, reshape (DCR: depth-column-row, or CRD)."""
    x = ctx.data(input)
    shape = shape_of(x)
    mode = as_text(mode)
    if len(shape) != 4 or blocksize is None or blocksize < 1 or shape[1] % (blocksize * blocksize):
        raise NodeError(f"input of shape {shape} must be 4-D with channels divisible by blocksize^2 ({blocksize})")
    if mode not in ("DCR", "CRD"):
        raise NodeError(f"attribute mode='{mode}' is not supported (expected DCR or CRD)")
    n, c, h, w = shape
    b, depth = blocksize, c // (blocksize * blocksize)
    if mode == "DCR":
        split, perm = (n, b, b, depth, h, w), (0, 3, 4, 1, 5, 2)
    else:
        split, perm = (n, depth, b, b, h, w), (0, 1, 4, 2, 5, 3)
    moved = ctx.emit(graph.TransposeOp(emit_reshape(ctx, x, split), perm))
    return emit_reshape(ctx, moved, (n, depth, h * b, w * b))


def SpaceToDepth(ctx: NodeContext, input: Value, *, blocksize: int | None = None, mode: str | bytes = "DCR") -> Value:
    """Move blocks of space into channels -> reshape, transpose, reshape (the inverse of DepthToSpace's mode)."""
    x = ctx.data(input)
    mode = as_text(mode)
    if mode not in ("DCR", "CRD"):
        raise NodeError(f"attribute mode='{mode}' is not supported (expected DCR or CRD)")
    shape = shape_of(x)
    if len(shape) != 4 or blocksize is None or blocksize < 1 or shape[2] % blocksize or shape[3] % blocksize:
        raise NodeError(f"input of shape {shape} must be 4-D with height and width divisible by {blocksize}")
    n, c, h, w = shape
    b = blocksize
    split = emit_reshape(ctx, x, (n, c, h // b, b, w // b, b))
    perm = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    moved = ctx.emit(graph.TransposeOp(split, perm))
    return emit_reshape(ctx, moved, (n, c * b * b, h // b, w // b))


def CenterCropPad(ctx: NodeContext, input_data: Value, shape: Value, *, axes: Sequence[int] | None = None) -> Value:
    """Crop or zero-pad each chosen axis about its centre to the given extent -> graph.pad (negative pads crop)."""
    x = ctx.data(input_data)
    source = shape_of(x)
    rank = len(source)
    chosen = list(range(rank)) if axes is None else [normalise_axis(a, rank) for a in axes]
    wanted = _constant_ints(shape, "input shape")
    if len(wanted) != len(chosen) or any(size < 0 for size in wanted):
        raise NodeError(f"input shape {wanted} must hold one non-negative extent per axis of {chosen}")
    pads = [0] * (2 * rank)
    for axis, size in zip(chosen, wanted):
        difference = size - source[axis]
        begin = abs(difference) // 2
        sign = 1 if difference > 0 else -1
        pads[axis], pads[rank + axis] = sign * begin, sign * (abs(difference) - begin)
    if not any(pads):
        return x
    return ctx.emit(graph.PadOp(x, pads))


# Lp norms


def LpNormalization(ctx: NodeContext, input: Value, *, axis: int = -1, p: int = 2) -> Value:
    """`x / ||x||_p` along `axis` (p 1 or 2), 0 where the norm is 0 -> reduce_l1 or reduce_l2, then div by the norm
    raised to at least the smallest normal float (a zero norm has a zero numerator)."""
    x = ctx.data(input)
    if p not in (1, 2):
        raise NodeError(f"attribute p={p} is not supported (expected 1 or 2)")
    chosen = normalise_axis(axis, len(shape_of(x)))
    reduction = graph.ReduceL1Op if p == 1 else graph.ReduceL2Op
    norm = ctx.emit(reduction(x, [chosen], keepdims=True))
    smallest = ctx.emit(graph.ConstantOp(float(np.finfo(np.float32).tiny), (1,)))
    return ctx.emit(graph.DivOp(x, ctx.emit(graph.MaxOp(norm, smallest))))


def _power(ctx: NodeContext, x: SSAValue, p: float) -> SSAValue:
    """`x^p` for non-negative `x`, multiplications for p 1 and 2."""
    if p == 1:
        return x
    if p == 2:
        return ctx.emit(graph.MulOp(x, x))
    if p == 0.5:
        return ctx.emit(graph.SqrtOp(x))
    exponent = ctx.emit(graph.ConstantOp(p, (1,)))
    return ctx.emit(graph.PowOp(x, exponent))


def LpPool(
    ctx: NodeContext,
    X: Value,
    *,
    auto_pad: str | bytes = "NOTSET",
    ceil_mode: int = 0,
    dilations: Sequence[int] | None = None,
    kernel_shape: Sequence[int] | None = None,
    p: int | float = 2,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """`(sum over the window of |x|^p)^(1/p)`, padding counting 0 -> `average_pool(|x|^p)` counting the padding,
    times the window size, to the power 1/p."""
    if ceil_mode:
        raise UnsupportedNodeError("attribute ceil_mode=1 is not supported")
    if kernel_shape is None or p <= 0:
        raise NodeError(f"attribute kernel_shape is required and p must be positive, got p={p}")
    x = ctx.data(X)
    magnitude = x if p % 2 == 0 else ctx.emit(graph.AbsOp(x))
    mean = AveragePool(
        ctx,
        _power(ctx, magnitude, float(p)),
        auto_pad=auto_pad,
        count_include_pad=1,
        dilations=dilations,
        kernel_shape=kernel_shape,
        pads=pads,
        strides=strides,
    )
    assert isinstance(mean, SSAValue)
    window = ctx.emit(graph.ConstantOp(float(math.prod(kernel_shape)), (1,)))
    return _power(ctx, ctx.emit(graph.MulOp(mean, window)), 1.0 / p)


# Affine grids


def _base_coordinates(size: int, align_corners: int) -> np.ndarray:
    """The normalised [-1, 1] coordinates of `size` pixels (their centres, or their corners aligned)."""
    if align_corners:
        return np.linspace(-1.0, 1.0, size) if size > 1 else np.array([-1.0])
    return (2.0 * np.arange(size) + 1.0) / size - 1.0


def AffineGrid(ctx: NodeContext, theta: Value, size: Value, *, align_corners: int = 0) -> Value:
    """The sampling grid of affine matrices `theta` (N, 2, 3) or (N, 3, 4) over an image of `size` -> for each
    output coordinate, theta's column times that axis' base coordinates (a small constant), summed with the
    translation column (broadcast elementwise ops over slices of theta)."""
    t = ctx.data(theta)
    matrix = shape_of(t)
    extents = _constant_ints(size, "input size")
    spatial = len(extents) - 2
    if spatial not in (2, 3) or matrix != (extents[0], spatial, spatial + 1):
        raise NodeError(f"theta of shape {matrix} does not match size {extents} (need (N, 2, 3) or (N, 3, 4))")
    n, sizes = extents[0], extents[2:]
    total: SSAValue | None = None
    # theta's column j multiplies the coordinate along image axis spatial - 1 - j (x is the last axis).
    for column in range(spatial + 1):
        picked = ctx.emit(graph.SliceOp(t, (0, 0, column), (1, 1, 1), (n, spatial, 1)))
        term = emit_reshape(ctx, picked, (n, *[1] * spatial, spatial))
        if column < spatial:
            axis = spatial - 1 - column
            shape = [1] * (spatial + 2)
            shape[1 + axis] = sizes[axis]
            base = _base_coordinates(sizes[axis], align_corners).astype(np.float32).reshape(shape)
            term = ctx.emit(graph.MulOp(term, _constant(ctx, f"base{axis}", base)))
        total = term if total is None else ctx.emit(graph.AddOp(total, term))
    assert total is not None
    return total


# Folding and transposed convolution


def _spatial_attribute(values: Sequence[int] | None, default: int, count: int, name: str) -> list[int]:
    result = [default] * count if values is None else list(values)
    if len(result) != count:
        raise NodeError(f"attribute {name} has {len(result)} values, expected {count}")
    return result


def Col2Im(
    ctx: NodeContext,
    input: Value,
    image_shape: Value,
    block_shape: Value,
    *,
    dilations: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """Sum columns of blocks back into an image -> graph.col2im (the column grid from ONNX's rule)."""
    x = ctx.data(input)
    shape = shape_of(x)
    image = _constant_ints(image_shape, "input image_shape")
    block = _constant_ints(block_shape, "input block_shape")
    spatial = len(image)
    strides = _spatial_attribute(strides, 1, spatial, "strides")
    dilations = _spatial_attribute(dilations, 1, spatial, "dilations")
    pads = _spatial_attribute(pads, 0, 2 * spatial, "pads")
    if len(block) != spatial or any(v < 1 for v in (*block, *strides, *dilations)) or any(p < 0 for p in pads):
        raise NodeError(f"block_shape {block}, strides, dilations and pads do not fit image_shape {image}")
    columns = graph.col2im_blocks(image, block, strides, pads, dilations)
    if len(shape) != 3 or shape[1] % math.prod(block) or any(c < 1 for c in columns) or shape[2] != math.prod(columns):
        raise NodeError(
            f"input of shape {shape} does not hold {math.prod(columns)} columns of blocks {block} (grid {columns})"
        )
    return ctx.emit(graph.Col2ImOp(x, image, block, columns, strides=strides, pads=pads, dilations=dilations))


def _transposed_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    *,
    strides: Sequence[int],
    dilations: Sequence[int],
    output_padding: Sequence[int],
    output_shape: Sequence[int] | None,
    pads: Sequence[int] | None,
    auto_pad: str,
) -> tuple[list[int], list[int]]:
    """The output extents and pads of a transposed convolution (as onnx's reference resolves them)."""
    spatial = len(sizes)
    natural = [
        strides[a] * (sizes[a] - 1) + output_padding[a] + (kernel[a] - 1) * dilations[a] + 1 for a in range(spatial)
    ]
    if pads is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = [sizes[a] * strides[a] for a in range(spatial)] if output_shape is None else list(output_shape)
        total = [natural[a] - out[a] for a in range(spatial)]
        small = [t // 2 for t in total]
        large = [t - t // 2 for t in total]
        return out, (small + large if auto_pad == "SAME_UPPER" else large + small)
    resolved = [0] * (2 * spatial) if pads is None else list(pads)
    if output_shape is not None:
        return list(output_shape), resolved
    return [natural[a] - resolved[a] - resolved[spatial + a] for a in range(spatial)], resolved


def ConvTranspose(
    ctx: NodeContext,
    X: Value,
    W: Value,
    B: Value | None = None,
    *,
    auto_pad: str | bytes = "NOTSET",
    dilations: Sequence[int] | None = None,
    group: int = 1,
    kernel_shape: Sequence[int] | None = None,
    output_padding: Sequence[int] | None = None,
    output_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """Transposed convolution -> per group, a batched matmul of the transposed weights (C_out/group * kernel taps,
    C_in/group) with the input's pixels (C_in/group, pixels): one column of taps per input pixel, which
    graph.col2im sums into the output image; then the bias."""
    x, w = ctx.data(X), ctx.data(W)
    xs, ws = shape_of(x), shape_of(w)
    spatial = len(xs) - 2
    if spatial < 1 or len(ws) != len(xs) or group < 1 or xs[1] != ws[0] or ws[0] % group:
        raise NodeError(
            f"X of shape {xs} and W of shape {ws} do not match group {group} (need W (C_in, C_out/group, k...))"
        )
    kernel = list(ws[2:])
    if kernel_shape is not None and list(kernel_shape) != kernel:
        raise NodeError(f"attribute kernel_shape {list(kernel_shape)} differs from W's spatial shape {kernel}")
    strides = _spatial_attribute(strides, 1, spatial, "strides")
    dilations = _spatial_attribute(dilations, 1, spatial, "dilations")
    output_padding = _spatial_attribute(output_padding, 0, spatial, "output_padding")
    if output_shape is not None and len(output_shape) == len(xs):
        output_shape = list(output_shape)[2:]
    mode = as_text(auto_pad)
    if mode not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise NodeError(f"attribute auto_pad='{mode}' is not supported")
    if pads is not None and len(pads) != 2 * spatial:
        raise NodeError(f"attribute pads has {len(pads)} values, expected {2 * spatial}")
    out, resolved = _transposed_pads(
        xs[2:],
        kernel,
        strides=strides,
        dilations=dilations,
        output_padding=output_padding,
        output_shape=None if output_shape is None else [int(v) for v in output_shape],
        pads=None if mode == "VALID" else pads,
        auto_pad=mode,
    )
    if any(p < 0 for p in resolved) or any(o < 1 for o in out):
        raise UnsupportedNodeError(f"pads {resolved} or output shape {out} are negative or empty")
    if any(v < 1 for v in (*strides, *dilations)):
        raise NodeError(f"strides {strides} and dilations {dilations} must be positive")
    n, channels_in = xs[0], xs[1]
    per_group_in, per_group_out, taps = channels_in // group, ws[1], math.prod(kernel)
    pixels = math.prod(xs[2:])
    grouped_w = emit_reshape(ctx, w, (group, per_group_in, per_group_out * taps))
    columns_w = ctx.emit(graph.TransposeOp(grouped_w, (0, 2, 1)))
    grouped_x = emit_reshape(ctx, x, (n, group, per_group_in, pixels))
    columns = ctx.emit(graph.MatMulOp(columns_w, grouped_x))
    rows = emit_reshape(ctx, columns, (n, group * per_group_out * taps, pixels))
    y = ctx.emit(graph.Col2ImOp(rows, out, kernel, xs[2:], strides=strides, pads=resolved, dilations=dilations))
    if B is None:
        return y
    bias = ctx.data(B)
    if shape_of(bias) != (group * per_group_out,):
        raise NodeError(f"B of shape {shape_of(bias)} must have shape ({group * per_group_out},)")
    return ctx.emit(graph.AddOp(y, emit_reshape(ctx, bias, (group * per_group_out, *[1] * spatial))))


# Grid sampling


def GridSample(
    ctx: NodeContext,
    X: Value,
    grid: Value,
    *,
    align_corners: int = 0,
    mode: str | bytes = "linear",
    padding_mode: str | bytes = "zeros",
) -> Value:
    """Sample X at the grid's normalised coordinates -> graph.grid_sample (opset 16's bilinear and bicubic are
    opset 20's linear and cubic)."""
    x, g = ctx.data(X), ctx.data(grid)
    xs, gs = shape_of(x), shape_of(g)
    chosen = {"linear": "bilinear", "cubic": "bicubic"}.get(as_text(mode), as_text(mode))
    padding = as_text(padding_mode)
    if chosen not in graph.GRID_SAMPLE_MODES or padding not in graph.GRID_SAMPLE_PADDING_MODES:
        raise NodeError(f"mode '{as_text(mode)}' or padding_mode '{padding}' is not supported")
    if len(xs) < 3 or len(gs) != len(xs) or gs[0] != xs[0] or gs[-1] != len(xs) - 2:
        raise NodeError(f"grid of shape {gs} does not match X of shape {xs} (need (N, out..., {len(xs) - 2}))")
    if chosen == "bicubic" and len(xs) != 4:
        raise UnsupportedNodeError("cubic mode samples 2-D images only")
    if 0 in xs or 0 in gs:
        raise UnsupportedNodeError(f"empty shapes {xs} and {gs} are not supported")
    return ctx.emit(graph.GridSampleOp(x, g, mode=chosen, padding_mode=padding, align_corners=bool(align_corners)))


CONVERTERS: dict[str, Converter] = {
    # depth and space
    "DepthToSpace": DepthToSpace,
    "SpaceToDepth": SpaceToDepth,
    "CenterCropPad": CenterCropPad,
    # Lp norms
    "LpNormalization": LpNormalization,
    "LpPool": LpPool,
    # grids
    "AffineGrid": AffineGrid,
    "GridSample": GridSample,
    # folding
    "Col2Im": Col2Im,
    "ConvTranspose": ConvTranspose,
}
"""ONNX op type (default domain) -> converter, spatial family."""
