"""`te-conv-layout`: let a 2-d convolution read its input channels-last (NHWC), from a transposed copy.

A direct convolution vectorized over output channels reads one input element per output column and input channel,
broadcast to all lanes. In NCHW consecutive input channels are a whole image plane apart, so a reduction over
channels touches a new cache line and page at every step (hundreds of streams for a 1x1 convolution over 256
channels); channels-last makes that reduction a unit-stride walk. The transposed copy is its own elementwise compute
(te-inline folds an explicit padding into it, but never the copy into the convolution, which would recompute it
per output channel):

    %y = te.compute "conv" (%n, %f, %h, %w) reduce sum (%c : 64, %kh : 3, %kw : 3) -> tensor<1x64x56x56xf32> {
      %x = te.read %p[%n, %c, %ih, %iw] : tensor<1x64x58x58xf32> ...
    // becomes
    %t = te.compute "conv_input_nhwc" (%n, %h, %w, %c) -> tensor<1x58x58x64xf32> {
      %v = te.read %p[%n, %c, %h, %w] : tensor<1x64x58x58xf32> ...
    }
    %y = te.compute "conv" ... { %x = te.read %t[%n, %ih, %iw, %c] : tensor<1x58x58x64xf32> ... }

Applies to "conv" computes (group 1) only, a run-time batch included (the copy takes it: `conv_batch.py`); run
between graph-to-te and te-inline, in the scheduled pipelines.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import build_compute, read
from minimlc.lowering.te.compute_rewriting import has_dead_op, rewrite_computes
from minimlc.lowering.te.conv_batch import batch_extent, has_only_a_run_time_batch

COPY_TAG = "conv_input_nhwc"
"""Tag of the channels-last copy this pass gives a convolution's input."""


class ConvInputLayout(RewritePattern):
    """Read a 2-d convolution's input from a channels-last copy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: te.ComputeOp, rewriter: PatternRewriter) -> None:
        if op.tag.data != "conv" or op.combiner is None or op.combiner.data != "sum":
            return
        if not has_only_a_run_time_batch(op):
            return
        rank = len(graph.shape_of(op.result))
        args = op.body.block.args
        if rank != 4 or len(args) != 7:
            return
        batch, channels, reduce_channel = args[0], args[1], args[rank]
        data = [
            r
            for r in op.body.walk()
            if isinstance(r, te.ReadOp)
            and len(r.indices) == 4
            and r.indices[0] is batch
            and r.indices[1] is reduce_channel
            and channels not in r.indices
        ]
        if len(data) != 1:
            return
        (source,) = data
        _, c, h, w = graph.shape_of(source.tensor)
        x = source.tensor
        transposed = build_compute(COPY_TAG, (batch_extent(op), h, w, c), lambda i: read(x, [i[0], i[3], i[1], i[2]]))
        rewriter.insert(transposed, InsertPoint.before(op))
        indices = list(source.indices)
        rewriter.replace(source, te.ReadOp(transposed.result, [indices[0], indices[2], indices[3], indices[1]]))


@dataclass(frozen=True)
class TeConvLayoutPass(ModulePass):
    """Make every group-1 2-d convolution read its input channels-last (see the module docstring)."""

    name = "te-conv-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """The walker (which also erases dead ops, to a fixpoint) only where the module has a dead op: a rewrite makes
        no op dead (the replaced read's tensor and indices stay read) and leaves nothing it would match again."""
        if has_dead_op(op):
            PatternRewriteWalker(GreedyRewritePatternApplier([ConvInputLayout()])).rewrite_module(op)
        else:
            rewrite_computes(op, ConvInputLayout())
