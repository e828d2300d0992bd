"""Lower the integer ops of quantized inference (`graph.matmul_integer`, `graph.conv_integer`) to `te` sum reductions
in i32: each 8-bit operand is widened (`extui` for ui8, `extsi` for i8) and less its zero point before the product.

Assumes the verifier's operands: 8-bit data, zero points of one element or one per row / column / output channel.

    %c = te.compute "matmul_integer" ... { %a = te.read ... : ui8 ; ... ; te.yield (a - az) * (b - bz) : i32 } sum
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.nn import (
    _affine,  # pyright: ignore[reportPrivateUsage]
    _window_coordinates,  # pyright: ignore[reportPrivateUsage]
)
from minimlc.lowering.te import scalar
from minimlc.lowering.te.builder import (
    Indices,
    Shape,
    broadcast_indices,
    build_compute,
    constant,
    index_constant,
    read,
    reshape_indices,
)


def _less_zero(value: SSAValue, zero_point: SSAValue, index: SSAValue) -> SSAValue:
    """`value - zero_point[index]` (index 0 for a one-element zero point), both widened to i32."""
    extent = graph.shape_of(zero_point)
    position = [] if not extent else [index if extent[0] > 1 else index_constant(0)]
    zero = scalar.cast(read(zero_point, position), i32)
    return arith.SubiOp(scalar.cast(value, i32), zero).result


class MatMulIntegerLowering(RewritePattern):
    """Lower matmul_integer to one i32 sum reduction "matmul_integer" over the shared dimension."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulIntegerOp, rewriter: PatternRewriter) -> None:
        lhs, rhs, shape = graph.shape_of(op.lhs), graph.shape_of(op.rhs), graph.shape_of(op.result)
        batch = shape[: len(shape) - (len(lhs) > 1) - (len(rhs) > 1)]

        def product(indices: Indices) -> SSAValue:
            outer, k = indices[:-1], indices[-1]

            def batched(operand: Shape, *rows_cols: SSAValue) -> list[SSAValue]:
                return [*broadcast_indices(operand[:-2], batch, outer[: len(batch)]), *rows_cols]

            row = outer[len(batch)] if len(lhs) > 1 else k
            column = outer[-1] if len(rhs) > 1 else k
            a = read(op.lhs, [k] if len(lhs) == 1 else batched(lhs, row, k))
            b = read(op.rhs, [k] if len(rhs) == 1 else batched(rhs, k, column))
            return arith.MuliOp(_less_zero(a, op.lhs_zero, row), _less_zero(b, op.rhs_zero, column)).result

        rewriter.replace(op, build_compute("matmul_integer", shape, product, (lhs[-1],), "sum"))


class ConvIntegerLowering(RewritePattern):
    """Lower conv_integer. Group 1 takes im2col and an integer GEMM (the integer GEMM rule's shape): the weight less
    its zero point as a (Co, C*KH*KW) "conv_integer_weight", the windows less the input's zero point (0 in the
    padding) as (N, C*KH*KW, OH*OW) "conv_integer_columns", their i32 product "conv_integer" over C*KH*KW, and a
    reshape to (N, Co, OH, OW). Other groups take one direct reduction "conv_integer" over channels and taps."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvIntegerOp, rewriter: PatternRewriter) -> None:
        x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result)
        if op.group.value.data == 1:
            rewriter.replace(op, _im2col_conv(op, x, w, shape))
            return
        spatial = len(x) - 2
        group = op.group.value.data
        in_per_group, out_per_group = w[1], w[0] // group

        def product(indices: Sequence[SSAValue]) -> SSAValue:
            n, co = indices[0], indices[1]
            outputs, c, taps = indices[2 : 2 + spatial], indices[2 + spatial], indices[3 + spatial :]
            g = co if out_per_group == 1 else arith.DivUIOp(co, index_constant(out_per_group)).result
            ci = g if in_per_group == 1 else arith.AddiOp(_affine(g, in_per_group, 0), c).result
            weight = _less_zero(read(op.weight, [co, c, *taps]), op.weight_zero, co)
            return arith.MuliOp(_window_less_zero(op, [n, ci], outputs, taps), weight).result

        rewriter.replace(op, build_compute("conv_integer", shape, product, w[1:], "sum"))


def _window_less_zero(op: graph.ConvIntegerOp, leading: Sequence[SSAValue], outputs: Indices, taps: Indices) -> SSAValue:
    """The input at a window position less its zero point, in i32; 0 in the padding."""
    kernel = graph.shape_of(op.weight)[2:]
    guard, coordinates = _window_coordinates(
        op.input, outputs, taps, op, kernel  # pyright: ignore[reportArgumentType]
    )
    value = _less_zero(read(op.input, [*leading, *coordinates]), op.input_zero, leading[0])
    return guard.select(value, constant(0, i32))


def _im2col_conv(op: graph.ConvIntegerOp, x: Shape, w: Shape, shape: Shape) -> list[te.ComputeOp]:
    batch, out_channels, spatial = x[0], w[0], len(x) - 2
    depth, pixels = math.prod(w[1:]), math.prod(shape[2:])
    window = (batch, w[1], *w[2:], *shape[2:])

    def weight(indices: Indices) -> SSAValue:
        co, k = indices
        return _less_zero(read(op.weight, [co, *reshape_indices([k], (depth,), w[1:])]), op.weight_zero, co)

    def column(indices: Indices) -> SSAValue:
        n, c, *rest = reshape_indices(indices, (batch, depth, pixels), window)
        return _window_less_zero(op, [n, c], rest[spatial:], rest[:spatial])

    weights = build_compute("conv_integer_weight", (out_channels, depth), weight)
    columns = build_compute("conv_integer_columns", (batch, depth, pixels), column)

    def product(indices: Indices) -> SSAValue:
        n, co, p, k = indices
        return arith.MuliOp(read(weights.result, [co, k]), read(columns.result, [n, k, p])).result

    conv = build_compute("conv_integer", (batch, out_channels, pixels), product, (depth,), "sum")

    def unflatten(indices: Indices) -> SSAValue:
        return read(conv.result, reshape_indices(indices, shape, (batch, out_channels, pixels)))

    return [weights, columns, conv, build_compute("reshape", shape, unflatten)]


PATTERNS: list[RewritePattern] = [MatMulIntegerLowering(), ConvIntegerLowering()]
