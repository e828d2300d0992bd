"""Applying a te pass's pattern to the ops it rewrites, without xDSL's `PatternRewriteWalker`, which puts every op of
the module on its worklist (every op of every compute body: ten times the computes) and offers each to the pattern.

    rewrite_computes(module, ConvToWinograd(...))      # each te.compute once, in program order
    rewrite_ops(module, (arith.FPToSIOp,), pattern)     # each fptosi once, in walk order, unless erased before

Both visit what the walker with `apply_recursively=False` and the pattern alone visits, in its order: the ops there
before the rewrites, but for those a rewrite erased; ops a rewrite inserts are not visited. A walker with a
`GreedyRewritePatternApplier` also erases the trivially dead ops among all it is offered: a pass whose rewrites make
no op dead that the walker has not yet offered erases them first with `erase_dead_ops` (te-expand-math, whose walker
does not apply recursively), or uses these only where `has_dead_op` finds none and keeps the walker otherwise
(te-conv-layout, whose walker erases dead ops to a fixpoint).

    erase_dead_ops(module); rewrite_ops(module, (math.ExpOp, ...), pattern)   # te-expand-math
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead, would_be_trivially_dead

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


def has_dead_op(op: Operation) -> bool:
    """Whether an op nested in `op` is trivially dead (xDSL's `is_trivially_dead`: no result used, no effect): what a
    `GreedyRewritePatternApplier` erases when offered it."""
    for region in op.regions:
        for inner in region.walk():
            for result in inner.results:
                if result.first_use is not None:
                    break
            else:
                if would_be_trivially_dead(inner):
                    return True
    return False


def erase_dead_ops(op: Operation) -> None:
    """Erase each op nested in `op` that is trivially dead when reached in walk order, with what it holds: what a
    walker with a `GreedyRewritePatternApplier` and `apply_recursively=False` erases, before or between its rewrites
    alike where these make dead only ops before the one rewritten (an op's users come after it, so erasing one makes
    dead only ops already passed)."""
    erased: set[Operation] = set()
    for inner in [inner for region in op.regions for inner in region.walk()]:
        if inner in erased or not is_trivially_dead(inner):
            continue
        if inner.regions:
            erased.update(inner.walk())
        Rewriter.erase_op(inner)
