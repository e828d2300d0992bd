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
)


def _less_zero(value: SSAValue, zero_point: SSAValue, index: SSAValue) -> SSAValue:
    """`value - zero_point[index]` (index 0 for a one-element zero point), both widened to i32."""
    extent = graph.shape_of(zero_point)
    position = [] if not extent else [index if extent[0] > 1 else index_constant(0)]
    zero = scalar.cast(read(zero_point, position), i32)
    return arith.SubiOp(scalar.cast(value, i32), zero).result


class MatMulIntegerLowering(RewritePattern):
    """Lower matmul_integer to each operand less its zero point in i32 ("matmul_integer_lhs", "matmul_integer_rhs":
    a weight's is computed once, at load time) and one i32 sum reduction "matmul_integer" of their products (the
    integer GEMM rule's shape)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulIntegerOp, rewriter: PatternRewriter) -> None:
        lhs, rhs, shape = graph.shape_of(op.lhs), graph.shape_of(op.rhs), graph.shape_of(op.result)
        batch = shape[: len(shape) - (len(lhs) > 1) - (len(rhs) > 1)]

        def less_zero(operand: SSAValue, zero: SSAValue, axis: int) -> te.ComputeOp:
            rank = len(graph.shape_of(operand))

            def body(indices: Indices) -> SSAValue:
                return _less_zero(read(operand, indices), zero, indices[axis % rank])

            tag = "matmul_integer_lhs" if operand is op.lhs else "matmul_integer_rhs"
            return build_compute(tag, graph.shape_of(operand), body)

        left, right = less_zero(op.lhs, op.lhs_zero, -2), less_zero(op.rhs, op.rhs_zero, -1)

        def product(indices: Indices) -> SSAValue:
            outer, k = indices[:-1], indices[-1]

            def batched(operand: Shape, *rows_cols: SSAValue) -> list[SSAValue]:
                return [*broadcast_indices(operand[:-2], batch, outer[: len(batch)]), *rows_cols]

            row = outer[len(batch)] if len(lhs) > 1 else k
            column = outer[-1] if len(rhs) > 1 else k
            a = read(left.result, [k] if len(lhs) == 1 else batched(lhs, row, k))
            b = read(right.result, [k] if len(rhs) == 1 else batched(rhs, k, column))
            return arith.MuliOp(a, b).result

        matmul = build_compute("matmul_integer", shape, product, (lhs[-1],), "sum")
        rewriter.replace(op, [left, right, matmul])


class ConvIntegerLowering(RewritePattern):
    """Lower conv_integer. Group 1 goes channels-last, in the integer convolution rule's shape: the weight less its
    zero point "conv_integer_weight" (computed once, at load time), the input less its zero point, padded with 0 and
    channels last, "conv_integer_input" (N, H', W', C), their i32 products summed over (KH, KW, C) into a
    channels-last "conv_integer" (N, OH, OW, Co), and a "transpose" back to (N, Co, OH, OW). Other groups take one
    direct reduction "conv_integer" over channels and taps (a tap in the padding adds nothing)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvIntegerOp, rewriter: PatternRewriter) -> None:
        x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result)
        if op.group.value.data == 1:
            rewriter.replace(op, _channels_last_conv(op, x, w, shape))
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


def _window_less_zero(
    op: graph.ConvIntegerOp, leading: Sequence[SSAValue], outputs: Indices, taps: Indices
) -> SSAValue:
    """The input at a window position less its zero point, in i32; 0 in the padding."""
    kernel = graph.shape_of(op.weight)[2:]
    guard, coordinates = _window_coordinates(
        op.input, outputs, taps, op, kernel  # pyright: ignore[reportArgumentType]
    )
    value = _less_zero(read(op.input, [*leading, *coordinates]), op.input_zero, leading[0])
    return guard.select(value, constant(0, i32))


def _channels_last_conv(op: graph.ConvIntegerOp, x: Shape, w: Shape, shape: Shape) -> list[te.ComputeOp]:
    spatial = len(x) - 2
    strides, pads, dilations = op.strides.get_values(), op.pads.get_values(), op.dilations.get_values()
    reach = [(shape[2 + a] - 1) * strides[a] + (w[2 + a] - 1) * dilations[a] + 1 for a in range(spatial)]

    def weight(indices: Indices) -> SSAValue:
        return _less_zero(read(op.weight, indices), op.weight_zero, indices[0])

    def padded(indices: Indices) -> SSAValue:
        n, *window, c = indices
        valid: SSAValue | None = None
        coordinates: list[SSAValue] = []
        for axis, position in enumerate(window):
            coordinate = _affine(position, 1, -pads[axis])
            inside = [arith.CmpiOp(coordinate, index_constant(0), "sge").result]
            inside.append(arith.CmpiOp(coordinate, index_constant(x[2 + axis]), "slt").result)
            for condition in inside:
                valid = condition if valid is None else arith.AndIOp(valid, condition).result
            low = arith.MaxSIOp(coordinate, index_constant(0)).result
            coordinates.append(arith.MinSIOp(low, index_constant(x[2 + axis] - 1)).result)
        value = _less_zero(read(op.input, [n, c, *coordinates]), op.input_zero, n)
        assert valid is not None
        return arith.SelectOp(valid, value, constant(0, i32)).result

    weights = build_compute("conv_integer_weight", w, weight)
    data = build_compute("conv_integer_input", (x[0], *reach, x[1]), padded)

    def product(indices: Indices) -> SSAValue:
        n, outputs, co = indices[0], indices[1 : 1 + spatial], indices[1 + spatial]
        taps, c = indices[2 + spatial : 2 + 2 * spatial], indices[-1]
        window = [
            arith.AddiOp(_affine(outputs[a], strides[a], 0), _affine(taps[a], dilations[a], 0)).result
            for a in range(spatial)
        ]
        return arith.MuliOp(read(weights.result, [co, c, *taps]), read(data.result, [n, *window, c])).result

    channels_last = (x[0], *shape[2:], w[0])
    conv = build_compute("conv_integer", channels_last, product, (*w[2:], w[1]), "sum")

    def transposed(indices: Indices) -> SSAValue:
        return read(conv.result, [indices[0], *indices[2:], indices[1]])

    return [weights, data, conv, build_compute("transpose", shape, transposed)]


PATTERNS: list[RewritePattern] = [MatMulIntegerLowering(), ConvIntegerLowering()]
