"""The concatenation rule: split the innermost loop where it changes input, then vectorize each piece.

Applies to a kernel without reductions whose innermost loop's index (plus a constant, clamped or not: a concatenation
nested in another) is compared with constants inside its range: a concatenation along the innermost dimension (a
channels-last channel concatenation, see `te-channels-last`), which selects among its inputs by that index and reads
each at a clamped index, so no piece of it vectorizes as it is:

    loop.for "i3" %i3 = 0 to 128 step 1 serial {
      %a = memref.load %in0[..., (minsi %i3, 63)] ; %b = memref.load %in1[..., (maxsi (%i3 - 64), 0)]
      %v = arith.select (cmpi slt, %i3, 64), %a, %b ; memref.store %v, %out[..., %i3] }

Schedule: `loop-partition` at those constants (each piece reads one input, unclamped), then each piece as the
elementwise rule does a loop: split by `width` and vectorize the inner part (a piece starts where the one before it
ends, not at 0, so it is split even when it is `width` long; a piece shorter than `width` stays scalar). Knob:
`width`, 0 (partition only, the rest left to LLVM) or one, two or four vector widths up to the longest piece;
default one vector width.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of, walk_ops
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target

_BOUNDARY = {"slt": 0, "sge": 0, "ult": 0, "uge": 0, "sle": 1, "sgt": 1, "ule": 1, "ugt": 1}
"""Per predicate of `index <pred> K`, the offset from K of the first index on the other side."""


@dataclass(frozen=True)
class ConcatWorkload:
    """A kernel whose innermost loop changes input at `points`: the loop and the pieces' trip counts."""

    kernel: str
    loop: str
    points: tuple[int, ...]
    pieces: tuple[int, ...]


def _boundaries(innermost: loop.ForOp) -> tuple[int, ...]:
    """The points (strictly inside the loop's range, on its steps) where a comparison of its index, or of its index
    plus a constant, clamped (a concatenation nested in another: the inner one's channel is the outer one's index
    clamped into its input), with a constant changes."""
    iv = innermost.induction_var
    lower, step = innermost.lower.value.data, innermost.step.value.data
    upper = innermost.upper.value.data
    points: set[int] = set()
    for compare in innermost.body.block.ops:
        if not isinstance(compare, arith.CmpiOp):
            continue
        constant = compare.rhs.owner
        predicate = arith.CMPI_COMPARISON_OPERATIONS[compare.predicate.value.data]
        offset = _offset_from(compare.lhs, iv)
        if offset is None or predicate not in _BOUNDARY:
            continue
        if not isinstance(constant, arith.ConstantOp) or not isinstance(constant.value, IntegerAttr):
            continue
        point = constant.value.value.data + _BOUNDARY[predicate] - offset
        if lower < point < upper and (point - lower) % step == 0:
            points.add(point)
    return tuple(sorted(points))


def _offset_from(value: SSAValue, iv: SSAValue) -> int | None:
    """`c` where `value` is `iv + c`, clamped between constants (signed min/max) or not; None otherwise."""
    offset = 0
    while value is not iv:
        op = value.owner
        if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MinSIOp | arith.MaxSIOp):
            return None
        constants = [v for v in op.operands if isinstance(v.owner, arith.ConstantOp)]
        if len(constants) != 1 or not isinstance(constants[0].owner.value, IntegerAttr):
            return None
        if isinstance(op, arith.SubiOp) and constants[0] is not op.rhs:
            return None
        value = op.lhs if constants[0] is op.rhs else op.rhs
        amount = constants[0].owner.value.value.data
        offset += amount if isinstance(op, arith.AddiOp) else -amount if isinstance(op, arith.SubiOp) else 0
    return offset


@dataclass(frozen=True)
class ConcatRule:
    """A concatenation along the innermost loop: partition it at the inputs' boundaries (see the module docstring)."""

    name: str = "concat"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ConcatWorkload | None:
        if any(isinstance(op, loop.AllocOp) for op in walk_ops(kernel)):
            return None
        innermost = loops_of(kernel)[-1]
        points = _boundaries(innermost)
        if not points or innermost.step.value.data != 1:
            return None
        bounds = [innermost.lower.value.data, *points, innermost.upper.value.data]
        pieces = tuple(b - a for a, b in itertools.pairwise(bounds))
        return ConcatWorkload(kernel.sym_name.data, innermost.loop_name.data, points, pieces)

    def space(self, workload: ConcatWorkload, target: Target) -> Space:
        lanes = target.vector_lanes
        widths = tuple(f * lanes for f in (1, 2, 4) if f * lanes <= max(workload.pieces))
        return Space((Knob("width", (0, *widths), self.default(workload, target)["width"]),))

    def default(self, workload: ConcatWorkload, target: Target) -> Config:
        return {"width": target.vector_lanes if max(workload.pieces) >= target.vector_lanes else 0}

    def apply(self, workload: ConcatWorkload, config: Config) -> list[str]:
        name, inner, width = workload.kernel, workload.loop, config["width"]
        steps = [f"loop-partition{{kernel={name} loop={inner} points={','.join(map(str, workload.points))}}}"]
        for number, trip in enumerate(workload.pieces):
            piece = f"{inner}_p{number}"
            if not width or trip < width:
                continue
            steps.append(f"loop-split{{kernel={name} loop={piece} factor={width}}}")
            steps.append(f"loop-vectorize{{kernel={name} loop={piece}_i}}")
        return steps


CONCAT = ConcatRule()
