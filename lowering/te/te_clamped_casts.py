"""Cheaper float -> integer casts of clamped values: where a te body converts `min(max(x, lo), hi)` (constant bounds,
a `Clip` as QuantizeLinear and every requantization write it) with the range-guarded conversion of `scalar.py`, the
guard can only fail on NaN, so it becomes one "is ordered" test; and the NaN-propagating `maximumf`/`minimumf` (a
compare and blends each on x86, for NaN and signed zeros) become selects that x86 computes with one `vmaxps`/`vminps`.
The integers are the same for every input, NaN included. Runs on te bodies after `te-inline`, which puts the clamp
and the cast in one body.

    %m = arith.maximumf %x, %c0 ; %v = arith.minimumf %m, %c255
    %in = arith.andi (arith.cmpf oge, %v, %c-2^31), (arith.cmpf olt, %v, %c2^31)
    %i = arith.fptosi (arith.select %in, %v, %c0.0) ; %r = arith.select %in, %i, %cINT_MIN ; arith.trunci %r to ui8
    // becomes, with lo = 0 and only truncations below 32 bits reading %r (NaN -> 0 as before: INT_MIN's low bits)
    %m = arith.select (arith.cmpf ogt, %x, %c0), %x, %c0 ; %v = arith.select (arith.cmpf olt, %v, %c255), %m, %c255
    %i = arith.fptosi %v ; arith.trunci %i to ui8
    // and otherwise: NaN kept by both selects (`lo > x ? lo : x`, `hi < m ? hi : m`), then
    %ord = arith.cmpf ord, %v, %v ; %i = arith.fptosi (arith.select %ord, %v, %c0.0) ; arith.select %ord, %i, %cINT_MIN
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from minimlc.lowering.te.compute_rewriting import rewrite_ops


def _constant(value: SSAValue) -> float | int | None:
    """The number a constant `value` holds, or None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return owner.value.value.data
    return None


def _bounded(value: SSAValue, kind: type[Operation]) -> tuple[SSAValue, float] | None:
    """(x, c) where `value` is `kind(x, c)` or `kind(c, x)` with c a constant (not NaN), else None."""
    owner = value.owner
    if not isinstance(owner, kind):
        return None
    for operand, other in ((owner.operands[0], owner.operands[1]), (owner.operands[1], owner.operands[0])):
        bound = _constant(other)
        if isinstance(bound, float) and bound == bound:
            return operand, bound
    return None


_PREDICATES = {"oge": 3, "olt": 4}  # arith.cmpf's numbering


def _compare(value: SSAValue, predicate: str) -> tuple[SSAValue, float] | None:
    """(x, c) where `value` is `arith.cmpf predicate, x, c` with c a constant, else None."""
    owner = value.owner
    if not isinstance(owner, arith.CmpfOp) or owner.predicate.value.data != _PREDICATES[predicate]:
        return None
    bound = _constant(owner.rhs)
    return (owner.lhs, bound) if isinstance(bound, float) else None


@dataclass
class _GuardedCast:
    """The pieces of a range-guarded conversion of a clamped value (see the module docstring)."""

    unclamped: SSAValue
    low: float
    high: float
    result: arith.SelectOp  # select(inside, fptosi, INT_MIN)
    dead: list[Operation]  # the guard's ops, erased once unused, in an order users come first


def _guarded_cast(op: arith.FPToSIOp) -> _GuardedCast | None:
    chosen = op.input.owner
    if not isinstance(chosen, arith.SelectOp) or _constant(chosen.rhs) != 0.0:
        return None
    inside, value = chosen.cond, chosen.lhs
    both = inside.owner
    if not isinstance(both, arith.AndIOp):
        return None
    lowest, limit = _compare(both.lhs, "oge"), _compare(both.rhs, "olt")
    if lowest is None or limit is None or lowest[0] is not value or limit[0] is not value:
        return None
    upper = _bounded(value, arith.MinimumfOp)
    lower = _bounded(upper[0], arith.MaximumfOp) if upper is not None else None
    if upper is None or lower is None or not lowest[1] <= lower[1] <= upper[1] < limit[1]:
        return None
    users = [use.operation for use in op.result.uses]
    result = users[0] if len(users) == 1 else None
    if not isinstance(result, arith.SelectOp) or result.cond is not inside or result.lhs is not op.result:
        return None
    if _constant(result.rhs) != int(lowest[1]):
        return None
    dead = [op, chosen, both, both.lhs.owner, both.rhs.owner, value.owner, upper[0].owner]
    return _GuardedCast(lower[0], lower[1], upper[1], result, dead)  # pyright: ignore[reportArgumentType]


def _narrows_only(value: SSAValue) -> bool:
    """Whether every reader of the i32 `value` keeps fewer than 32 of its bits (INT_MIN and 0 agree there)."""
    return all(
        isinstance(use.operation, arith.TruncIOp)
        and isinstance(use.operation.result.type, IntegerType)
        and use.operation.result.type.width.data < 32
        for use in value.uses
    )


class ClampedCastLowering(RewritePattern):
    """Rewrite a range-guarded conversion of a constant-clamped float into selects and one NaN test (or none)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FPToSIOp, rewriter: PatternRewriter) -> None:
        found = _guarded_cast(op)
        if found is None:
            return
        x, source, integer = found.unclamped, op.input.type, op.result.type
        low = arith.ConstantOp(FloatAttr(found.low, source))
        high = arith.ConstantOp(FloatAttr(found.high, source))
        new: list[Operation] = [low, high]
        nan_to_zero = found.low == 0.0 and _narrows_only(found.result.result)
        if nan_to_zero:  # x > 0 ? x : 0 sends NaN to 0, whose conversion is what NaN's was
            above = arith.CmpfOp(x, low, "ogt")
            raised = arith.SelectOp(above, x, low)
        else:  # lo > x ? lo : x keeps NaN
            above = arith.CmpfOp(low, x, "ogt")
            raised = arith.SelectOp(above, low, x)
        over = arith.CmpfOp(high, raised, "olt")
        clamped = arith.SelectOp(over, high, raised)
        new += [above, raised, over, clamped]
        if nan_to_zero:
            converted = arith.FPToSIOp(clamped, integer)
            new.append(converted)
            replacement = converted.result
        else:
            ordered = arith.CmpfOp(clamped, clamped, "ord")
            zero = arith.ConstantOp(FloatAttr(0.0, source))
            safe = arith.SelectOp(ordered, clamped, zero)
            converted = arith.FPToSIOp(safe, integer)
            minimum = arith.ConstantOp(IntegerAttr(-(1 << (integer.width.data - 1)), integer))  # pyright: ignore
            result = arith.SelectOp(ordered, converted, minimum)
            new += [ordered, zero, safe, converted, minimum, result]
            replacement = result.result
        constants = [found.result.rhs.owner]
        rewriter.insert(new, InsertPoint.before(found.result))
        rewriter.replace(found.result, [], [replacement])
        for dead in found.dead:
            if all(not result.uses for result in dead.results):
                constants += [operand.owner for operand in dead.operands if isinstance(operand.owner, arith.ConstantOp)]
                rewriter.erase(dead)
        for constant in dict.fromkeys(constants):
            if not constant.results[0].uses:
                rewriter.erase(constant)


@dataclass(frozen=True)
class TeClampedCastsPass(ModulePass):
    """Range-guarded float -> integer casts of constant-clamped values as selects and (at most) one NaN test."""

    name = "te-clamped-casts"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        rewrite_ops(op, (arith.FPToSIOp,), ClampedCastLowering())
