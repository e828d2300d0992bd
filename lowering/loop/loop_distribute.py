"""`loop-distribute`: split a loop whose body holds several loop nests into one loop per nest (loop fission).

`loop-distribute{kernel=k loop=i}` runs loop `i` once per nest of its body, in order: the first copy keeps the name
`i`, the others are `i_d1`, `i_d2`, .... The pure index computations of the body go before the copies where they do
not depend on the loop's index (a run-time remainder's `n % 16`), else into every copy whose nest uses them (a
split's `i_o + i_i`). This is what a split of a loop of a run-time trip count
needs to get its main part and its remainder into perfect nests of their own: a GEMM's column remainder beside the
full panels in each row of a register tile,

    loop.for "i_i" %i_i = 0 to 4 step 1 serial {
      %i = arith.addi %i_o, %i_i : index
      %rem = arith.remui %n, %c16 : index
      %main = arith.subi %n, %rem : index
      loop.for "j_o" %j_o = 0 to %main step 16 serial { ... c[%i, %j] ... }
      loop.for "j_t" %j_t = 0 to %rem step 1 serial { ... c[%i, %j_1] ... }
    }
    // becomes
    %rem = arith.remui %n, %c16 : index
    %main = arith.subi %n, %rem : index
    loop.for "i_i" %i_i = 0 to 4 step 1 serial {
      %i = arith.addi %i_o, %i_i : index
      loop.for "j_o" %j_o = 0 to %main step 16 serial { ... c[%i, %j] ... }
    }
    loop.for "i_i_d1" %i_i_d1 = 0 to 4 step 1 serial {
      %i_1 = arith.addi %i_o, %i_i_d1 : index
      loop.for "j_t" %j_t = 0 to %rem step 1 serial { ... c[%i_1, %j_1] ... }
    }

Distribution runs every iteration of one nest before any of the next, so it keeps the program's meaning only if no
element is touched by one nest at one iteration and by a later nest at another, one of them writing it. The pass
checks a sufficient condition, as `loop-fuse` does: every buffer that one nest writes and another accesses is
indexed, in some dimension, by the same affine function of the loop's index (a nonzero multiple of it plus terms that
do not change inside the loop) in every access of every nest; different iterations then touch different elements.
Otherwise, or where the body holds an op with side effects outside its nests, it fails naming the buffer or the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import Affine, affine_form, find_kernel, find_loop, walk_ops


def _inside(target: loop.ForOp, value: SSAValue) -> bool:
    """Whether `value` is defined inside `target` (its index, an inner loop's, or an op of its body)."""
    owner = value.block.parent_op() if isinstance(value, BlockArgument) else value.owner
    return isinstance(owner, Operation) and (owner is target or target.is_ancestor(owner))


def _form(target: loop.ForOp, value: SSAValue) -> Affine | None:
    """`value` as an affine form in `target`'s index and values invariant in `target`, or None (an inner loop's
    index, or a value computed inside the loop otherwise)."""
    form = affine_form(value, lambda term: not _inside(target, term))
    varying = [key for key in form or () if key is not None and key is not target.induction_var]
    return None if form is None or any(_inside(target, key) for key in varying) else form


@dataclass
class _Uses:
    """How one nest accesses one buffer: each dimension's form where every access agrees on it, and whether it
    writes the buffer."""

    forms: list[Affine | None]
    writes: bool


def _uses(target: loop.ForOp, nest: loop.ForOp) -> dict[SSAValue, _Uses]:
    found: dict[SSAValue, _Uses] = {}
    for access in walk_ops(nest):
        if not isinstance(access, memref.LoadOp | memref.StoreOp):
            continue
        forms = [_form(target, index) for index in access.indices]
        writes = isinstance(access, memref.StoreOp)
        if (known := found.get(access.memref)) is None:
            found[access.memref] = _Uses(forms, writes)
        else:
            known.forms = [mine if mine == theirs else None for mine, theirs in zip(known.forms, forms)]
            known.writes |= writes
    return found


def _separates_iterations(target: loop.ForOp, forms: Sequence[Affine | None]) -> bool:
    """Whether some dimension's form is a nonzero multiple of the loop's index plus invariant terms."""
    return any(form is not None and form.get(target.induction_var, 0) != 0 for form in forms)


@dataclass(frozen=True)
class LoopDistributePass(ModulePass):
    """Distribute loop `loop` of kernel `kernel` over the loop nests of its body."""

    name = "loop-distribute"

    kernel: str
    loop: str

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(f"{self.name}: cannot distribute '{self.loop}' of '{self.kernel}': {reason}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        body = list(target.body.block.ops)
        nests = [child for child in body if isinstance(child, loop.ForOp)]
        if len(nests) < 2:
            raise self.fail("its body holds fewer than two loop nests")
        for child in body:
            pure = child.name.startswith("arith.") or is_side_effect_free(child)  # a remainder's remui may trap
            if not isinstance(child, loop.ForOp) and (child.regions or not pure):
                raise self.fail(f"its body holds '{child.name}', which is neither a loop nor a pure computation")
        self._check(target, nests)
        _hoist_invariants(target)
        for index, nest in enumerate(nests):
            name = self.loop if index == 0 else f"{self.loop}_d{index}"
            Rewriter.insert_op(_copy(target, nest, name), InsertPoint.before(target))
        target.detach()
        target.erase()

    def _check(self, target: loop.ForOp, nests: list[loop.ForOp]) -> None:
        uses = [_uses(target, nest) for nest in nests]
        for first, mine in enumerate(uses):
            for theirs in uses[first + 1 :]:
                for buffer in mine.keys() & theirs.keys():
                    a, b = mine[buffer], theirs[buffer]
                    agreed = [x if x == y else None for x, y in zip(a.forms, b.forms)]
                    if (a.writes or b.writes) and not _separates_iterations(target, agreed):
                        name = buffer.name_hint or "a buffer"
                        raise self.fail(
                            f"'{name}' is written by one nest and accessed by another, not both at one affine "
                            "function of the loop's index"
                        )


def _hoist_invariants(target: loop.ForOp) -> None:
    """Move the body's computations that do not depend on the loop's index out before the loop, once for every copy
    (a remainder's bound: later primitives reorder loops only across their bounds' computations)."""
    for child in list(target.body.block.ops):
        if not isinstance(child, loop.ForOp) and not any(_inside(target, value) for value in child.operands):
            child.detach()
            Rewriter.insert_op(child, InsertPoint.before(target))


def _copy(target: loop.ForOp, nest: loop.ForOp, name: str) -> loop.ForOp:
    """A copy of `target` holding `nest` and the body's computations it uses."""
    body = target.body.block
    needed: set[Operation] = set()
    pending = [value for inner in walk_ops(nest) for value in inner.operands]
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, Operation) and owner.parent_block() is body and owner not in needed:
            needed.add(owner)
            pending += owner.operands
    block = Block(arg_types=[target.induction_var.type])
    mapping: dict[SSAValue, SSAValue] = {target.induction_var: block.args[0]}
    block.args[0].name_hint = name
    for child in body.ops:
        if child in needed or child is nest:
            block.add_op(clone_op(child, mapping))
    upper = target.dynamic_upper if target.is_dynamic else target.upper.value.data
    assert upper is not None
    return loop.ForOp(name, target.lower.value.data, upper, block, target.step.value.data, target.kind.data)
