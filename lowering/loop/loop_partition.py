"""`loop-partition`: split one loop into consecutive loops at given points, and fold in each the comparisons and
clamps of the index that its range decides (TVM's loop partition).

`loop-partition{kernel=concat_0 loop=i3 points=64}` runs loop `i3` as `i3_p0` over [0, 64) then `i3_p1` over
[64, 128). In each piece, an index computed from loop indices and constants has a known range; a comparison or a
signed min/max the range decides becomes a constant or one of its operands, a select on a constant condition its
chosen value, and what no longer has a use goes. A channels-last concatenation, which picks its input per channel
and reads each at a clamped channel, becomes one plain read per piece, which vectorizes:

    loop.for "i3" %i3 = 0 to 128 step 1 serial {
      %a = memref.load %in0[%i0, %i1, %i2, (minsi %i3, 63)] ; %b = memref.load %in1[..., (maxsi (%i3 - 64), 0)]
      %v = arith.select (cmpi slt, %i3, 64), %a, %b ; memref.store %v, %out[%i0, %i1, %i2, %i3]
    }
    // becomes
    loop.for "i3_p0" %i3_p0 = 0 to 64 step 1 serial { memref.store (load %in0[..., %i3_p0]), %out[..., %i3_p0] }
    loop.for "i3_p1" %i3_p1 = 64 to 128 step 1 serial { memref.store (load %in1[..., %i3_p1 - 64]), %out[...] }

Points must lie strictly inside the loop's range, in increasing order, on its steps (a loop of a run-time trip count
is refused; an index of one has no known range inside a piece). Loops inside a piece are
renamed `<name>_in_<piece>` so that names stay unique.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import check_new_names, find_kernel, find_loop, loops_of, walk_ops

Range = tuple[int, int]
"""The smallest and largest value an index takes."""

_DECIDED = {
    "slt": lambda a, b: (a[1] < b[0], a[0] >= b[1]),
    "sle": lambda a, b: (a[1] <= b[0], a[0] > b[1]),
    "sgt": lambda a, b: (a[0] > b[1], a[1] <= b[0]),
    "sge": lambda a, b: (a[0] >= b[1], a[1] < b[0]),
    "eq": lambda a, b: (a[0] == a[1] == b[0] == b[1], a[1] < b[0] or b[1] < a[0]),
    "ne": lambda a, b: (a[1] < b[0] or b[1] < a[0], a[0] == a[1] == b[0] == b[1]),
}
"""Per signed predicate, whether two ranges make it (always true, always false)."""


def partition_loop(
    kernel: func.FuncOp, target: loop.ForOp, points: tuple[int, ...], pass_name: str
) -> list[loop.ForOp]:
    """Replace `target` by one copy per range between its bounds and `points`, each folded; returns the pieces (the
    last is `target` itself, made after the copies: a copy fewer of the nest)."""
    name = target.loop_name.data
    if target.is_dynamic:
        raise DiagnosticException(
            f"{pass_name}: loop '{name}' of kernel '{kernel.sym_name.data}' runs a run-time number of iterations: "
            "points inside it cannot be checked"
        )
    lower, step = target.lower.value.data, target.step.value.data
    upper = target.upper.value.data
    bounds = [lower, *points, upper]
    if any(a >= b for a, b in itertools.pairwise(bounds)) or any((p - lower) % step for p in points):
        raise DiagnosticException(
            f"{pass_name}: points {', '.join(map(str, points))} are not increasing steps strictly inside loop "
            f"'{name}' ({lower} to {upper} step {step}) of kernel '{kernel.sym_name.data}'"
        )
    pieces: list[loop.ForOp] = []
    for number, (start, end) in enumerate(itertools.pairwise(bounds)):
        last = number == len(bounds) - 2
        piece = target if last else clone_op(target, {})
        piece_name = f"{name}_p{number}"
        renamed = {lp: f"{lp.loop_name.data}_in_{piece_name}" for lp in loops_of(piece) if lp is not piece}
        check_new_names(kernel, pass_name, [piece_name, *renamed.values()])
        piece.loop_name = StringAttr(piece_name)
        piece.lower, piece.upper = IntegerAttr(start, i64), IntegerAttr(end, i64)
        piece.induction_var.name_hint = piece_name
        for inner, inner_name in renamed.items():
            inner.loop_name = StringAttr(inner_name)
            inner.induction_var.name_hint = inner_name
        if not last:
            Rewriter.insert_op(piece, InsertPoint.before(target))
        _fold_decided(piece)
        pieces.append(piece)
    return pieces


def _loop_range(lp: loop.ForOp) -> Range:
    lower, step = lp.lower.value.data, lp.step.value.data
    return lower, lower + (lp.trip_count - 1) * step


def _fold_decided(piece: loop.ForOp) -> None:
    """Fold what the index ranges inside `piece` decide, then erase the side-effect-free ops left without uses."""
    ranges: dict[SSAValue, Range] = {}
    parent = piece.parent_op()
    while parent is not None:
        if isinstance(parent, loop.ForOp) and not parent.is_dynamic:
            ranges[parent.induction_var] = _loop_range(parent)
        parent = parent.parent_op()
    for op in list(walk_ops(piece)):
        if isinstance(op, loop.ForOp):
            if not op.is_dynamic:  # a run-time trip count: its index has no known range, nothing is decided by it
                ranges[op.induction_var] = _loop_range(op)
        else:
            _fold(op, ranges)
    for op in reversed(list(walk_ops(piece))):
        if op is not piece and all(not r.uses for r in op.results) and op.results:
            if isinstance(op, memref.LoadOp) or is_side_effect_free(op):
                Rewriter.erase_op(op)


def _range_of(value: SSAValue, ranges: dict[SSAValue, Range]) -> Range | None:
    if isinstance(value.owner, arith.ConstantOp) and isinstance(value.owner.value, IntegerAttr):
        constant = value.owner.value.value.data
        return constant, constant
    return ranges.get(value)


def _fold(op: Operation, ranges: dict[SSAValue, Range]) -> None:
    """Record the range of `op`'s index result, or replace `op` by what the ranges of its operands decide."""
    if isinstance(op, arith.SelectOp):
        condition = op.cond.owner
        if isinstance(condition, arith.ConstantOp) and isinstance(condition.value, IntegerAttr):
            Rewriter.replace_op(op, [], [op.lhs if condition.value.value.data else op.rhs])
        return
    if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.MinSIOp | arith.MaxSIOp | arith.CmpiOp):
        return
    a, b = _range_of(op.lhs, ranges), _range_of(op.rhs, ranges)
    if a is None or b is None:
        return
    if isinstance(op, arith.CmpiOp):
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        if predicate[0] == "u" and a[0] >= 0 and b[0] >= 0:  # unsigned is signed on non-negative ranges
            predicate = f"s{predicate[1:]}"
        if predicate in _DECIDED:
            true, false = _DECIDED[predicate](a, b)
            if true or false:
                Rewriter.replace_op(op, arith.ConstantOp(IntegerAttr(int(true), i1)))
        return
    if isinstance(op, arith.MinSIOp | arith.MaxSIOp):
        lhs_first = a[1] <= b[0] if isinstance(op, arith.MinSIOp) else a[0] >= b[1]
        rhs_first = b[1] <= a[0] if isinstance(op, arith.MinSIOp) else b[0] >= a[1]
        if lhs_first or rhs_first:
            Rewriter.replace_op(op, [], [op.lhs if lhs_first else op.rhs])
            return
        pick = min if isinstance(op, arith.MinSIOp) else max
        ranges[op.result] = (pick(a[0], b[0]), pick(a[1], b[1]))
        return
    if isinstance(op, arith.AddiOp):
        ranges[op.result] = (a[0] + b[0], a[1] + b[1])
    elif isinstance(op, arith.SubiOp):
        ranges[op.result] = (a[0] - b[1], a[1] - b[0])
    else:
        products = [x * y for x in a for y in b]
        ranges[op.result] = (min(products), max(products))


@dataclass(frozen=True)
class LoopPartitionPass(ModulePass):
    """Split loop `loop` of kernel `kernel` at `points` into `<loop>_p0`, `<loop>_p1`, ..., each folded."""

    name = "loop-partition"

    kernel: str
    loop: str
    points: tuple[int, ...]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        partition_loop(kernel, find_loop(kernel, self.name, self.loop), self.points, self.name)
