"""graph-to-te patterns for spatial ops: col2im (folding columns of blocks into an image) and grid_sample.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own); helpers in `builder.py`.
Every read is at indices clamped into the tensor, and a tap that falls outside (a block position that does not
exist, grid_sample's zero padding) selects 0 instead of the loaded value, so no load is ever out of bounds. Tags:
"col2im" (a sum over the block taps), "grid_sample" (elementwise over the output, its taps unrolled).
"""

from __future__ import annotations

import itertools
import math as pymath

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    build_compute,
    f32_constant,
    index_constant,
    linear_index,
    read,
)


def _all(conditions: list[SSAValue]) -> SSAValue | None:
    valid = None
    for condition in conditions:
        valid = condition if valid is None else arith.AndIOp(valid, condition).result
    return valid


def _phase_taps(block: int, stride: int, dilation: int) -> int:
    """How many taps of a block axis can reach one image position: ceil(block / stride) where taps are stride apart
    in phase (dilation 1, stride > 1), else all of them."""
    return -(-block // stride) if dilation == 1 and stride > 1 else block


class Col2ImLowering(RewritePattern):
    """Lower col2im to a sum "col2im" over the block taps: image position `o` along an axis takes tap `b` from the
    block at `(o + pad - b * dilation) / stride` where that divides exactly and lies among the block positions.
    With dilation 1 and a stride s > 1 only the taps `b = (o + pad) % s + s * j` divide, so the sum runs over j
    (ceil(block / s) taps) from the block at `(o + pad) / s - j`, not over every tap."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.Col2ImOp, rewriter: PatternRewriter) -> None:
        block = op.block_shape.get_values()
        strides, pads, dilations = op.strides.get_values(), op.pads.get_values(), op.dilations.get_values()
        blocks, spatial, taps = op.columns.get_values(), len(block), pymath.prod(block)
        shape = graph.shape_of(op.result)
        extents = tuple(_phase_taps(block[a], strides[a], dilations[a]) for a in range(spatial))

        def body(indices: Indices) -> SSAValue:
            n, c = indices[0], indices[1]
            outputs, steps = indices[2 : 2 + spatial], indices[2 + spatial :]
            conditions: list[SSAValue] = []
            positions: list[SSAValue] = []
            offsets: list[SSAValue] = []
            for a in range(spatial):
                shifted = outputs[a]
                if pads[a]:
                    shifted = arith.AddiOp(shifted, index_constant(pads[a])).result
                if extents[a] != block[a]:  # the taps in phase with o: b = (o + pad) % s + s * j
                    stride = index_constant(strides[a])
                    phase = arith.RemUIOp(shifted, stride).result
                    offset = arith.AddiOp(phase, arith.MuliOp(steps[a], stride).result).result
                    if extents[a] * strides[a] > block[a]:
                        last_tap = index_constant(block[a] - 1)
                        conditions.append(arith.CmpiOp(offset, last_tap, "ule").result)
                        offset = arith.MinUIOp(offset, last_tap).result
                    shifted, tap, divided = arith.DivUIOp(shifted, stride).result, steps[a], True
                else:
                    offset = steps[a]
                    tap = offset if dilations[a] == 1 else arith.MuliOp(offset, index_constant(dilations[a])).result
                    divided = strides[a] == 1
                offsets.append(offset)
                conditions.append(arith.CmpiOp(shifted, tap, "uge").result)
                position = arith.SubiOp(arith.MaxUIOp(shifted, tap).result, tap).result
                if not divided:
                    stride = index_constant(strides[a])
                    remainder = arith.RemUIOp(position, stride).result
                    conditions.append(arith.CmpiOp(remainder, index_constant(0), "eq").result)
                    position = arith.DivUIOp(position, stride).result
                last = index_constant(blocks[a] - 1)
                conditions.append(arith.CmpiOp(position, last, "ule").result)
                positions.append(arith.MinUIOp(position, last).result)
            row = arith.AddiOp(arith.MuliOp(c, index_constant(taps)).result, linear_index(offsets, tuple(block))).result
            value = read(op.input, [n, row, linear_index(positions, tuple(blocks))])
            valid = _all(conditions)
            assert valid is not None
            return arith.SelectOp(valid, value, f32_constant(0.0)).result

        rewriter.replace(op, build_compute("col2im", shape, body, extents, "sum"))


def _reflect(x: SSAValue, low: float, high: float) -> SSAValue:
    """`x` reflected by the borders [low, high] until inside (as onnx's reference and PyTorch do)."""
    span = f32_constant(high - low)

    def fold(distance: SSAValue, near: float, far: float) -> SSAValue:
        periods = math.FloorOp(arith.DivfOp(distance, span).result).result
        rest = arith.SubfOp(distance, arith.MulfOp(periods, span).result).result
        half = arith.MulfOp(periods, f32_constant(0.5)).result
        even = arith.CmpfOp(math.FloorOp(half).result, half, "oeq").result
        toward = arith.AddfOp(f32_constant(near), rest).result if near < far else None
        away = arith.SubfOp(f32_constant(far), rest).result if near < far else None
        if toward is None:  # from the high border
            toward = arith.SubfOp(f32_constant(near), rest).result
            away = arith.AddfOp(f32_constant(far), rest).result
        assert away is not None
        return arith.SelectOp(even, toward, away).result

    below = fold(arith.SubfOp(f32_constant(low), x).result, low, high)
    above = fold(arith.SubfOp(x, f32_constant(high)).result, high, low)
    result = arith.SelectOp(arith.CmpfOp(x, f32_constant(low), "olt").result, below, x).result
    return arith.SelectOp(arith.CmpfOp(x, f32_constant(high), "ogt").result, above, result).result


def _cubic_weights(t: SSAValue) -> list[SSAValue]:
    """Keys' cubic weights (a = -0.75) of the taps at -1, 0, 1, 2 from a fraction `t` in [0, 1)."""
    a = -0.75

    def near(x: SSAValue) -> SSAValue:  # |x| <= 1: ((a + 2) x - (a + 3)) x^2 + 1
        inner = arith.SubfOp(arith.MulfOp(f32_constant(a + 2), x).result, f32_constant(a + 3)).result
        return arith.AddfOp(arith.MulfOp(inner, arith.MulfOp(x, x).result).result, f32_constant(1.0)).result

    def far(x: SSAValue) -> SSAValue:  # 1 < |x| < 2: ((a x - 5a) x + 8a) x - 4a
        inner = arith.SubfOp(arith.MulfOp(f32_constant(a), x).result, f32_constant(5 * a)).result
        inner = arith.AddfOp(arith.MulfOp(inner, x).result, f32_constant(8 * a)).result
        return arith.SubfOp(arith.MulfOp(inner, x).result, f32_constant(4 * a)).result

    one = f32_constant(1.0)
    rest = arith.SubfOp(one, t).result
    return [
        far(arith.AddfOp(t, one).result),
        near(t),
        near(rest),
        far(arith.AddfOp(rest, one).result),
    ]


class GridSampleLowering(RewritePattern):
    """Lower grid_sample to one compute "grid_sample": per spatial axis, the grid coordinate is denormalised,
    rounded (nearest), brought inside by the padding mode, and split into taps (1, 2 or 4) with weights; the
    result sums the weighted reads over every combination of taps, 0 for a tap outside with zero padding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GridSampleOp, rewriter: PatternRewriter) -> None:
        x = graph.shape_of(op.input)
        sizes, spatial = x[2:], len(x) - 2
        mode, padding = op.mode.data, op.padding_mode.data
        aligned = op.align_corners is not None

        def axis_taps(coordinate: SSAValue, size: int) -> list[tuple[SSAValue, SSAValue | None, SSAValue | None]]:
            """(index clamped into the axis, weight or None for 1, in-bounds condition or None) per tap."""
            one = f32_constant(1.0)
            plus = arith.AddfOp(coordinate, one).result
            if aligned:
                position = arith.MulfOp(plus, f32_constant((size - 1) / 2)).result
                low, high = 0.0, size - 1.0
            else:
                scaled = arith.MulfOp(plus, f32_constant(float(size))).result
                position = arith.MulfOp(arith.SubfOp(scaled, one).result, f32_constant(0.5)).result
                low, high = -0.5, size - 0.5
            if mode == "nearest":
                position = math.RoundEvenOp(position).result
            if padding == "border":  # clamped only from outside [low, high], as in onnx's reference
                clamped = arith.MinimumfOp(
                    arith.MaximumfOp(position, f32_constant(0.0)).result, f32_constant(size - 1.0)
                ).result
                outside = arith.OrIOp(
                    arith.CmpfOp(position, f32_constant(low), "olt").result,
                    arith.CmpfOp(position, f32_constant(high), "ogt").result,
                ).result
                position = arith.SelectOp(outside, clamped, position).result
            elif padding == "reflection":
                position = _reflect(position, low, high)
            weights: list[SSAValue | None] = [None]
            if mode == "nearest":  # already a whole number
                base, offsets = position, [0]
            else:
                base = math.FloorOp(position).result
                fraction = arith.SubfOp(position, base).result
                if mode == "bilinear":
                    offsets, weights = [0, 1], [arith.SubfOp(one, fraction).result, fraction]
                else:
                    offsets, weights = [-1, 0, 1, 2], list(_cubic_weights(fraction))
            # Taps are at most 2 outside the axis: reflect or clamp their integer index back in. The float is bounded
            # first (maxnum and minnum also take NaN to a bound) so that the conversion is always defined.
            bounded = arith.MinnumfOp(arith.MaxnumfOp(base, f32_constant(-3.0)).result, f32_constant(size + 2.0)).result
            first = arith.FPToSIOp(bounded, i64).result
            result: list[tuple[SSAValue, SSAValue | None, SSAValue | None]] = []
            for offset, weight in zip(offsets, weights):
                tap = first if offset == 0 else arith.AddiOp(first, _i64(offset)).result
                inside: SSAValue | None = None
                if padding == "reflection":
                    mirror_low = -1 if not aligned else 0
                    mirror_high = 2 * size - 1 if not aligned else 2 * (size - 1)
                    below = arith.SubiOp(_i64(mirror_low), tap).result
                    above = arith.SubiOp(_i64(mirror_high), tap).result
                    tap = arith.SelectOp(arith.CmpiOp(tap, _i64(0), "slt").result, below, tap).result
                    tap = arith.SelectOp(arith.CmpiOp(tap, _i64(size - 1), "sgt").result, above, tap).result
                elif padding == "zeros":
                    inside = arith.AndIOp(
                        arith.CmpiOp(tap, _i64(0), "sge").result, arith.CmpiOp(tap, _i64(size), "slt").result
                    ).result
                clamped = arith.MinSIOp(arith.MaxSIOp(tap, _i64(0)).result, _i64(size - 1)).result
                result.append((arith.IndexCastOp(clamped, IndexType()).result, weight, inside))
            return result

        def body(indices: Indices) -> SSAValue:
            n, c, outputs = indices[0], indices[1], indices[2:]
            per_axis = [
                axis_taps(read(op.grid, [n, *outputs, index_constant(spatial - 1 - axis)]), sizes[axis])
                for axis in range(spatial)
            ]
            total: SSAValue | None = None
            for combination in itertools.product(*per_axis):
                value = read(op.input, [n, c, *(tap[0] for tap in combination)])
                inside = _all([tap[2] for tap in combination if tap[2] is not None])
                if inside is not None:
                    value = arith.SelectOp(inside, value, f32_constant(0.0)).result
                for _, weight, _ in combination:
                    if weight is not None:
                        value = arith.MulfOp(value, weight).result
                total = value if total is None else arith.AddfOp(total, value).result
            assert total is not None
            return total

        rewriter.replace(op, build_compute("grid_sample", graph.shape_of(op.result), body))


def _i64(value: int) -> SSAValue:
    return arith.ConstantOp.from_int_and_width(value, 64).result


PATTERNS: list[RewritePattern] = [Col2ImLowering(), GridSampleLowering()]
"""graph -> te: one tensor expression per spatial graph op."""
