"""Lower `graph.call_extern` to `te.call_extern`: the call stays opaque (no compute), on the same tensors.

    %y = graph.call_extern "env.relu" (%x) : (tensor<8xf32>) -> tensor<8xf32>
    // becomes
    %y = te.call_extern "env.relu" (%x) : (tensor<8xf32>) -> tensor<8xf32>
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te


class CallExternLowering(RewritePattern):
    """`graph.call_extern` -> `te.call_extern`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CallExternOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, te.CallExternOp(op.callee.data, list(op.args), op.res.types))


PATTERNS: list[RewritePattern] = [CallExternLowering()]
