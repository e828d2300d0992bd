"""`loop-vectorize`: execute a whole loop as one vector operation per body op (TVM `vectorize`).

`loop-vectorize{kernel=matmul_0 loop=j_i}` sets the kind of loop `j_i` (from 0, step 1, at most `MAX_LANES`
iterations) to `vectorize`; `loop-to-scf` then replaces the loop by its body on `vector<N x f32>` values (N = trip
count): unit-stride accesses become `vector.load`/`vector.store`, values that do not depend on the loop are
broadcast, and a contracting multiply feeding an add becomes `vector.fma`. Split a loop by the machine's vector
width (8 lanes of f32 with AVX2) first. Only an innermost loop is vectorized: one that holds no loop but `unroll`
ones (which become straight-line code first); a loop of a run-time trip count (`to %n`) is refused: split it first.

    loop.for "j_i" %j_i = 0 to 8 step 1 serial { ... }
    // becomes
    loop.for "j_i" %j_i = 0 to 8 step 1 vectorize { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import find_kernel, find_loop, loops_of

MAX_LANES = 64
"""The most iterations a vectorized loop may have (LLVM splits wide vectors into machine registers)."""


@dataclass(frozen=True)
class LoopVectorizePass(ModulePass):
    """Mark loop `loop` of kernel `kernel` for vector code generation."""

    name = "loop-vectorize"

    kernel: str
    loop: str

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = find_loop(find_kernel(op, self.name, self.kernel), self.name, self.loop)
        if inner := _loops_inside(target):
            innermost = next(lp for lp in inner if not _loops_inside(lp))
            raise DiagnosticException(
                f"{self.name}: loop '{self.loop}' is not innermost (it holds loop '{inner[0].loop_name.data}'); "
                f"only the innermost loop can be vectorized: '{innermost.loop_name.data}'"
            )
        if target.is_dynamic:
            raise DiagnosticException(
                f"{self.name}: loop '{self.loop}' of kernel '{self.kernel}' runs a run-time number of iterations; "
                f"split it by the vector width first (loop-split) and vectorize '{self.loop}_i'"
            )
        if target.lower.value.data != 0 or target.step.value.data != 1:
            raise DiagnosticException(f"{self.name}: loop '{self.loop}' must run from 0 with step 1")
        if target.trip_count > MAX_LANES:
            raise DiagnosticException(
                f"{self.name}: loop '{self.loop}' has {target.trip_count} iterations, more than {MAX_LANES} lanes; "
                "split it by the vector width first"
            )
        target.kind = StringAttr("vectorize")


def _loops_inside(target: loop.ForOp) -> list[loop.ForOp]:
    """The loops inside `target` that would keep it from being vectorized: all but `unroll` ones."""
    return [lp for lp in loops_of(target)[1:] if lp.kind.data != "unroll"]
