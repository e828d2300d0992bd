"""graph-to-te patterns for neural-network ops: convolution, pooling, normalisation, padding.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own); helpers in `builder.py`.

Windowed ops read their input at `out * stride + tap * dilation - pad_begin` along each spatial axis. Where that
coordinate can leave the input (decided statically per axis and side), the body clamps the index before the
`te.read`, so no load is ever out of bounds, and selects the padding value instead of the loaded one. Tags:
"conv" (one sum over (c_in / group, kernel...)), "depthwise_conv" when group == C_in == C_out > 1 (same
structure, extent-1 channel axis), "conv_bias", "max_pool", "max_pool_indices" (i64) /
"max_pool_indices_column_major", "avg_pool_sum" / "avg_pool_count" / "avg_pool",
"lrn_square_sum" / "lrn", "batch_norm", "pad". Softmax-like ops and normalisations over statistics are in
`normalization.py`.

Convolution, pooling, batch normalisation and padding take a run-time batch (axis 0; the graph verifiers keep the
other axes static): the computes get it as their size operand, and te-level conv passes keep it an outer axis:

    %n = te.dim %x[0] : tensor<?x8x10x10xf32>
    %y = te.compute "conv" (%i0, %i1, %i2, %i3) [%n] reduce sum (%k4 : 8, %k5 : 3, %k6 : 3) -> tensor<?x16x8x8xf32>
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DYNAMIC_INDEX, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    build_compute,
    f32_constant,
    i64_constant,
    index_constant,
    linear_index,
    read,
)
from minimlc.lowering.graph_to_te.extents import Extent, Extents, RunTimeDimensionError

INT64_MAX = (1 << 63) - 1


def batched_shape(op: graph.GraphOp, value: SSAValue) -> list[Extent]:
    """The shape of `value`, a tensor of `op` whose only run-time dimension may be its batch (axis 0): that one as
    its `index` extent (from `op`'s input), the rest static."""
    shape = graph.shape_of(value)
    if DYNAMIC_INDEX in shape[1:]:
        raise RunTimeDimensionError("takes a run-time batch (axis 0) only, its other dimensions static")
    if shape and shape[0] == DYNAMIC_INDEX:
        return [Extents(op).at(op.operands[0], 0), *shape[1:]]
    return list(shape)


def _affine(index: SSAValue, scale: int, offset: int) -> SSAValue:
    """`index * scale + offset` on index values, skipping identities."""
    value = index if scale == 1 else arith.MuliOp(index, index_constant(scale)).result
    if offset > 0:
        return arith.AddiOp(value, index_constant(offset)).result
    if offset < 0:
        return arith.SubiOp(value, index_constant(-offset)).result
    return value


def _clamp(coordinate: SSAValue, lowest: int, highest: int, size: int) -> SSAValue:
    """`coordinate` (statically within [lowest, highest]) clamped into [0, size)."""
    if lowest < 0:
        coordinate = arith.MaxSIOp(coordinate, index_constant(0)).result
    if highest >= size:
        coordinate = arith.MinSIOp(coordinate, index_constant(size - 1)).result
    return coordinate


class _Guard:
    """Collects the condition that every coordinate of a read lies in its axis."""

    def __init__(self) -> None:
        self.valid: SSAValue | None = None

    def check(self, coordinate: SSAValue, lowest: int, highest: int, size: int) -> None:
        """Require `coordinate` (statically within [lowest, highest]) to lie in [0, size)."""
        if lowest < 0:
            self._require(arith.CmpiOp(coordinate, index_constant(0), "sge").result)
        if highest >= size:
            self._require(arith.CmpiOp(coordinate, index_constant(size), "slt").result)

    def clamp(self, coordinate: SSAValue, lowest: int, highest: int, size: int) -> SSAValue:
        """Require `coordinate` to lie in [0, size) and return it clamped there, safe to read at."""
        self.check(coordinate, lowest, highest, size)
        return _clamp(coordinate, lowest, highest, size)

    def _require(self, condition: SSAValue) -> None:
        self.valid = condition if self.valid is None else arith.AndIOp(self.valid, condition).result

    def select(self, value: SSAValue, fill: float | SSAValue) -> SSAValue:
        """`value` where every coordinate was in bounds, else `fill`."""
        if self.valid is None:
            return value
        fill_value = fill if isinstance(fill, SSAValue) else f32_constant(fill)
        return arith.SelectOp(self.valid, value, fill_value).result


def _window_coordinates(
    tensor: SSAValue,
    outputs: Indices,
    taps: Indices,
    op: graph.ConvOp | graph.PoolOp | graph.MaxPoolIndicesOp,
    kernel: Sequence[int],
) -> tuple[_Guard, list[SSAValue]]:
    """The window coordinates along `tensor`'s spatial axes (its last ones), clamped into them, and the guard
    telling whether they all lie inside (not in the padding)."""
    spatial = len(kernel)
    sizes = graph.shape_of(tensor)[-spatial:]
    out_sizes = graph.shape_of(op.result)[2:]
    strides, pads, dilations = (
        op.strides.get_values(),
        op.pads.get_values(),
        op.dilations.get_values(),
    )
    guard = _Guard()
    coordinates: list[SSAValue] = []
    for axis, size in enumerate(sizes):
        begin = pads[axis]
        coordinate = arith.AddiOp(
            _affine(outputs[axis], strides[axis], -begin), _affine(taps[axis], dilations[axis], 0)
        ).result
        highest = (out_sizes[axis] - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis] - begin
        coordinates.append(guard.clamp(coordinate, -begin, highest, size))
    return guard, coordinates


def _window_read(
    tensor: SSAValue,
    leading: Sequence[SSAValue],
    outputs: Indices,
    taps: Indices,
    op: graph.ConvOp | graph.PoolOp,
    kernel: Sequence[int],
    fill: float,
) -> SSAValue:
    """`tensor[leading..., window coordinates...]`, or `fill` where the window lies in the padding."""
    guard, coordinates = _window_coordinates(tensor, outputs, taps, op, kernel)
    return guard.select(read(tensor, [*leading, *coordinates]), fill)


class ConvLowering(RewritePattern):
    """Lower conv to a sum reduction "conv" (or "depthwise_conv") and, given a bias, an elementwise "conv_bias"; a
    conv marked for bfloat16 products takes `bfloat16_conv`'s form."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        from minimlc.lowering.graph_to_te import bfloat16_conv  # it builds on this module's helpers

        if bfloat16_conv.takes_bf16_products(op):
            rewriter.replace(op, bfloat16_conv.bf16_conv(op))
            return
        x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), batched_shape(op, op.result)
        spatial = len(x) - 2
        group = op.group.value.data
        in_per_group, out_per_group = w[1], w[0] // group

        def product(indices: Indices) -> SSAValue:
            n, co = indices[0], indices[1]
            outputs, c, taps = (
                indices[2 : 2 + spatial],
                indices[2 + spatial],
                indices[3 + spatial :],
            )
            if group == 1:
                ci = c
            else:
                g = co if out_per_group == 1 else arith.DivUIOp(co, index_constant(out_per_group)).result
                ci = g if in_per_group == 1 else arith.AddiOp(_affine(g, in_per_group, 0), c).result
            value = _window_read(op.input, [n, ci], outputs, taps, op, w[2:], 0.0)
            return arith.MulfOp(value, read(op.weight, [co, c, *taps])).result

        depthwise = 1 < group == x[1] == w[0]
        conv = build_compute("depthwise_conv" if depthwise else "conv", shape, product, w[1:], "sum")
        if (bias := op.bias) is None:
            rewriter.replace(op, conv)
            return

        def biased(indices: Indices) -> SSAValue:
            return arith.AddfOp(read(conv.result, indices), read(bias, [indices[1]])).result

        rewriter.replace(op, [conv, build_compute("conv_bias", shape, biased)])


class MaxPoolLowering(RewritePattern):
    """Lower max_pool to a `maxnum` reduction "max_pool" over the window (NaNs passed over, NaN where the whole window
    is NaN); padding reads as -inf.

    ONNX Runtime's MaxPool and GlobalMaxPool (MLAS) answer for a NaN by the SIMD lane it falls in (measured with ONNX
    Runtime 1.32 on AVX2): mostly the max of the other values (GlobalMaxPool of [1, NaN, 3, 2] is 3.0, of a 4x4 plane
    with NaNs and +inf, +inf), but NaN at some positions, -inf for a 3x3 window holding 3.0 and NaNs, and -FLT_MAX
    for [-inf, NaN, -inf, -inf] (it starts from -FLT_MAX). The max of the other values is the rule its results follow
    where they do not depend on the lane, and the one taken here; a window of NaNs only gives NaN."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MaxPoolOp, rewriter: PatternRewriter) -> None:
        kernel = op.kernel_shape.get_values()

        def body(indices: Indices) -> SSAValue:
            rank = len(indices) - len(kernel)
            outputs, taps = indices[2:rank], indices[rank:]
            return _window_read(op.input, indices[:2], outputs, taps, op, kernel, float("-inf"))

        rewriter.replace(op, build_compute("max_pool", batched_shape(op, op.result), body, kernel, "maxnum"))


