"""`loop-fuse`: merge two adjacent sibling loops with the same bounds into one (classic loop fusion).

`loop-fuse{kernel=k first=i second=j}` appends the body of loop `j` (the op right after loop `i`, with equal
lower bound, upper bound and step; a run-time upper bound must be the same value) to the body of `i`, with `j`'s
index replaced by `i`'s, and removes `j`. Fusion
keeps the order of every pair of dependent accesses only if iteration `n` of `j` touches no element that a later
iteration of `i` touches; the pass checks a simple sufficient condition: every buffer that one loop writes and the
other accesses is accessed by both at the same affine index (in the loop index alone), as elementwise producers
and consumers are. Otherwise it fails with the buffer's name.

    loop.for "i" %i = 0 to 8 step 1 serial { %a = load x[%i] ; store %a, t[%i] }
    loop.for "j" %j = 0 to 8 step 1 serial { %b = load t[%j] ; store %b, y[%j] }
    // becomes
    loop.for "i" %i = 0 to 8 step 1 serial { %a = load x[%i] ; store %a, t[%i] ; %b = load t[%i] ; store %b, y[%i] }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, find_kernel, find_loop, walk_ops

_Access = memref.LoadOp | memref.StoreOp


def _accesses(target: loop.ForOp) -> dict[SSAValue, tuple[set[int], bool]]:
    """Per buffer `target` accesses: the dimensions that every access indexes by exactly the loop index, and
    whether the loop writes the buffer."""
    result: dict[SSAValue, tuple[set[int], bool]] = {}
    for access in walk_ops(target):
        if not isinstance(access, _Access):
            continue
        exact = {d for d, index in enumerate(access.indices) if affine_form(index) == {target.induction_var: 1}}
        dims, writes = result.get(access.memref, (exact, False))
        result[access.memref] = (dims & exact, writes or isinstance(access, memref.StoreOp))
    return result


def loop_bounds(target: loop.ForOp) -> tuple[int, int | SSAValue, int]:
    """(lower, upper, step) of `target`, the upper bound the `index` value of a run-time trip count: two loops to the
    same run-time extent have equal bounds only if they read the same value."""
    upper = target.dynamic_upper if target.is_dynamic else target.upper.value.data
    assert upper is not None
    return target.lower.value.data, upper, target.step.value.data


def describe_bounds(bounds: tuple[int, int | SSAValue, int]) -> str:
    """`(lower, upper, step)`, a run-time upper bound as its value's name."""
    lower, upper, step = bounds
    return str(bounds) if isinstance(upper, int) else f"({lower}, %{upper.name_hint or 'n'}, {step})"


@dataclass(frozen=True)
class LoopFusePass(ModulePass):
    """Fuse loop `second` of kernel `kernel` into the adjacent loop `first` (same bounds)."""

    name = "loop-fuse"

    kernel: str
    first: str
    second: str

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(
            f"{self.name}: cannot fuse '{self.second}' into '{self.first}' of '{self.kernel}': {reason}"
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        first, second = find_loop(kernel, self.name, self.first), find_loop(kernel, self.name, self.second)
        if first.next_op is not second:
            raise self.fail("they are not adjacent (the second must follow the first in one block)")
        bounds = [loop_bounds(lp) for lp in (first, second)]
        if bounds[0] != bounds[1]:
            raise self.fail(f"their bounds differ ({describe_bounds(bounds[0])} and {describe_bounds(bounds[1])})")
        ours, theirs = _accesses(first), _accesses(second)
        for buffer in ours.keys() & theirs.keys():
            (our_dims, we_write), (their_dims, they_write) = ours[buffer], theirs[buffer]
            if (we_write or they_write) and not our_dims & their_dims:
                name = buffer.name_hint or "a buffer"
                raise self.fail(f"'{name}' is written by one and accessed by the other, not both at the loop index")
        second.induction_var.replace_all_uses_with(first.induction_var)
        for inner in list(second.body.block.ops):
            inner.detach()
            first.body.block.add_op(inner)
        second.detach()
        second.erase()
