"""graph-to-te patterns for linear algebra: det, as Gaussian elimination with partial pivoting unrolled per matrix.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own). One compute "det" over the batch
reads its matrix's n^2 elements and runs the elimination as straight-line scalar code (n <= `graph.DET_MAX_ORDER`):
at step k, each lower row whose |entry| in column k beats the pivot so far is swapped in with selects (flipping
the sign), then the rows below are reduced by it. The determinant is the signed product of the pivots, computed in
f64 whatever the input (and rounded once, for f32); a zero pivot (a singular matrix) gives 0.

    %d = te.compute "det" (%b) -> tensor<3xf32> { %a00 = te.read %m[%b, 0, 0] ... arith.truncf %det : f64 to f32 }
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant, read


def _select(condition: SSAValue, if_true: SSAValue, if_false: SSAValue) -> SSAValue:
    return arith.SelectOp(condition, if_true, if_false).result


def determinant(rows: list[list[SSAValue]]) -> SSAValue:
    """The determinant of the f64 matrix `rows` by elimination with partial pivoting (see the module docstring)."""
    n = len(rows)
    rows = [list(row) for row in rows]
    zero = constant(0.0, f64)
    sign = constant(1.0, f64)
    product: SSAValue | None = None
    for k in range(n):
        below = range(k + 1, n)
        if below:
            best = math.AbsFOp(rows[k][k]).result
            for r in below:
                candidate = math.AbsFOp(rows[r][k]).result
                swap = arith.CmpfOp(candidate, best, "ogt").result
                pivot_row, other_row = rows[k], rows[r]
                rows[k] = [*pivot_row[:k], *(_select(swap, b, a) for a, b in zip(pivot_row[k:], other_row[k:]))]
                rows[r] = [*other_row[:k], *(_select(swap, a, b) for a, b in zip(pivot_row[k:], other_row[k:]))]
                sign = _select(swap, arith.NegfOp(sign).result, sign)
                if r + 1 < n:
                    best = _select(swap, candidate, best)
        pivot = rows[k][k]
        product = pivot if product is None else arith.MulfOp(product, pivot).result
        if below:
            singular = arith.CmpfOp(pivot, zero, "oeq").result
            for r in below:
                factor = _select(singular, zero, arith.DivfOp(rows[r][k], pivot).result)
                reduced = (arith.SubfOp(rows[r][j], arith.MulfOp(factor, rows[k][j]).result).result for j in below)
                rows[r] = [*rows[r][: k + 1], *reduced]
    assert product is not None
    return arith.MulfOp(sign, product).result


class DetLowering(RewritePattern):
    """Lower det to one compute "det" over the batch running the unrolled elimination on its matrix."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.DetOp, rewriter: PatternRewriter) -> None:
        n = graph.shape_of(op.input)[-1]
        element = graph.element_type(op.result)

        def body(indices: Indices) -> SSAValue:
            positions = [index_constant(i) for i in range(n)]

            def entry(i: int, j: int) -> SSAValue:
                value = read(op.input, [*indices, positions[i], positions[j]])
                return value if element == f64 else arith.ExtFOp(value, f64).result

            value = determinant([[entry(i, j) for j in range(n)] for i in range(n)])
            return value if element == f64 else arith.TruncFOp(value, element).result

        rewriter.replace(op, build_compute("det", graph.shape_of(op.result), body))


PATTERNS: list[RewritePattern] = [DetLowering()]
