"""ONNX converters for the signal ops: DFT, STFT and MelWeightMatrix, as compositions of graph ops.

A DFT of length n along one axis is a real linear map of the (real, imaginary) pairs along that axis, so it is one
`graph.matmul` by a table of cosines and sines computed here in float64 and stored as a float32 weight (never an IR
constant): trimming or zero-padding to `dft_length`, the one-sided half spectrum, the inverse's 1/n and the inverse
one-sided (irfft) Hermitian extension are all columns or rows of that table. This is O(n^2) work per signal where an
FFT is O(n log n): fine for the frame and signal lengths models use these ops on (a 512-point frame is a 1 MiB
table), and the matmul gets the GEMM schedule.

    %rows = graph.reshape %x : tensor<1x10x10x1xf32> -> tensor<10x10xf32>    (axis moved last, then flattened)
    %y = graph.matmul %rows, %table : (tensor<10x10xf32>, tensor<10x20xf32>) -> tensor<10x20xf32>

STFT takes its frames with one `graph.take` of a constant [frames, frame_length] index table, multiplies them by
the run-time window and applies the DFT table to each frame. MelWeightMatrix's num_mel_bins and dft_length set its
shape (compile-time constants); its sample rate and edge frequencies are run-time scalars, so the triangular
filters are computed by graph elementwise ops in float64, as onnx's reference does.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import f32, f64, i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_reshape,
)


def _constant_int(value: Value | None, what: str, default: int | None) -> int | None:
    """A one-element integer operand set at compile time (the backend binds it: it sets the output's shape)."""
    if value is None:
        return default
    if not isinstance(value, ConstantValue):
        raise UnsupportedNodeError(f"{what} must be a compile-time constant (an initializer or a Constant output)")
    if value.array.size != 1 or not np.issubdtype(value.array.dtype, np.integer):
        raise NodeError(f"{what} must be one integer, got {value.array.dtype} of shape {value.array.shape}")
    return int(value.array.reshape(()))


def dft_table(extent: int, channels: int, length: int, *, inverse: bool, onesided: bool) -> np.ndarray:
    """The [extent * channels, bins * out_channels] float64 matrix of a DFT of `length` points applied to `extent`
    input points of `channels` (1: real, 2: real and imaginary) interleaved values: the input is trimmed or padded
    with zeros to `length`. Forward one-sided keeps length // 2 + 1 bins; inverse one-sided (irfft) reads the half
    spectrum and returns `length` real points; the others return `length` complex points."""
    points = np.arange(length, dtype=np.float64)
    if inverse and onesided:
        bins = np.arange(min(extent, length // 2 + 1))
        twice = np.where((bins == 0) | (2 * bins == length), 1.0, 2.0)  # the mirrored half counts twice
        angle = 2 * np.pi * np.outer(bins, points) / length
        table = np.zeros((extent, channels, length, 1))
        table[bins, 0, :, 0] = twice[:, None] * np.cos(angle) / length
        if channels == 2:
            table[bins, 1, :, 0] = -twice[:, None] * np.sin(angle) / length
        return table.reshape(extent * channels, length)
    bins = length // 2 + 1 if onesided else length
    used = np.arange(min(extent, length))
    sign, scale = (1.0, 1.0 / length) if inverse else (-1.0, 1.0)
    angle = sign * 2 * np.pi * np.outer(used, np.arange(bins)) / length
    cos, sin = np.cos(angle) * scale, np.sin(angle) * scale
    table = np.zeros((extent, channels, bins, 2))
    table[used, 0, :, 0], table[used, 0, :, 1] = cos, sin
    if channels == 2:  # (a + ib)(cos + i sin) = a cos - b sin + i(a sin + b cos)
        table[used, 1, :, 0], table[used, 1, :, 1] = -sin, cos
    return table.reshape(extent * channels, bins * 2)


def _transform_last_axes(ctx: NodeContext, x: SSAValue, table: np.ndarray, bins: int, channels: int) -> SSAValue:
    """`x` [..., extent, channels_in] times `table` -> [..., bins, channels]."""
    shape = shape_of(x)
    rows = emit_reshape(ctx, x, (math.prod(shape[:-2]), shape[-2] * shape[-1]))
    weight = ctx.data(ConstantValue(f"{ctx.node.output[0]}.dft", table.astype(np.float32)))
    product = ctx.emit(graph.MatMulOp(rows, weight))
    return emit_reshape(ctx, product, (*shape[:-2], bins, channels))


def _signal(ctx: NodeContext, input: Value, what: str) -> SSAValue:
    x = ctx.data(input)
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] not in (1, 2):
        raise NodeError(f"{what} must end with an axis of 1 (real) or 2 (complex) values, got shape {shape}")
    return x


def DFT(
    ctx: NodeContext,
    input: Value,
    dft_length: Value | None = None,
    axis_input: Value | None = None,
    *,
    axis: int = 1,
    inverse: int = 0,
    onesided: int = 0,
) -> Value:
    """Discrete Fourier transform along one axis -> transpose, graph.matmul by a cos/sin table, transpose."""
    x = _signal(ctx, input, "input")
    shape = shape_of(x)
    rank = len(shape)
    if ctx.opset >= 20:
        axis = _constant_int(axis_input, "axis", -2) or 0
    if not -rank <= axis < rank - 1 or axis == -1:
        raise NodeError(f"axis {axis} must name a signal axis of an input of rank {rank}")
    axis %= rank
    extent = shape[axis]
    default_length = 2 * (extent - 1) if inverse and onesided else extent
    length = _constant_int(dft_length, "dft_length", default_length) or 0
    if length < 1:
        raise NodeError(f"dft_length must be positive, got {length}")
    if onesided and not inverse and shape[-1] == 2:
        raise NodeError("a one-sided DFT needs a real signal (a last axis of 1)")
    table = dft_table(extent, shape[-1], length, inverse=bool(inverse), onesided=bool(onesided))
    bins, channels = (length, 1) if inverse and onesided else (length // 2 + 1 if onesided else length, 2)
    perm = [*(dim for dim in range(rank - 1) if dim != axis), axis, rank - 1]
    if perm != list(range(rank)):
        x = ctx.emit(graph.TransposeOp(x, perm))
    y = _transform_last_axes(ctx, x, table, bins, channels)
    if perm != list(range(rank)):
        y = ctx.emit(graph.TransposeOp(y, [perm.index(dim) for dim in range(rank)]))
    return y


def STFT(
    ctx: NodeContext,
    signal: Value,
    frame_step: Value,
    window: Value | None = None,
    frame_length: Value | None = None,
    *,
    onesided: int = 1,
) -> Value:
    """Short-time Fourier transform -> graph.take of the frames, graph.mul by the window, graph.matmul by the DFT
    table: [batch, frames, bins, 2]."""
    x = _signal(ctx, signal, "signal")
    shape = shape_of(x)
    if len(shape) != 3:
        raise NodeError(f"signal must be [batch, signal_length, 1 or 2], got shape {shape}")
    step = _constant_int(frame_step, "frame_step", None) or 0
    weights = None if window is None else ctx.data(window)
    window_length = None if weights is None else shape_of(weights)
    if window_length is not None and len(window_length) != 1:
        raise NodeError(f"window must be a vector, got shape {window_length}")
    length = _constant_int(frame_length, "frame_length", window_length[0] if window_length else shape[1]) or 0
    if window_length is not None and window_length[0] != length:
        raise NodeError(f"window has {window_length[0]} values, but frame_length is {length}")
    if step < 1 or not 1 <= length <= shape[1]:
        raise NodeError(f"frame_step {step} and frame_length {length} do not fit a signal of {shape[1]} points")
    if onesided and shape[-1] == 2:
        raise UnsupportedNodeError("a one-sided STFT of a complex signal is not supported (onnx defines it for real)")
    frames = (shape[1] - length) // step + 1
    positions = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    indices = ctx.data(ConstantValue(f"{ctx.node.output[0]}.frames", positions.astype(np.int64)))
    framed = ctx.emit(graph.TakeOp(x, indices, 1))  # [batch, frames, length, channels]
    if weights is not None:
        if graph.element_type(weights) != f32:
            raise UnsupportedNodeError(f"window must be float32, got {weights.type}")
        framed = ctx.emit(graph.MulOp(framed, emit_reshape(ctx, weights, (length, 1))))
    table = dft_table(length, shape[-1], length, inverse=False, onesided=bool(onesided))
    return _transform_last_axes(ctx, framed, table, length // 2 + 1 if onesided else length, 2)


class _Float64:
    """Elementwise float64 arithmetic on run-time scalars and constant tables."""

    def __init__(self, ctx: NodeContext):
        self.ctx = ctx
        self.count = 0

    def constant(self, value: float | np.ndarray) -> SSAValue:
        self.count += 1
        array = np.asarray(value, np.float64)
        return self.ctx.data(ConstantValue(f"{self.ctx.node.output[0]}.c{self.count}", array))

    def scalar(self, value: Value, what: str) -> SSAValue:
        """A one-element run-time operand of any number type as a float64 scalar."""
        data = self.ctx.data(value)
        if math.prod(shape_of(data)) != 1:
            raise NodeError(f"{what} must hold one element, got shape {shape_of(data)}")
        return self.ctx.emit(graph.CastOp(emit_reshape(self.ctx, data, ()), f64))

    def __call__(self, op: type[graph.ElementwiseBinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(op(a, b))


def MelWeightMatrix(
    ctx: NodeContext,
    num_mel_bins: Value,
    dft_length: Value,
    sample_rate: Value,
    lower_edge_hertz: Value,
    upper_edge_hertz: Value,
    *,
    output_datatype: int = onnx.TensorProto.FLOAT,
) -> Value:
    """Triangular mel filters [dft_length // 2 + 1, num_mel_bins] -> graph elementwise float64 ops of the run-time
    rate and edges (edges' mel values in their float32, as onnx's reference), cast to `output_datatype`."""
    bands = _constant_int(num_mel_bins, "num_mel_bins", None) or 0
    length = _constant_int(dft_length, "dft_length", None) or 0
    if bands < 1 or length < 1:
        raise NodeError(f"num_mel_bins {bands} and dft_length {length} must be positive")
    output_type = ELEMENT_TYPES.get(np.dtype(helper.tensor_dtype_to_np_dtype(output_datatype)))
    if output_type is None:
        raise UnsupportedNodeError(f"output_datatype {onnx.TensorProto.DataType.Name(output_datatype)}")
    ops = _Float64(ctx)
    edges: list[SSAValue] = []
    for edge, what in ((lower_edge_hertz, "lower_edge_hertz"), (upper_edge_hertz, "upper_edge_hertz")):
        hertz = ctx.data(edge)
        if graph.element_type(hertz) != f32 or math.prod(shape_of(hertz)) != 1:
            raise UnsupportedNodeError(f"{what} must be one float32 element, got {hertz.type}")
        hertz = emit_reshape(ctx, hertz, ())
        one_f32 = ctx.data(ConstantValue(f"{ctx.node.output[0]}.{what}.one", np.array(1, np.float32)))
        ratio = ctx.data(ConstantValue(f"{ctx.node.output[0]}.{what}.700", np.array(700, np.float32)))
        scale = ctx.data(ConstantValue(f"{ctx.node.output[0]}.{what}.scale", np.array(2595 / np.log(10), np.float32)))
        logarithm = ctx.emit(graph.LogOp(ops(graph.AddOp, one_f32, ops(graph.DivOp, hertz, ratio))))
        edges.append(ops(graph.MulOp, scale, logarithm))  # 2595 log10(1 + f / 700), in float32
    count = ctx.data(ConstantValue(f"{ctx.node.output[0]}.bands", np.array(bands + 2, np.float32)))
    step = ctx.emit(graph.CastOp(ops(graph.DivOp, ops(graph.SubOp, edges[1], edges[0]), count), f64))
    low = ctx.emit(graph.CastOp(edges[0], f64))
    rate = ops.scalar(sample_rate, "sample_rate")

    def fft_bin(first: int) -> SSAValue:
        """floor((dft_length + 1) * hertz(mel of band edge `first + i`) / sample_rate), as a [1, bands] row."""
        mel = ops(graph.AddOp, ops(graph.MulOp, ops.constant(np.arange(first, first + bands)[None, :]), step), low)
        power = ctx.emit(graph.PowOp(ops.constant(10.0), ops(graph.DivOp, mel, ops.constant(2595.0))))
        hertz = ops(graph.MulOp, ops.constant(700.0), ops(graph.SubOp, power, ops.constant(1.0)))
        scaled = ops(graph.MulOp, ops.constant(float(length + 1)), hertz)
        quotient = ops(graph.DivOp, scaled, rate)
        truncated = ctx.emit(graph.CastOp(ctx.emit(graph.CastOp(quotient, i64)), f64))
        above = ops(graph.GreaterOp, truncated, quotient)  # floor is the truncation, less one below zero
        return ops(graph.SubOp, truncated, ctx.emit(graph.WhereOp(above, ops.constant(1.0), ops.constant(0.0))))

    left, center, right = fft_bin(0), fft_bin(1), fft_bin(2)
    rows = ops.constant(np.arange(length // 2 + 1)[:, None])
    rising = ops(graph.DivOp, ops(graph.SubOp, rows, left), ops(graph.SubOp, center, left))
    falling = ops(graph.DivOp, ops(graph.SubOp, right, rows), ops(graph.SubOp, right, center))
    on_rise = ops(graph.AndOp, ops(graph.GreaterOrEqualOp, rows, left), ops(graph.LessOp, rows, center))
    on_fall = ops(graph.AndOp, ops(graph.GreaterOp, rows, center), ops(graph.LessOp, rows, right))
    zero, one = ops.constant(0.0), ops.constant(1.0)
    weights = ctx.emit(graph.WhereOp(on_fall, falling, zero))
    weights = ctx.emit(graph.WhereOp(on_rise, rising, weights))
    weights = ctx.emit(graph.WhereOp(ops(graph.EqualOp, rows, center), one, weights))
    return weights if output_type == f64 else ctx.emit(graph.CastOp(weights, output_type))


CONVERTERS: dict[str, Converter] = {
    "DFT": DFT,
    "STFT": STFT,
    "MelWeightMatrix": MelWeightMatrix,
}
"""ONNX op type (default domain) -> converter."""
