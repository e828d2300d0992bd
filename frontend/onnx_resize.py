"""ONNX converters for Resize and Upsample: separable interpolation along each resized axis.

Scales, sizes and roi are compile-time constants (`onnx_operators.CONSTANT_OPERANDS`), so where each output position reads
from is known at import time. Each resized axis becomes, for each tap t of the interpolation kernel (1 for nearest,
2 for linear, 4 for cubic, more with antialias when downsampling),

    %g_t = graph.take %x, %index_t {axis = a}         // index_t: int64 table [out]
    %y   = sum_t graph.mul %g_t, %weight_t             // weight_t: float32 table [out, 1, ...]

with the tables as weights (their size is the axis' output extent, not the tensor's). te-inline folds the takes,
products and sums into one elementwise kernel per axis. The tables follow ONNX's rules (every
coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside, antialias, keep_aspect_ratio_policy,
axes, tf_crop_and_resize's roi and extrapolation_value); computing them in float64 matches onnx's reference, which
also interpolates one axis at a time. Resize-10 and Upsample use asymmetric coordinates and ONNX Runtime's
"simple" nearest rounding (floor when upsampling, ceil when downsampling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
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
    as_text,
    normalise_axis,
)

COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


@dataclass(frozen=True)
class Interpolation:
    """How one node interpolates: the attributes that shape its tables."""

    mode: str
    coordinates: str
    nearest: str = "round_prefer_floor"
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False
    extrapolation: float = 0.0


@dataclass(frozen=True)
class AxisTaps:
    """One axis' interpolation: per output position, the input indices of its taps and their weights, and whether
    it lies outside the roi (tf_crop_and_resize: it takes the extrapolation value)."""

    indices: np.ndarray
    weights: np.ndarray
    outside: np.ndarray


def _source_coordinates(how: Interpolation, size: int, out: int, scale: float, roi: tuple[float, float]) -> np.ndarray:
    """The input coordinate each output position maps to (ONNX coordinate_transformation_mode)."""
    y = np.arange(out, dtype=np.float64)
    width = scale * size
    mode = how.coordinates
    if mode == "align_corners":
        return np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if width == 1:
            return np.full(out, (end - start) * (size - 1) / 2) + start * (size - 1)
        return y * (end - start) * (size - 1) / (width - 1) + start * (size - 1)
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    offset = size / 2 * (1 - out / width)  # half_pixel_symmetric
    return offset + (y + 0.5) / scale - 0.5


def _cubic(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter `a`."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def _coefficients(how: Interpolation, ratios: np.ndarray, scale: float) -> np.ndarray:
    """Per output position, the weights of its taps given the fractional part `ratios` in (0, 1]."""
    r = ratios[:, None]
    if how.mode == "nearest":
        rule = how.nearest
        if rule == "simple":
            rule = "floor" if scale >= 1 else "ceil"
        right = {
            "round_prefer_floor": r > 0.5,
            "round_prefer_ceil": r >= 0.5,
            "floor": r == 1,
            "ceil": np.ones_like(r, dtype=bool),
        }[rule] | (r == 1)
        return np.concatenate([~right, right], axis=1).astype(np.float64)
    shrink = min(scale, 1.0) if how.antialias else 1.0
    if how.mode == "linear":
        start = int(np.floor(-1 / shrink) + 1) if how.antialias else 0
        taps = np.arange(start, 2 - start)
        coefficients = np.clip(1 - np.abs((taps[None, :] - r) * shrink), 0, 1)
    else:
        start = int(np.floor(-2 / shrink) + 1) if how.antialias else -1
        taps = np.arange(start, 2 - start)
        coefficients = _cubic(shrink * (taps[None, :] - r), how.cubic_a)
    if how.antialias:
        coefficients = coefficients / coefficients.sum(axis=1, keepdims=True)
    return coefficients


def axis_taps(how: Interpolation, size: int, out: int, scale: float, roi: tuple[float, float] = (0.0, 1.0)) -> AxisTaps:
    """The taps of resizing an axis of `size` to `out` positions at `scale` (as onnx's reference resolves them)."""
    x = _source_coordinates(how, size, out, scale, roi)
    floor = np.floor(x)
    ratios = np.where(x == floor, 1.0, x - floor)
    coefficients = _coefficients(how, ratios, scale)
    n = coefficients.shape[1]
    pad = -(-n // 2)
    padded = x + pad
    p = np.floor(padded).astype(np.int64)
    fraction = padded - p
    if n % 2 == 0:
        offset = np.where(fraction == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = np.where(fraction <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    indices = (p + offset)[:, None] + np.arange(n)[None, :] - pad
    if how.exclude_outside:
        coefficients = np.where((indices < 0) | (indices >= size), 0.0, coefficients)
        total = coefficients.sum(axis=1, keepdims=True)
        coefficients = coefficients / np.where(total == 0, 1.0, total)
    outside = (x < 0) | (x > size - 1) if how.coordinates == "tf_crop_and_resize" else np.zeros(out, dtype=bool)
    return AxisTaps(np.clip(indices, 0, size - 1), coefficients, outside)


def _interpolate_axis(ctx: NodeContext, x: SSAValue, axis: int, taps: AxisTaps, how: Interpolation) -> SSAValue:
    """`x` resized along `axis`: the weighted sum of one take per tap (one take for nearest)."""
    out, n = taps.weights.shape
    rank = len(shape_of(x))
    column = (out, *[1] * (rank - 1 - axis))
    name = f"{ctx.node.output[0]}.resize{axis}"

    def table(suffix: str, array: np.ndarray) -> SSAValue:
        return ctx.data(ConstantValue(f"{name}_{suffix}", array))

    if how.mode == "nearest":
        chosen = taps.indices[np.arange(out), np.argmax(taps.weights, axis=1)]
        result = ctx.emit(graph.TakeOp(x, table("index", chosen.astype(np.int64)), axis))
    else:
        result = None
        for t in range(n):
            if not taps.weights[:, t].any():
                continue
            picked = ctx.emit(graph.TakeOp(x, table(f"index{t}", taps.indices[:, t].astype(np.int64)), axis))
            weight = table(f"weight{t}", taps.weights[:, t].astype(np.float32).reshape(column))
            term = ctx.emit(graph.MulOp(picked, weight))
            result = term if result is None else ctx.emit(graph.AddOp(result, term))
        assert result is not None
    if taps.outside.any():
        inside = (~taps.outside).astype(np.float32).reshape(column)
        fill = (taps.outside * np.float32(how.extrapolation)).astype(np.float32).reshape(column)
        kept = ctx.emit(graph.MulOp(result, table("inside", inside)))
        result = ctx.emit(graph.AddOp(kept, table("fill", fill)))
    return result


def _constant_floats(value: Value | None, what: str) -> np.ndarray | None:
    if value is None:
        return None
    if not isinstance(value, ConstantValue):
        raise NodeError(f"{what} must be a compile-time constant (an initializer or a Constant output)")
    return value.array.reshape(-1)


def emit_resize(
    ctx: NodeContext,
    x: SSAValue,
    how: Interpolation,
    *,
    scales: np.ndarray | None,
    sizes: np.ndarray | None,
    axes: Sequence[int] | None = None,
    roi: np.ndarray | None = None,
    keep_aspect_ratio_policy: str = "stretch",
) -> SSAValue:
    """`x` resized by `scales` or to `sizes` along `axes` (all by default), one axis after another."""
    shape = shape_of(x)
    rank = len(shape)
    chosen = list(range(rank)) if axes is None else [normalise_axis(a, rank) for a in axes]
    if len(set(chosen)) != len(chosen):
        raise NodeError(f"attribute axes {list(axes or [])} repeats an axis")
    given = scales if sizes is None else sizes
    if given is None or len(given) != len(chosen):
        raise NodeError(f"exactly one of scales and sizes must be given, with one value per axis of {chosen}")
    factors = [1.0] * rank
    extents = list(shape)
    if sizes is None:
        assert scales is not None
        for axis, scale in zip(chosen, scales):
            if not scale > 0:
                raise NodeError(f"scales must be positive, got {list(scales)}")
            factors[axis] = float(scale)
            extents[axis] = int(np.float64(scale) * shape[axis])
    else:
        wanted = [int(s) for s in sizes]
        for axis, size in zip(chosen, wanted):
            factors[axis], extents[axis] = size / shape[axis], size
        if keep_aspect_ratio_policy != "stretch":
            if keep_aspect_ratio_policy not in ("not_larger", "not_smaller"):
                raise NodeError(f"attribute keep_aspect_ratio_policy='{keep_aspect_ratio_policy}' is not supported")
            pick = min if keep_aspect_ratio_policy == "not_larger" else max
            scale = pick(factors[axis] for axis in chosen)
            for axis in chosen:
                factors[axis], extents[axis] = scale, int(scale * shape[axis] + 0.5)
    bounds = [(0.0, 1.0)] * rank
    if how.coordinates == "tf_crop_and_resize":
        if roi is None or len(roi) != 2 * len(chosen):
            raise NodeError(f"tf_crop_and_resize needs a constant roi of {2 * len(chosen)} values")
        for i, axis in enumerate(chosen):
            bounds[axis] = (float(roi[i]), float(roi[len(chosen) + i]))
    if any(size < 1 for size in extents) or 0 in shape:
        raise UnsupportedNodeError(f"resizing {shape} to an empty or from an empty shape {extents} is not supported")
    result = x
    for axis in chosen:
        if np.isclose(factors[axis], 1.0) and extents[axis] == shape[axis] and bounds[axis] == (0.0, 1.0):
            continue
        taps = axis_taps(how, shape[axis], extents[axis], factors[axis], bounds[axis])
        result = _interpolate_axis(ctx, result, axis, taps, how)
    return result


def Resize(
    ctx: NodeContext,
    X: Value,
    roi: Value | None = None,
    scales: Value | None = None,
    sizes: Value | None = None,
    *,
    antialias: int = 0,
    axes: Sequence[int] | None = None,
    coordinate_transformation_mode: str | bytes = "half_pixel",
    cubic_coeff_a: float = -0.75,
    exclude_outside: int = 0,
    extrapolation_value: float = 0.0,
    keep_aspect_ratio_policy: str | bytes = "stretch",
    mode: str | bytes = "nearest",
    nearest_mode: str | bytes = "round_prefer_floor",
) -> Value:
    """Resize by constant scales or to constant sizes -> per resized axis, takes at constant index tables and a
    weighted sum (see the module docstring)."""
    if ctx.opset < 11:  # Resize-10: (X, scales), asymmetric coordinates
        scales, roi = roi, None
        coordinate_transformation_mode, nearest_mode = "asymmetric", "simple"
    how = Interpolation(
        mode=as_text(mode),
        coordinates=as_text(coordinate_transformation_mode),
        nearest=as_text(nearest_mode),
        cubic_a=float(cubic_coeff_a),
        exclude_outside=bool(exclude_outside),
        antialias=bool(antialias),
        extrapolation=float(extrapolation_value),
    )
    if how.mode not in ("nearest", "linear", "cubic"):
        raise NodeError(f"attribute mode='{how.mode}' is not supported (expected nearest, linear or cubic)")
    if how.coordinates not in COORDINATE_MODES or how.nearest not in NEAREST_MODES:
        raise NodeError(
            f"coordinate_transformation_mode='{how.coordinates}' or nearest_mode='{how.nearest}' is not supported"
        )
    if how.antialias and how.mode == "nearest":
        raise NodeError("antialias applies to linear and cubic modes only")
    scale_values = _constant_floats(scales, "input scales")
    size_values = _constant_floats(sizes, "input sizes")
    if scale_values is not None and scale_values.size == 0:
        scale_values = None
    if size_values is not None and size_values.size == 0:
        size_values = None
    roi_values = _constant_floats(roi, "input roi")
    return emit_resize(
        ctx,
        ctx.data(X),
        how,
        scales=scale_values,
        sizes=size_values,
        axes=axes,
        roi=roi_values,
        keep_aspect_ratio_policy=as_text(keep_aspect_ratio_policy),
    )


def Upsample(
    ctx: NodeContext,
    X: Value,
    scales_input: Value | None = None,
    *,
    mode: str | bytes = "nearest",
    scales: Sequence[float] | None = None,
) -> Value:
    """Upsample (opset 7: scales attribute; 9: input) -> Resize with asymmetric coordinates."""
    values = _constant_floats(scales_input, "input scales") if scales_input is not None else None
    if values is None:
        if scales is None:
            raise NodeError("scales (attribute or input) is required")
        values = np.asarray(scales, dtype=np.float32)
    how = Interpolation(mode=as_text(mode), coordinates="asymmetric", nearest="simple")
    if how.mode not in ("nearest", "linear"):
        raise NodeError(f"attribute mode='{how.mode}' is not supported (expected nearest or linear)")
    return emit_resize(ctx, ctx.data(X), how, scales=values, sizes=None)


CONVERTERS: dict[str, Converter] = {
    "Resize": Resize,
    "Upsample": Upsample,
}
"""ONNX op type (default domain) -> converter, resizing."""
