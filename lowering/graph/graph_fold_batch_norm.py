"""`graph-fold-batch-norm`: fold an inference batch norm into the convolution, GEMM or matmul that feeds it.

With `s = scale / sqrt(var + epsilon)` per channel, `batch_norm(conv(x, W, b))` is `conv(x, W * s[:, None, ...],
(b - mean) * s + bias)`. The new weight and bias are written as graph ops on the weight handles, so they are
computations on weights alone, which `loop-hoist-constants` runs once at load time; the batch-norm kernel goes away.

    %y = graph.conv %x, %w, %b {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %n = graph.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 1.0e-05 : f32} : (...) -> tensor<1x4x6x6xf32>
    // becomes
    %eps = graph.constant {value = 1.0e-05 : f32} : tensor<4xf32>
    %s = graph.div %gamma, (graph.sqrt (graph.add %var, %eps))
    %w2 = graph.mul %w, (graph.reshape %s : tensor<4xf32> -> tensor<4x1x1x1xf32>)
    %b2 = graph.add (graph.mul (graph.sub %b, %mean), %s), %beta
    %n = graph.conv %x, %w2, %b2 {...}

The same holds along axis 1 of a 2-D GEMM (`op(b)` scaled by column, the bias `beta * c` shifted) and of a 2-D
matmul with a 2-D right operand (which gains a `graph.add` of the new bias). A batch norm is folded only when the
producer has no other use and its weight, its bias and the batch norm's parameters are all computed from weights:
otherwise the new weight would be recomputed on every call. Numerically neutral up to rounding (the product is
reassociated).
"""

from __future__ import annotations

from collections.abc import Sequence
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


def is_weight_derived(value: SSAValue) -> bool:
    """Whether `value` is a weight, a constant, or computed by graph ops from those alone."""
    owner = value.owner
    if isinstance(owner, graph.WeightOp | graph.ConstantOp):
        return True
    if not isinstance(owner, Operation) or not owner.name.startswith("graph.") or not owner.operands:
        return False
    return all(is_weight_derived(operand) for operand in owner.operands)


class _FoldBuilder:
    """Collects the ops that compute the folded weight and bias, in order."""

    def __init__(self, norm: graph.BatchNormOp):
        self.norm = norm
        self.ops: list[Operation] = []
        channels = graph.shape_of(norm.mean)[0]
        epsilon = self.emit(graph.ConstantOp(norm.epsilon.value.data, (channels,)))
        root = self.emit(graph.SqrtOp(self.emit(graph.AddOp(norm.var, epsilon))))
        self.factor = self.emit(graph.DivOp(norm.scale, root))
        """`scale / sqrt(var + epsilon)`, one value per channel."""

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def scaled_weight(self, weight: SSAValue, channel_axis: int) -> SSAValue:
        """`weight` with every slice along `channel_axis` multiplied by its channel's factor."""
        shape = graph.shape_of(weight)
        factor = self.factor
        if channel_axis != len(shape) - 1:
            column = [1] * len(shape)
            column[channel_axis] = shape[channel_axis]
            factor = self.emit(graph.ReshapeOp(factor, column))
        return self.emit(graph.MulOp(weight, factor))

    def shifted_bias(self, bias: SSAValue | None) -> SSAValue:
        """`(bias - mean) * factor + beta`, or `-mean * factor + beta` without a bias."""
        norm = self.norm
        centred = self.emit(graph.NegOp(norm.mean) if bias is None else graph.SubOp(bias, norm.mean))
        return self.emit(graph.AddOp(self.emit(graph.MulOp(centred, self.factor)), norm.bias))


def _all_weight_derived(values: Sequence[SSAValue | None]) -> bool:
    return all(value is None or is_weight_derived(value) for value in values)


class BatchNormFolding(RewritePattern):
    """Fold a batch_norm into the conv, gemm or matmul that is its input's only producer and user."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if not op.input.has_one_use() or not _all_weight_derived([op.scale, op.bias, op.mean, op.var]):
            return
        if isinstance(producer, graph.ConvOp):
            folded = self._fold_conv(producer, op)
        elif isinstance(producer, graph.GemmOp):
            folded = self._fold_gemm(producer, op)
        elif isinstance(producer, graph.MatMulOp):
            folded = self._fold_matmul(producer, op)
        else:
            return
        if folded is None:
            return
        folded[-1].results[0].name_hint = op.result.name_hint
        rewriter.replace(op, folded)
        rewriter.erase(producer)

    @staticmethod
    def _fold_conv(conv: graph.ConvOp, norm: graph.BatchNormOp) -> list[Operation] | None:
        if not _all_weight_derived([conv.weight, conv.bias]):
            return None
        build = _FoldBuilder(norm)
        weight = build.scaled_weight(conv.weight, 0)
        bias = build.shifted_bias(conv.bias)
        folded = graph.ConvOp(
            conv.input,
            weight,
            bias,
            strides=conv.strides.get_values(),
            pads=conv.pads.get_values(),
            dilations=conv.dilations.get_values(),
            group=conv.group.value.data,
        )
        return [*build.ops, folded]

    @staticmethod
    def _fold_gemm(gemm: graph.GemmOp, norm: graph.BatchNormOp) -> list[Operation] | None:
        if not _all_weight_derived([gemm.b, gemm.c]):
            return None
        build = _FoldBuilder(norm)
        trans_b = gemm.trans_b is not None
        weight = build.scaled_weight(gemm.b, 0 if trans_b else 1)
        c = gemm.c
        beta = gemm.beta.value.data
        if c is not None and beta != 1.0:
            c = build.emit(graph.MulOp(c, build.emit(graph.ConstantOp(beta, graph.shape_of(c)))))
        folded = graph.GemmOp(
            gemm.a,
            weight,
            build.shifted_bias(c),
            alpha=gemm.alpha.value.data,
            trans_a=gemm.trans_a is not None,
            trans_b=trans_b,
        )
        return [*build.ops, folded]

    @staticmethod
    def _fold_matmul(matmul: graph.MatMulOp, norm: graph.BatchNormOp) -> list[Operation] | None:
        if len(graph.shape_of(matmul.result)) != 2 or len(graph.shape_of(matmul.rhs)) != 2:
            return None
        if not is_weight_derived(matmul.rhs):
            return None
        build = _FoldBuilder(norm)
        product = build.emit(graph.MatMulOp(matmul.lhs, build.scaled_weight(matmul.rhs, 1)))
        bias = build.shifted_bias(None)
        return [*build.ops, graph.AddOp(product, bias)]


@dataclass(frozen=True)
class GraphFoldBatchNormPass(ModulePass):
    """Fold inference batch norms into the preceding conv, gemm or matmul, as graph ops on its weights."""

    name = "graph-fold-batch-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([BatchNormFolding()])).rewrite_module(op)
