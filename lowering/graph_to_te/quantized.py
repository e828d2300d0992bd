"""Lower the integer ops of quantized inference (`graph.matmul_integer`, `graph.conv_integer`) to `te` sum reductions
in i32: each 8-bit operand is widened (`extui` for ui8, `extsi` for i8) and less its zero point before the product.

Assumes the verifier's operands: 8-bit data, zero points of one element or one per row / column / output channel.

    %c = te.compute "matmul_integer" ... { %a = te.read ... : ui8 ; ... ; te.yield (a - az) * (b - bz) : i32 } sum
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
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
    """Lower conv_integer to one i32 sum reduction "conv_integer" over input channels and taps; a tap in the
    padding adds nothing (it reads as the input's zero point)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvIntegerOp, rewriter: PatternRewriter) -> None:
        x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result)
        spatial = len(x) - 2
        group = op.group.value.data
        in_per_group, out_per_group = w[1], w[0] // group

        def product(indices: Sequence[SSAValue]) -> SSAValue:
            n, co = indices[0], indices[1]
            outputs, c, taps = indices[2 : 2 + spatial], indices[2 + spatial], indices[3 + spatial :]
            ci = c
            if group > 1:
                g = co if out_per_group == 1 else arith.DivUIOp(co, index_constant(out_per_group)).result
                ci = g if in_per_group == 1 else arith.AddiOp(_affine(g, in_per_group, 0), c).result
            guard, coordinates = _window_coordinates(
                op.input, outputs, taps, op, w[2:]  # pyright: ignore[reportArgumentType]
            )
            value = _less_zero(read(op.input, [n, ci, *coordinates]), op.input_zero, n)
            weight = _less_zero(read(op.weight, [co, c, *taps]), op.weight_zero, co)
            return arith.MuliOp(guard.select(value, constant(0, i32)), weight).result

        rewriter.replace(op, build_compute("conv_integer", shape, product, w[1:], "sum"))


PATTERNS: list[RewritePattern] = [MatMulIntegerLowering(), ConvIntegerLowering()]