class MaxPoolIndicesLowering(RewritePattern):
    """Lower max_pool_indices to a min reduction "max_pool_indices" over the window of the row-major flat input
    index (i64) where the input equals the pooled maximum, INT64_MAX elsewhere and in the padding: the smallest such
    index is the first maximum in window order. With `column_major`, an elementwise "max_pool_indices_column_major"
    then reorders the spatial part of each index."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MaxPoolIndicesOp, rewriter: PatternRewriter) -> None:
        kernel = op.kernel_shape.get_values()
        x, shape = graph.shape_of(op.input), graph.shape_of(op.result)

        def body(indices: Indices) -> SSAValue:
            rank = len(indices) - len(kernel)
            outputs, taps = indices[2:rank], indices[rank:]
            guard, coordinates = _window_coordinates(op.input, outputs, taps, op, kernel)
            position = [*indices[:2], *coordinates]
            hit = arith.CmpfOp(read(op.input, position), read(op.pooled, indices[:rank]), "oeq").result
            if guard.valid is not None:
                hit = arith.AndIOp(hit, guard.valid).result
            flat = arith.IndexCastOp(linear_index(position, x), i64).result
            return arith.SelectOp(hit, flat, i64_constant(INT64_MAX)).result

        first = build_compute("max_pool_indices", shape, body, kernel, "min", i64)
        if op.column_major is None:
            rewriter.replace(op, first)
            return
        spatial = x[2:]

        def column_major(indices: Indices) -> SSAValue:
            row_major = read(first.result, indices)
            plane = i64_constant(pymath.prod(spatial))
            start = arith.MuliOp(arith.DivSIOp(row_major, plane).result, plane).result
            remainder = arith.RemSIOp(row_major, plane).result
            reordered = start
            for axis, extent in enumerate(spatial):
                inner = pymath.prod(spatial[axis + 1 :])
                coordinate = remainder if inner == 1 else arith.DivSIOp(remainder, i64_constant(inner)).result
                if axis > 0:
                    coordinate = arith.RemSIOp(coordinate, i64_constant(extent)).result
                stride = pymath.prod(spatial[:axis])
                term = coordinate if stride == 1 else arith.MuliOp(coordinate, i64_constant(stride)).result
                reordered = arith.AddiOp(reordered, term).result
            return reordered

        rewriter.replace(
            op, [first, build_compute("max_pool_indices_column_major", shape, column_major, element_type=i64)]
        )


def _window_counts(op: graph.AveragePoolOp, axis: int) -> list[int]:
    """Per output position along spatial `axis`, how many window taps the average divides by."""
    kernel, strides = op.kernel_shape.get_values(), op.strides.get_values()
    pads, dilations = op.pads.get_values(), op.dilations.get_values()
    size = graph.shape_of(op.input)[2 + axis]
    low, high = (-pads[axis], size + pads[len(kernel) + axis]) if op.count_include_pad else (0, size)
    return [
        sum(low <= out * strides[axis] + tap * dilations[axis] - pads[axis] < high for tap in range(kernel[axis]))
        for out in range(graph.shape_of(op.result)[2 + axis])
    ]


class AveragePoolLowering(RewritePattern):
    """Lower average_pool to a sum "avg_pool_sum" and a division "avg_pool" by the window's count: a constant
    when every window counts the same, else an "avg_pool_count" reduction over the spatial output shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.AveragePoolOp, rewriter: PatternRewriter) -> None:
        kernel = op.kernel_shape.get_values()
        shape = batched_shape(op, op.result)

        def summand(indices: Indices) -> SSAValue:
            rank = len(indices) - len(kernel)
            return _window_read(op.input, indices[:2], indices[2:rank], indices[rank:], op, kernel, 0.0)

        total = build_compute("avg_pool_sum", shape, summand, kernel, "sum")
        counts = [_window_counts(op, axis) for axis in range(len(kernel))]
        computes: list[te.ComputeOp] = [total]
        if all(len(set(c)) == 1 for c in counts):
            divisor = float(pymath.prod(c[0] for c in counts))

            def average(indices: Indices) -> SSAValue:
                return arith.DivfOp(read(total.result, indices), f32_constant(divisor)).result

        else:
            include_pad = op.count_include_pad is not None
            pads, size = op.pads.get_values(), graph.shape_of(op.input)

            strides, dilations = op.strides.get_values(), op.dilations.get_values()

            def one(indices: Indices) -> SSAValue:
                """1 for a window tap that counts (inside the input, or the padding too), else 0."""
                outputs, taps = indices[: len(kernel)], indices[len(kernel) :]
                guard = _Guard()
                for axis, extent in enumerate(kernel):
                    begin, end = pads[axis], pads[len(kernel) + axis]
                    # Coordinates relative to the start of the counted range, which has `counted` positions.
                    start = -begin if include_pad else 0
                    counted = size[2 + axis] + (begin + end if include_pad else 0)
                    offset = -begin - start
                    coordinate = arith.AddiOp(
                        _affine(outputs[axis], strides[axis], offset),
                        _affine(taps[axis], dilations[axis], 0),
                    ).result
                    highest = (shape[2 + axis] - 1) * strides[axis] + (extent - 1) * dilations[axis] + offset
                    guard.check(coordinate, offset, highest, counted)
                return guard.select(f32_constant(1.0), 0.0)

            count = build_compute("avg_pool_count", shape[2:], one, kernel, "sum")
            computes.append(count)

            def average(indices: Indices) -> SSAValue:
                return arith.DivfOp(read(total.result, indices), read(count.result, indices[2:])).result

        computes.append(build_compute("avg_pool", shape, average))
        rewriter.replace(op, computes)


