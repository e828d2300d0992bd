"""`loop-reorder`: permute the loops of a perfect nest (TVM `reorder`).

`loop-reorder{kernel=matmul_0 order=j,i}` makes `j` the outer and `i` the inner loop. The named loops must form one
chain of nested loops with no loop left out between them, and the nest must be perfect: between two of them only
index arithmetic, which moves to the innermost body. Bounds do not depend on the nest's indices (a run-time upper
bound is an `index` value computed outside the nest, or between its loops from values outside it: that arithmetic
moves in front of the nest), so every order is well defined; reductions
into memory (`out[i, j] += ...`, see `loop-decompose-reduction`) are reordered as TVM does, as if sums were
associative.

    loop.for "i" %i = 0 to 4 step 1 serial {
      loop.for "j" %j = 0 to 8 step 1 serial { body(%i, %j) }
    }
    // becomes
    loop.for "j" %j = 0 to 8 step 1 serial {
      loop.for "i" %i = 0 to 4 step 1 serial { body(%i, %j) }
    }
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import defined_within, find_kernel, find_loops, is_movable, new_loop


def perfect_chain(kernel: func.FuncOp, names: Sequence[str], pass_name: str) -> list[loop.ForOp]:
    """The named loops as a chain, outermost first, after moving index arithmetic to the innermost body."""
    loops = find_loops(kernel, pass_name, names)
    if len(set(names)) != len(names):
        raise DiagnosticException(f"{pass_name}: a loop is named twice in {','.join(names)}")
    chain = [max(loops, key=_depth)]
    while len(chain) < len(loops):
        parent = chain[-1].parent_op()
        if not isinstance(parent, loop.ForOp) or parent not in loops:
            missing = parent.loop_name.data if isinstance(parent, loop.ForOp) else None
            reason = f"loop '{missing}' lies between them" if missing else "they are not nested in one another"
            raise DiagnosticException(
                f"{pass_name}: loops {', '.join(names)} of kernel '{kernel.sym_name.data}' are not one nest: {reason}"
            )
        chain.append(parent)
    chain.reverse()
    _hoist_dynamic_uppers(kernel, chain, pass_name)
    innermost = chain[-1].body.block
    for outer, inner in itertools.pairwise(chain):
        for op in list(outer.body.block.ops):
            if op is inner:
                continue
            if isinstance(op, loop.ForOp) and op.loop_name.data.endswith("_t"):
                raise DiagnosticException(
                    f"{pass_name}: loops '{outer.loop_name.data}' and '{inner.loop_name.data}' of kernel "
                    f"'{kernel.sym_name.data}' are not perfectly nested: loop '{op.loop_name.data}' lies beside them: "
                    "the tail of a split by a factor that does not divide its loop"
                )
            if not is_movable(op):
                raise DiagnosticException(
                    f"{pass_name}: loops '{outer.loop_name.data}' and '{inner.loop_name.data}' of kernel "
                    f"'{kernel.sym_name.data}' are not perfectly nested ('{op.name}' between them); "
                    "apply loop-decompose-reduction first"
                )
    moved = [op for outer in chain[:-1] for op in outer.body.block.ops if not isinstance(op, loop.ForOp)]
    for op in moved:
        op.detach()
    if moved:
        if innermost.first_op is None:
            innermost.add_ops(moved)
        else:
            innermost.insert_ops_before(moved, innermost.first_op)
    return chain


BOUND_ARITHMETIC = (
    *(arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp),
    *(arith.DivUIOp, arith.DivSIOp, arith.RemUIOp, arith.RemSIOp),
)
"""The index arithmetic a run-time bound may be computed by between the loops of a nest (what `loop-split` emits)."""


def _hoist_dynamic_uppers(kernel: func.FuncOp, chain: list[loop.ForOp], pass_name: str) -> None:
    """Move the arithmetic that computes a run-time upper bound of a loop of `chain` from between its loops to before
    the nest (a split's `n - n % f`), so that any order of the loops still sees its bounds; refuse a bound that
    depends on a loop of the nest (the iteration space would not be a box)."""
    outer = chain[0]
    for member in chain[1:]:
        upper = member.dynamic_upper
        if upper is None:
            continue
        for op in _bound_ops(upper, outer, kernel, member, pass_name):
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(outer))


def _bound_ops(
    value: SSAValue, outer: loop.ForOp, kernel: func.FuncOp, member: loop.ForOp, pass_name: str
) -> list[Operation]:
    """The `BOUND_ARITHMETIC` ops inside `outer` that compute `value`, in order (empty if it is defined outside)."""
    if not defined_within(value, outer.body.block):
        return []
    owner = value.owner
    if not isinstance(owner, BOUND_ARITHMETIC):
        raise DiagnosticException(
            f"{pass_name}: the run-time upper bound of loop '{member.loop_name.data}' of kernel "
            f"'{kernel.sym_name.data}' depends on an index of the nest: its loops cannot be reordered"
        )
    ops: list[Operation] = []
    for operand in owner.operands:
        ops += [op for op in _bound_ops(operand, outer, kernel, member, pass_name) if op not in ops]
    return [*ops, owner]


def _depth(op: loop.ForOp) -> int:
    depth = 0
    parent = op.parent_op()
    while parent is not None:
        depth += 1
        parent = parent.parent_op()
    return depth


def rebuild_nest(chain: Sequence[loop.ForOp], order: Sequence[loop.ForOp]) -> loop.ForOp:
    """Replace the perfect nest `chain` by its loops in `order`; returns the new outermost loop."""
    new_loops = [
        new_loop(old.loop_name.data, old.lower.value.data, _upper(old), old.step.value.data, old.kind.data)
        for old in order
    ]
    for outer, inner in itertools.pairwise(new_loops):
        outer.body.block.add_op(inner)
    for old, new in zip(order, new_loops):
        new.induction_var.name_hint = old.induction_var.name_hint
        old.induction_var.replace_all_uses_with(new.induction_var)
    for op in list(chain[-1].body.block.ops):
        op.detach()
        new_loops[-1].body.block.add_op(op)
    Rewriter.replace_op(chain[0], new_loops[0])
    return new_loops[0]


def _upper(target: loop.ForOp) -> int | SSAValue:
    """The upper bound of `target`: its constant, or the `index` value of a run-time trip count."""
    return target.dynamic_upper if target.dynamic_upper is not None else target.upper.value.data


@dataclass(frozen=True)
class LoopReorderPass(ModulePass):
    """Reorder the perfectly nested loops `order` of kernel `kernel` to that order, outermost first."""

    name = "loop-reorder"

    kernel: str
    order: tuple[str, ...]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        chain = perfect_chain(kernel, self.order, self.name)
        by_name = {candidate.loop_name.data: candidate for candidate in chain}
        rebuild_nest(chain, [by_name[name] for name in self.order])
