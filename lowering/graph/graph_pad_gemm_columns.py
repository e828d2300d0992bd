"""`graph-pad-gemm-columns`: round a Gemm's or MatMul's output columns up to whole vectors where its B is a weight.

The GEMM rule vectorizes over the output columns, so a column count that no vector width divides (a classifier's
1000 classes, a language model's 50,257 tokens) leaves the kernel unscheduled: a scalar loop. On an AVX-512 Xeon,
light Inception v2's 1024 -> 1000 classifier ran at 5.7 GFLOP/s, a 32-token 256 -> 50,257 MatMul head at 5.5 (ONNX
Runtime 134). Zero columns of B (and of a Gemm's bias that has the columns) make it schedulable; a `graph.slice`
keeps the real columns, and te-inline folds that slice into its reader:

    %y = graph.gemm %x, %w, %b {trans_b} : (tensor<1x1024xf32>, tensor<1000x1024xf32>, tensor<1000xf32>)
        -> tensor<1x1000xf32>
    // becomes (16 lanes: 1000 -> 1024)
    %wp = graph.pad %w {pads = array<i64: 0, 0, 24, 0>, ...} : (...) -> tensor<1024x1024xf32>
    %bp = graph.pad %b {pads = array<i64: 0, 24>, ...} : (tensor<1000xf32>) -> tensor<1024xf32>
    %g = graph.gemm %x, %wp, %bp {trans_b} : (...) -> tensor<1x1024xf32>
    %y = graph.slice %g {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<1x1024xf32> -> tensor<1x1000xf32>

A MatMul's B is padded where it is a 2-D `graph.weight` (its last dimension); a Gemm's where B is a `graph.weight`
and the bias is absent, a weight, or broadcast along the columns: the padded copies are
computed from weights alone, which `loop-hoist-constants` moves to load time (run at O3 only, as
`graph-pad-conv-channels`, whose multiple it takes: `channel_padding_multiple`). Numerically neutral: the real columns
sum the same products in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from minimlc.dialects import graph
from minimlc.lowering.strategy.padding import channel_padding_multiple
from minimlc.lowering.target import Target, target_of


@dataclass
class GemmColumnPadding(RewritePattern):
    """Pad a Gemm's weight B (and its bias) to a multiple of `channel_padding_multiple` columns on `target` and slice
    the real columns back out."""

    target: Target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GemmOp, rewriter: PatternRewriter) -> None:
        n = graph.shape_of(op.result)[1]
        extra = -n % channel_padding_multiple(n, self.target)
        if not extra or not _is_weight(op.b):
            return
        bias = op.c
        pads_bias = bias is not None and graph.shape_of(bias)[-1:] == (n,)
        if pads_bias and not _is_weight(bias):  # type: ignore[arg-type]
            return  # a bias computed per call would be copied per call
        weight = padded_at_end(op.b, 0 if op.trans_b is not None else 1, extra)
        new_ops = [weight]
        if pads_bias:
            new_ops.append(padded_bias := padded_at_end(bias, -1, extra, name="bias_padded"))  # type: ignore[arg-type]
            bias = padded_bias.result
        gemm = graph.GemmOp(
            op.a,
            weight.result,
            bias,
            alpha=op.alpha.value.data,
            beta=op.beta.value.data,
            trans_a=op.trans_a is not None,
            trans_b=op.trans_b is not None,
        )
        _replace_with_real_columns(rewriter, op, [*new_ops, gemm])


@dataclass
class MatMulColumnPadding(RewritePattern):
    """Pad a MatMul's 2-D weight B to a multiple of `channel_padding_multiple` columns on `target` and slice the real
    columns back out of the last dimension."""

    target: Target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulOp, rewriter: PatternRewriter) -> None:
        weight_shape = graph.shape_of(op.rhs)
        if len(weight_shape) != 2 or not _is_weight(op.rhs):
            return
        n = weight_shape[1]
        extra = -n % channel_padding_multiple(n, self.target)
        if not extra:
            return
        weight = padded_at_end(op.rhs, 1, extra)
        _replace_with_real_columns(rewriter, op, [weight, graph.MatMulOp(op.lhs, weight.result)])


def _is_weight(value: SSAValue) -> bool:
    return isinstance(value.owner, graph.WeightOp)


def padded_at_end(
    value: SSAValue, axis: int, extra: int, fill: float = 0.0, name: str = "weight_padded"
) -> graph.PadOp:
    """`value` with `extra` elements of `fill` after the end of `axis` (negative: from the end), named `name`."""
    rank = len(graph.shape_of(value))
    pad = graph.PadOp(value, [0] * rank + [extra if d == axis % rank else 0 for d in range(rank)], value=fill)
    pad.result.name_hint = name
    return pad


def _replace_with_real_columns(rewriter: PatternRewriter, op: Operation, new_ops: list[Operation]) -> None:
    """Replace `op` by `new_ops` (the last computes its result with padded columns) and a slice of the real ones."""
    padded = new_ops[-1].results[0]
    padded.name_hint = "padded_columns"
    shape = graph.shape_of(op.results[0])
    real = graph.SliceOp(padded, [0] * len(shape), [1] * len(shape), shape)
    real.result.name_hint = op.results[0].name_hint
    rewriter.replace(op, [*new_ops, real])


@dataclass(frozen=True)
class GraphPadGemmColumnsPass(ModulePass):
    """Pad the output columns of every Gemm and MatMul with a weight B to a multiple of the vector width (see the
    module docstring)."""

    name = "graph-pad-gemm-columns"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        patterns = [GemmColumnPadding(target), MatMulColumnPadding(target)]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)  # type: ignore[arg-type]
