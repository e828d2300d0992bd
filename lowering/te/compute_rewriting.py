"""Applying a te pass's pattern to the ops it rewrites, without xDSL's `PatternRewriteWalker`, which puts every op of
the module on its worklist (every op of every compute body: ten times the computes) and offers each to the pattern.

    rewrite_computes(module, ConvToWinograd(...))      # each te.compute once, in program order
    rewrite_ops(module, (arith.FPToSIOp,), pattern)     # each fptosi once, in walk order, unless erased before

Both visit what the walker with `apply_recursively=False` and the pattern alone visits, in its order: the ops there
before the rewrites, but for those a rewrite erased; ops a rewrite inserts are not visited. (A pass whose walker
takes a `GreedyRewritePatternApplier` keeps it: that applier also erases the dead ops among all it is offered.)
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from minimlc.dialects import te


def computes_of(op: Operation) -> list[te.ComputeOp]:
    """The te.computes nested in `op`, in program order (not looking inside their bodies, which hold none)."""
    found: list[te.ComputeOp] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if isinstance(inner, te.ComputeOp):
                    found.append(inner)
                elif inner.regions:
                    found.extend(computes_of(inner))
    return found


def rewrite_computes(op: Operation, pattern: RewritePattern) -> bool:
    """Offer `pattern` each te.compute nested in `op`, in program order; whether it rewrote any."""
    changed = False
    for compute in computes_of(op):
        if compute.parent is not None:
            rewriter = PatternRewriter(compute)
            pattern.match_and_rewrite(compute, rewriter)
            changed |= rewriter.has_done_action
    return changed


def rewrite_ops(op: Operation, types: tuple[type[Operation], ...], pattern: RewritePattern) -> None:
    """Offer `pattern` each op of `types` nested in `op` (compute bodies included), in walk order."""
    for inner in [inner for inner in op.walk() if isinstance(inner, types)]:
        if inner.parent is not None:
            pattern.match_and_rewrite(inner, PatternRewriter(inner))