class BatchNormLowering(RewritePattern):
    """Lower batch_norm to the per-channel "batch_norm_factor" `scale / sqrt(var + eps)` and the elementwise
    "batch_norm" `(x - mean) * factor[c] + bias`. With the statistics weights (inference), the factor is a compute of
    weights alone, so te-inline leaves it a kernel of its own and `loop-hoist-constants` runs it once at load time:
    the square root and the division are not redone for every element (DenseNet-121's batch normalisations after
    concatenations, which no convolution absorbs). Otherwise te-inline folds it back. The same operations in the
    same order either way, so the results are the same bits."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        shape = batched_shape(op, op.result)

        def factor_body(channel: Indices) -> SSAValue:
            variance = arith.AddfOp(read(op.var, channel), f32_constant(op.epsilon.value.data)).result
            return arith.DivfOp(read(op.scale, channel), math.SqrtOp(variance).result).result

        factor = build_compute("batch_norm_factor", [shape[1]], factor_body)

        def body(indices: Indices) -> SSAValue:
            channel = [indices[1]]
            centred = arith.SubfOp(read(op.input, indices), read(op.mean, channel)).result
            scaled = arith.MulfOp(centred, read(factor.result, channel)).result
            return arith.AddfOp(scaled, read(op.bias, channel)).result

        rewriter.replace(op, [factor, build_compute("batch_norm", shape, body)])


class LRNLowering(RewritePattern):
    """Lower lrn to a sum of squares over the channel window "lrn_square_sum", then the normalisation "lrn"."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.LRNOp, rewriter: PatternRewriter) -> None:
        shape = graph.shape_of(op.result)
        size = op.size.value.data
        before = (size - 1) // 2

        def square(indices: Indices) -> SSAValue:
            guard = _Guard()
            highest = shape[1] - 1 + size - 1 - before
            channel = guard.clamp(_affine_sum(indices[1], indices[-1], -before), -before, highest, shape[1])
            value = read(op.input, [indices[0], channel, *indices[2:-1]])
            return guard.select(arith.MulfOp(value, value).result, 0.0)

        total = build_compute("lrn_square_sum", shape, square, (size,), "sum")

        def normalise(indices: Indices) -> SSAValue:
            scaled = arith.MulfOp(read(total.result, indices), f32_constant(op.alpha.value.data / size)).result
            base = arith.AddfOp(scaled, f32_constant(op.bias.value.data)).result
            denominator = math.PowFOp(base, f32_constant(op.beta.value.data)).result
            return arith.DivfOp(read(op.input, indices), denominator).result

        rewriter.replace(op, [total, build_compute("lrn", shape, normalise)])


