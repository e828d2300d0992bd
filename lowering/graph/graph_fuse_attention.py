"""`graph-fuse-attention`: the matmul, scale, bias, softmax and matmul chain of an attention as one
`graph.attention`, which `graph-to-te` lowers to one kernel computed a query row at a time.

Exporters write scaled dot-product attention as separate ops; this pass finds them from the last matmul back:

    %s = graph.matmul %q, (graph.transpose %k {perm = [0, 1, 3, 2]})   // [B, H, S, T]
    %l = graph.mul %s, %scale          // or graph.div %s, %root; optional; a one-element scale
    %a = graph.add %l, %bias           // optional; either operand order
    %p = graph.softmax %a {axis = 3}
    %y = graph.matmul %p, %v
    // becomes
    %vt = graph.transpose %v {perm = [0, 1, 3, 2]}
    %y = graph.attention %q, %k, %vt, %scale, %bias   // a divisor becomes graph.reciprocal %root

Every intermediate must have that one use, the three operands the same batch axes (no broadcasting) and the
softmax run over the key axis. Models with more than one key or value (T > 1, E > 1) only: the fused kernel's row
schedule tells its stages apart by those extents. Numerically the same up to rounding (the softmax denominator
divides the E outputs instead of the T probabilities).

By default only attentions whose key count T is not a multiple of the target's vector width are fused: there the
batched GEMM schedule cannot take the [S, D] x [D, T] product (its column tile must divide T) and that product ran
unscheduled (ViT's 197 tokens: 3.6 GFLOP/s, 38 % of the model's time), while where the schedule applies its two
GEMMs beat the fused kernel, whose products are one dot product (and one horizontal sum) per element. Measured on
`bench_models.py`'s transformers, one thread, interleaved in one process (O3 with and without this pass): ViT
0.66x the unfused time, BERT (128 tokens) 1.35x when forced (`aligned=true` fuses every match). In the O2 and O3
pipelines `graph-pad-attention-keys` runs first and pads a static key count to whole vectors (ViT then runs its GEMMs,
0.85x the fused time), so what this pass fuses there are attentions over a run-time key count (generation's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
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
from minimlc.dialects.graph import shape_of
from minimlc.lowering.target import target_of


@dataclass
class _Scores:
    """The scores' matmul, the scale op (None: unscaled) and its one-element factor (divisor if `divides`)."""

    product: graph.MatMulOp
    scaler: graph.MulOp | graph.DivOp | None = None
    factor: SSAValue | None = None
    divides: bool = False


def _one_element(value: SSAValue) -> bool:
    return math.prod(shape_of(value)) == 1


def _scores(value: SSAValue) -> _Scores | None:
    """The scaled (or not) query-key product that `value` is, if it is one used only there."""
    owner = value.owner
    if not value.has_one_use():
        return None
    if isinstance(owner, graph.MatMulOp):
        return _Scores(owner)
    if isinstance(owner, graph.MulOp | graph.DivOp) and shape_of(owner.lhs) == shape_of(value):
        pairs = [(owner.lhs, owner.rhs)] + ([(owner.rhs, owner.lhs)] if isinstance(owner, graph.MulOp) else [])
        for product, factor in pairs:
            if isinstance(product.owner, graph.MatMulOp) and product.has_one_use() and _one_element(factor):
                return _Scores(product.owner, owner, factor, isinstance(owner, graph.DivOp))
    return None


