"""`graph-pad-attention-keys`: round an attention's key count up to whole vectors with masked keys, so that its two
batched GEMMs are scheduled instead of fused into `graph.attention`'s dot products.

The batched GEMM schedule vectorizes the scores' [S, D] x [D, T] product over the T keys, and its column tile must
divide T; ViT's 197 tokens (a class token beside 14 x 14 patches) divide by no vector width, so such attentions were
fused (`graph-fuse-attention`) into a kernel computing one dot product and a horizontal sum per score (23 GFLOP/s on
Zen 3, a third of ViT's time, where the GEMMs of BERT's 128 tokens run at 52-81). Zero keys and value rows pad T to
`channel_padding_multiple` (208 on AVX2), and a mask of `MASKED` on the padded keys' logits makes their
probabilities zero (the softmax's exponential flushes `MASKED - max` to 0 or the smallest normal, against at least 1
for the largest key), so the padded rows of V, which are zero, add nothing:

    %s = graph.matmul %q, %kt : (tensor<1x3x197x64xf32>, tensor<1x3x64x197xf32>) -> tensor<1x3x197x197xf32>
    %l = graph.mul %s, %scale ; %p = graph.softmax %l {axis = 3} ; %y = graph.matmul %p, %v
    // becomes
    %ktp = graph.pad %kt {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 11>, ...} : (...) -> tensor<1x3x64x208xf32>
    %s = graph.matmul %q, %ktp ; %l = graph.mul %s, %scale
    %mask = graph.pad %zeros {pads = array<i64: 0, 11>, value = -1.0e+30 : f32} : (tensor<197xf32>) -> tensor<208xf32>
    %p = graph.softmax (graph.add %l, %mask) {axis = 3}
    %vp = graph.pad %v {pads = array<i64: 0, 0, 0, 0, 0, 0, 11, 0>, ...} : (...) -> tensor<1x3x208x64xf32>
    %y = graph.matmul %p, %vp : (tensor<1x3x197x208xf32>, tensor<1x3x208x64xf32>) -> tensor<1x3x197x64xf32>

A bias added before the softmax is padded along the keys where it has them. Matches what `graph-fuse-attention`
matches (from the last matmul back, every intermediate used once), with a static key count, which it runs before.
Measured in `docs/measurements.md` ("Attention keys padded").
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Operation
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
from minimlc.lowering.graph.graph_fuse_attention import attention_chain
from minimlc.lowering.graph.graph_pad_gemm_columns import padded_at_end
from minimlc.lowering.strategy.padding import channel_padding_multiple
from minimlc.lowering.target import Target, target_of

MASKED = -1.0e30
"""The logit of a padded key: finite (the mask is printed and parsed as IR), far below any real logit."""


@dataclass
class AttentionKeyPadding(RewritePattern):
    """Pad the keys of matmul(softmax(matmul(q, kt) * scale + bias), v) to `channel_padding_multiple` on `target`
    (module docstring)."""

    target: Target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulOp, rewriter: PatternRewriter) -> None:
        chain = attention_chain(op)
        if chain is None:
            return
        keys = shape_of(chain.scores.product.rhs)[-1]
        if keys < 2 or graph.element_type(op.result) != f32:
            return
        extra = -keys % channel_padding_multiple(keys, self.target)
        if not extra:
            return
        new: list[Operation] = [key_t := padded_at_end(chain.scores.product.rhs, -1, extra)]
        new.append(logits := graph.MatMulOp(chain.scores.product.lhs, key_t.result))
        logits.result.name_hint = "scores"
        if (scaler := chain.scores.scaler) is not None:
            new.append(logits := type(scaler)(logits.result, chain.scores.factor))  # pyright: ignore[reportCallIssue]
            logits.results[0].name_hint = "scores_scaled"
        if chain.bias is not None:
            bias = chain.bias
            if shape_of(bias)[-1:] == (keys,):
                new.append(padded_bias := padded_at_end(bias, -1, extra, name="bias_padded"))
                bias = padded_bias.result
            new.append(logits := graph.AddOp(logits.results[0], bias))
            logits.result.name_hint = "logits"
        new.append(zeros := graph.ConstantOp(0.0, (keys,)))
        new.append(mask := padded_at_end(zeros.result, 0, extra, MASKED))
        new.append(masked := graph.AddOp(logits.results[0], mask.result))
        new.append(probabilities := graph.SoftmaxOp(masked.result, len(shape_of(op.result)) - 1))
        new.append(value := padded_at_end(op.rhs, -2, extra))
        new.append(product := graph.MatMulOp(probabilities.result, value.result))
        names = {key_t: "keys_padded", zeros: "keys", mask: "padded_keys_mask", masked: "logits_masked"}
        names |= {probabilities: "probabilities", value: "values_padded"}
        for named, hint in names.items():
            named.results[0].name_hint = hint
        product.result.name_hint = op.result.name_hint
        chain.replace(rewriter, op, new)


@dataclass(frozen=True)
class GraphPadAttentionKeysPass(ModulePass):
    """Pad attention key counts that no vector width divides, masking the padded keys (see the module docstring)."""

    name = "graph-pad-attention-keys"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = AttentionKeyPadding(target_of(op))
        PatternRewriteWalker(GreedyRewritePatternApplier([pattern])).rewrite_module(op)
