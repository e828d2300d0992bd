"""`te-conv-im2col`: compute a 2-d convolution as a GEMM over an im2col matrix, for the convolutions it chooses.

A group-1 convolution `y[n, f, oh, ow] = sum_{c, kh, kw} x(n, c, oh, ow, kh, kw) * w[f, c, kh, kw]` is the matrix
product `g[m, f] = sum_k col[k, m] * wm[k, f]` with rows `m = (n, oh, ow)` and depth `k = (c, kh, kw)`:

    %y = te.compute "conv" (%n, %f, %h, %w) reduce sum (%c : 64, %kh : 3, %kw : 3) -> tensor<1x64x14x14xf32> {...}
    // becomes
    %col = te.compute "conv_im2col" (%k, %n, %h, %w) -> tensor<576x1x14x14xf32> { x(...) at the (c, kh, kw) of k }
    %wm = te.compute "conv_weight_matrix" (%k, %f) -> tensor<576x64xf32> { w[f, c, kh, kw] at the (c, kh, kw) of k }
    %g = te.compute "conv_gemm" (%m, %f) reduce sum (%k : 576) -> tensor<200x64xf32> { col[k, n, h, w of m] * wm[k, f] }
    %y = te.compute "conv_output" (%n, %f, %h, %w) -> tensor<1x64x14x14xf32> { g[n * 196 + h * 14 + w, f] }

`conv_gemm` is what default-schedule recognises as a GEMM: its B operand, the weight matrix, is computed from
weights alone, so at O3 it is built once at load time (`loop-hoist-constants`) and packed into panels there. The
gather reads the input exactly as the convolution did (its body is the convolution's input expression, cloned at the
decomposed indices: padding, strides and dilations come with it); `te-inline` folds a padding producer into it. A
1x1 convolution with stride 1 and no padding has no gather: the GEMM reads its input directly (`x[n, k, oh, ow]` at
the pixel of row `m`). Rows are padded to a multiple of `ROW_MULTIPLE` and columns to one of
`COLUMN_MULTIPLE` (padded rows repeat the last pixel, padded columns the last filter; `conv_output` never reads
them), so the GEMM schedule's register tile always divides the matrix. The gather is column-major for the GEMM
(`col[k, pixel]`): its inner loops walk output pixels without divisions, and the GEMM's division of a row index into
a pixel does not depend on `k`, so it leaves the inner loops. The output goes back to NCHW in
`conv_output`, which te-inline folds into an elementwise consumer (a bias, a ReLU).

`algorithm` chooses the convolutions: `im2col` all, `direct` none, `auto` those the conv schedule rule's
`prefers_im2col` picks for the module's target (a rule derived from per-shape measurements, see docs/measurements.md,
"Convolution algorithms"). Applies to "conv" computes of rank 4
(group 1; `graph-split-grouped-conv` splits grouped ones); run after graph-to-te and before te-conv-layout, which
then gives the remaining (direct) convolutions their channels-last input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, index_constant, read, split_index
from minimlc.lowering.strategy.conv import ConvShape, prefers_im2col
from minimlc.lowering.strategy.padding import COLUMN_MULTIPLE, ROW_MULTIPLE
from minimlc.lowering.target import Target, target_of
from minimlc.lowering.te.compute_rewriting import rewrite_computes
from minimlc.lowering.te.te_channels_last import CONCAT_TAG, joins_channels_last

ALGORITHMS = ("auto", "im2col", "direct")


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _clamped(index: SSAValue, extent: int, padded: int) -> SSAValue:
    """`index`, or `extent - 1` where it is past `extent` (padding rows and columns repeat the last real one)."""
    if padded == extent:
        return index
    return arith.MinUIOp(index, index_constant(extent - 1)).result


@dataclass
class _Parts:
    """The pieces of a convolution compute's body: its input expression and weight read."""

    data: SSAValue
    weight: te.ReadOp


def _conv_parts(op: te.ComputeOp) -> _Parts | None:
    """The input expression and weight read of a group-1 2-d "conv" compute (`data * w[f, c, kh, kw]`), or None."""
    if op.tag.data != "conv" or op.combiner is None or op.combiner.data != "sum" or op.has_run_time_extents():
        return None
    args = op.body.block.args
    if len(graph.shape_of(op.result)) != 4 or len(args) != 7:
        return None
    product = op.yield_op.operands[0].owner
    if not isinstance(product, arith.MulfOp):
        return None
    weight, data = product.rhs.owner, product.lhs
    if not isinstance(weight, te.ReadOp) or list(weight.indices) != [args[1], *args[4:]]:
        return None
    if args[1] in _slice(data, op.body.block):
        return None
    return _Parts(data, weight)


def _slice(value: SSAValue, block: Block) -> set[SSAValue]:
    """Every value of `block` (arguments and op results) that `value` is computed from, `value` included."""
    seen: set[SSAValue] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if isinstance(current.owner, Operation) and current.owner.parent_block() is block:
            pending.extend(current.owner.operands)
    return seen


