"""The channel shuffle rule: unroll a copy's channel loop by the shuffle's group count.

Applies to a kernel without reductions whose innermost loop `c` reads at a permuted index `(c % G) * J + c / G`
(ShuffleNet's channel shuffle, a Reshape -> Transpose -> Reshape over channels, stored channels-last), `G` dividing
the trip count. After te-inline that read usually picks among concatenated group outputs by a select chain on the
permuted index, so each element computes every group's read:

    loop.for "i3" %c = 0 to 136 { %s = (c % 4) * 34 + c / 4; %v = select(s < 34, a[p, s], select(s < 68, ...)) }

Schedule: split `c` by `G` and unroll the inner part, so that in each of the `G` copies `c % G` is a constant and
`c / G` the outer loop's index: LLVM folds the selection to the one group read (ShuffleNet's shuffled, padded
channels-last depthwise input: 10 -> 70 GFLOP/s for the copy and depthwise convolution kernel). Knob: `unroll`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of, walk_ops
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class ShuffleWorkload:
    """A channel shuffle copy: its innermost loop and the shuffle's group count."""

    kernel: str
    loop: str
    groups: int


def _by_constant(value: SSAValue, iv: SSAValue, kind: type[Operation]) -> int | None:
    """The constant `n` if `value` is `iv % n` or `iv / n` (`kind`: remui or divui), else None."""
    owner = value.owner
    if not isinstance(owner, kind) or owner.operands[0] is not iv:
        return None
    constant = owner.operands[1].owner
    if not isinstance(constant, arith.ConstantOp) or not isinstance(constant.value, IntegerAttr):
        return None
    return constant.value.value.data


def _shuffle_groups(add: arith.AddiOp, iv: SSAValue) -> int | None:
    """G if `add` is `(iv % G) * J + iv / G` (either order), else None."""
    for scaled, quotient in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        groups = _by_constant(quotient, iv, arith.DivUIOp)
        product = scaled.owner
        if groups is None or not isinstance(product, arith.MuliOp):
            continue
        if any(_by_constant(factor, iv, arith.RemUIOp) == groups for factor in product.operands):
            return groups
    return None


@dataclass(frozen=True)
class ShuffleRule:
    """Channel shuffle copies: the channel loop unrolled by the group count (see the module docstring)."""

    name: str = "shuffle"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ShuffleWorkload | None:
        if any(isinstance(op, loop.AllocOp) for op in walk_ops(kernel)):
            return None
        innermost = loops_of(kernel)[-1]
        iv = innermost.induction_var
        for op in walk_ops(innermost):
            if isinstance(op, arith.AddiOp):
                groups = _shuffle_groups(op, iv)
                if groups is not None and 1 < groups < innermost.trip_count and innermost.trip_count % groups == 0:
                    return ShuffleWorkload(kernel.sym_name.data, innermost.loop_name.data, groups)
        return None

    def space(self, workload: ShuffleWorkload, target: Target) -> Space:
        return Space((Knob("unroll", (True, False), self.default(workload, target)["unroll"]),))

    def default(self, workload: ShuffleWorkload, target: Target) -> Config:
        return {"unroll": True}

    def apply(self, workload: ShuffleWorkload, config: Config) -> list[str]:
        if not config["unroll"]:
            return []
        name, inner = workload.kernel, workload.loop
        return [
            f"loop-split{{kernel={name} loop={inner} factor={workload.groups}}}",
            f"loop-unroll{{kernel={name} loop={inner}_i}}",
        ]


SHUFFLE = ShuffleRule()