def _swapped_last(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


@dataclass
class AttentionChain:
    """The ops of `matmul(softmax(matmul(q, kt) * scale + bias), v)` before its last matmul."""

    softmax: graph.SoftmaxOp
    adder: graph.AddOp | None
    """The bias's add (None: no bias)."""
    bias: SSAValue | None
    scores: _Scores

    def replace(
        self, rewriter: PatternRewriter, last: Operation, new_ops: list[Operation], also_dead: Sequence[Operation] = ()
    ) -> None:
        """Replace the chain's last matmul `last` by `new_ops`, then erase the chain (users first) and `also_dead`."""
        rewriter.replace(last, new_ops)
        for erased in (self.softmax, self.adder, self.scores.scaler, self.scores.product, *also_dead):
            if erased is not None:
                rewriter.erase(erased)


def attention_chain(op: graph.MatMulOp) -> AttentionChain | None:
    """The attention chain whose last matmul `op` is: every intermediate used once, the softmax over the last axis,
    query, keys and values of `op`'s rank with the same batch axes; else None."""
    softmax, rank = op.lhs.owner, len(shape_of(op.result))
    if not isinstance(softmax, graph.SoftmaxOp) or not op.lhs.has_one_use() or rank < 2:
        return None
    if softmax.axis.value.data != rank - 1:
        return None
    logits, bias, adder = softmax.input, None, softmax.input.owner
    if isinstance(adder, graph.AddOp) and logits.has_one_use():
        for side, other in ((adder.lhs, adder.rhs), (adder.rhs, adder.lhs)):
            if shape_of(side) == shape_of(logits) and _scores(side) is not None:
                logits, bias = side, other
                break
    scores = _scores(logits)
    if scores is None:
        return None
    shapes = [shape_of(x) for x in (scores.product.lhs, scores.product.rhs, op.rhs)]
    if any(len(shape) != rank for shape in shapes) or len({shape[:-2] for shape in shapes}) != 1:
        return None
    return AttentionChain(softmax, adder if bias is not None else None, bias, scores)  # type: ignore[arg-type]


@dataclass
class AttentionFusion(RewritePattern):
    """Rewrite matmul(softmax(matmul(q, kt) * scale + bias), v) as graph.attention (module docstring), where the
    key count is not a multiple of `lanes` (every match if None)."""

    lanes: int | None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulOp, rewriter: PatternRewriter) -> None:
        chain = attention_chain(op)
        if chain is None:
            return
        bias, scores, rank = chain.bias, chain.scores, len(shape_of(op.result))
        query, key_t, value = scores.product.lhs, scores.product.rhs, op.rhs
        shapes = [shape_of(x) for x in (query, key_t, value)]
        keys = shapes[1][-1]
        if graph.element_type(key_t) != f32 or keys < 2 or shapes[2][-1] < 2:
            return
        if self.lanes is not None and keys % self.lanes == 0:
            return
        added: list[Operation] = []
        transposed = key_t.owner
        if isinstance(transposed, graph.TransposeOp) and list(transposed.perm.get_values()) == _swapped_last(rank):
            key = transposed.input
        else:
            added.append(graph.TransposeOp(key_t, _swapped_last(rank)))
            key = added[-1].results[0]
        added.append(graph.TransposeOp(value, _swapped_last(rank)))
        value_t = added[-1].results[0]
        if scores.factor is None:
            added.append(graph.ConstantOp(1.0, (1,)))
            factor = added[-1].results[0]
        elif scores.divides:
            added.append(graph.ReciprocalOp(scores.factor))
            factor = added[-1].results[0]
        else:
            factor = scores.factor
        fused = graph.AttentionOp(query, key, value_t, factor, bias)
        fused.result.name_hint = op.result.name_hint
        transpose_dead = key is not key_t and key_t.has_one_use()
        chain.replace(rewriter, op, [*added, fused], [transposed] if transpose_dead else [])  # type: ignore[list-item]


@dataclass(frozen=True)
class GraphFuseAttentionPass(ModulePass):
    """Fuse attention's matmul, scale, bias, softmax and matmul chains into graph.attention ops."""

    name = "graph-fuse-attention"

    aligned: bool = False
    """Fuse also where the key count is a multiple of the vector width (the batched GEMMs are faster there)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lanes = None if self.aligned else target_of(op).vector_lanes
        PatternRewriteWalker(GreedyRewritePatternApplier([AttentionFusion(lanes)])).rewrite_module(op)