def _data_at(op: te.ComputeOp, data: SSAValue) -> Callable[[list[SSAValue]], SSAValue]:
    """A builder of the convolution's input expression at other indices (n, f, oh, ow, c, kh, kw): it clones the
    ops `data` is computed from, in body order, with the body's arguments replaced."""
    block = op.body.block
    needed = _slice(data, block)
    ops = [o for o in block.ops if any(result in needed for result in o.results)]

    def build(indices: list[SSAValue]) -> SSAValue:
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, indices))
        for original in ops:
            original.clone(value_mapper=mapping)  # lands in the body being built (an implicit builder)
        return mapping[data]

    return build


class ConvToIm2colGemm(RewritePattern):
    """Rewrite a chosen convolution compute into im2col gather, weight matrix, GEMM and NCHW output computes.
    `joins_layout` keeps `joins_channels_last`'s answers for the pass: they are asked of computes before the
    convolution being matched, whose producers, convolutions included, have all been matched (and rewritten or not)
    already, so an answer never changes."""

    def __init__(self, algorithm: str, target: Target):
        self.algorithm = algorithm
        self.target = target
        self.joins_layout: dict[te.ComputeOp, bool] = {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: te.ComputeOp, rewriter: PatternRewriter) -> None:
        parts = _conv_parts(op)
        if parts is None or self.algorithm == "direct":
            return
        n, f, oh, ow = graph.shape_of(op.result)
        c, kh, kw = op.reduce_extents.get_values()
        # A 1x1 kernel, no padding (a plain read) and an input the output's size: stride 1, no gather needed.
        direct = (
            kh == kw == 1
            and isinstance(parts.data.owner, te.ReadOp)
            and graph.shape_of(parts.data.owner.tensor) == (n, c, oh, ow)
        )
        shape = ConvShape(n, c, f, oh, ow, kh, kw)
        source = parts.data.owner.tensor.owner if isinstance(parts.data.owner, te.ReadOp) else None
        concat = (
            isinstance(source, te.ComputeOp)
            and source.tag.data == CONCAT_TAG
            and not joins_channels_last(source, self.target, self.joins_layout)
        )
        if self.algorithm == "auto" and not prefers_im2col(shape, self.target, concat):
            return
        rows, depth = shape.rows, shape.depth
        padded_rows, padded_cols = _round_up(rows, ROW_MULTIPLE), _round_up(f, COLUMN_MULTIPLE)
        data_at = _data_at(op, parts.data)
        computes: list[te.ComputeOp] = []
        weight = parts.weight.tensor

        def pixel(m: SSAValue) -> list[SSAValue]:
            """(n, oh, ow) of GEMM row `m` (padding rows repeat the last pixel)."""
            return split_index(_clamped(m, rows, padded_rows), (n, oh, ow))

        # The input expression never reads the output channel (position 1 of its indices): any index will do there.
        if direct:

            def a_value(k: SSAValue, m: SSAValue) -> SSAValue:
                batch, row, col = pixel(m)
                return data_at([batch, batch, row, col, k, index_constant(0), index_constant(0)])

        else:

            def gather_value(indices: Indices) -> SSAValue:
                k, batch, row, col = indices
                return data_at([batch, batch, row, col, *split_index(k, (c, kh, kw))])

            gather = build_compute("conv_im2col", (depth, n, oh, ow), gather_value)
            computes.append(gather)

            def a_value(k: SSAValue, m: SSAValue) -> SSAValue:
                return read(gather.result, [k, *pixel(m)])

        def weight_value(indices: Indices) -> SSAValue:
            channel, tap_h, tap_w = split_index(indices[0], (c, kh, kw))
            return read(weight, [_clamped(indices[1], f, padded_cols), channel, tap_h, tap_w])

        matrix = build_compute("conv_weight_matrix", (depth, padded_cols), weight_value)

        def gemm_value(indices: Indices) -> SSAValue:
            m, j, k = indices
            return arith.MulfOp(a_value(k, m), read(matrix.result, [k, j])).result

        gemm = build_compute("conv_gemm", (padded_rows, padded_cols), gemm_value, (depth,), "sum")

        def output_value(indices: Indices) -> SSAValue:
            batch, channel, row, col = indices
            terms = [col]
            if oh > 1:
                terms.append(arith.MuliOp(row, index_constant(ow)).result)
            if n > 1:
                terms.append(arith.MuliOp(batch, index_constant(oh * ow)).result)
            m = terms[0]
            for term in terms[1:]:
                m = arith.AddiOp(m, term).result
            return read(gemm.result, [m, channel])

        output = build_compute("conv_output", (n, f, oh, ow), output_value)
        rewriter.replace(op, [*computes, matrix, gemm, output], [output.result])


@dataclass(frozen=True)
class TeConvIm2colPass(ModulePass):
    """Compute the chosen 2-d convolutions as im2col + GEMM (see the module docstring)."""

    name = "te-conv-im2col"

    algorithm: str = "auto"
    """Which convolutions: `im2col` (all), `direct` (none) or `auto` (those `prefers_im2col` picks)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.algorithm not in ALGORITHMS:
            raise PassFailedException(
                f"{self.name}: algorithm must be one of {', '.join(ALGORITHMS)}, got '{self.algorithm}'"
            )
        pattern = ConvToIm2colGemm(self.algorithm, target_of(op))
        rewrite_computes(op, pattern)