def _affine_sum(index: SSAValue, tap: SSAValue, offset: int) -> SSAValue:
    return _affine(arith.AddiOp(index, tap).result, 1, offset)


def scalar_read(value: SSAValue) -> SSAValue:
    """The single element of a one-element tensor."""
    return read(value, [index_constant(0) for _ in graph.shape_of(value)])


class PadLowering(RewritePattern):
    """Lower pad to one compute "pad" reading the input at the padded coordinate mapped back by the mode; the axes it
    leaves alone may be run-time extents (a decoder's rows, padded along the features)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.PadOp, rewriter: PatternRewriter) -> None:
        pads, mode = op.pads.get_values(), op.mode.data
        source = Extents(op).of(op.input)
        rank = len(source)
        padded = [bool(pads[axis] or pads[rank + axis]) for axis in range(rank)]
        if any(isinstance(size, SSAValue) and pad for size, pad in zip(source, padded)):
            raise RunTimeDimensionError("pads a run-time dimension (only axes it leaves alone may be)")
        shape = [
            size + pads[axis] + pads[rank + axis] if padded[axis] else size  # type: ignore[operator]
            for axis, size in enumerate(source)
        ]

        def body(indices: Indices) -> SSAValue:
            guard = _Guard()
            coordinates: list[SSAValue] = []
            for axis, size in enumerate(source):
                begin, end = pads[axis], pads[rank + axis]
                if begin <= 0 and end <= 0:
                    coordinates.append(_affine(indices[axis], 1, -begin))
                    continue
                if mode == "wrap":
                    shift = -(-begin // size) * size - begin
                    coordinates.append(arith.RemUIOp(_affine(indices[axis], 1, shift), index_constant(size)).result)
                    continue
                coordinate = _affine(indices[axis], 1, -begin)
                if mode == "constant":
                    coordinate = guard.clamp(coordinate, -begin, shape[axis] - 1 - begin, size)
                elif mode == "edge":
                    coordinate = _clamp(coordinate, -begin, shape[axis] - 1 - begin, size)
                else:  # reflect about the first and last elements
                    if begin > 0:
                        coordinate = arith.MaxSIOp(
                            coordinate, arith.SubiOp(index_constant(0), coordinate).result
                        ).result
                    if end > 0:
                        mirrored = arith.SubiOp(index_constant(2 * (size - 1)), coordinate).result
                        coordinate = arith.MinSIOp(coordinate, mirrored).result
                coordinates.append(coordinate)
            value = read(op.input, coordinates)
            if guard.valid is None:
                return value
            fill = scalar_read(op.fill) if op.fill is not None else op.value.value.data if op.value else 0.0
            return guard.select(value, fill)

        rewriter.replace(op, build_compute("pad", shape, body))


PATTERNS: list[RewritePattern] = [
    ConvLowering(),
    MaxPoolLowering(),
    MaxPoolIndicesLowering(),
    AveragePoolLowering(),
    BatchNormLowering(),
    LRNLowering(),
    PadLowering(),
]
