"""`loop-unroll`: mark a loop to be unrolled completely (TVM `unroll`).

`loop-unroll{kernel=matmul_0 loop=i_i}` sets the loop's kind to `unroll`; `loop-to-scf` then emits one copy of the
body per iteration with the index as a constant. Unrolling is bounded: at most `MAX_UNROLL` iterations, since LLVM's
code generation is super-linear in basic-block size. A loop of a run-time trip count is refused.

    loop.for "i_i" %i_i = 0 to 4 step 1 serial { ... }
    // becomes
    loop.for "i_i" %i_i = 0 to 4 step 1 unroll { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.loop.analysis import find_kernel, find_loop

MAX_UNROLL = 64
"""The most iterations a loop may be unrolled into."""


@dataclass(frozen=True)
class LoopUnrollPass(ModulePass):
    """Mark loop `loop` of kernel `kernel` for complete unrolling."""

    name = "loop-unroll"

    kernel: str
    loop: str

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = find_loop(find_kernel(op, self.name, self.kernel), self.name, self.loop)
        if target.is_dynamic:
            raise DiagnosticException(
                f"{self.name}: loop '{self.loop}' of kernel '{self.kernel}' runs a run-time number of iterations; "
                f"only a static loop can be unrolled: split it first and unroll '{self.loop}_i'"
            )
        if target.trip_count > MAX_UNROLL:
            raise DiagnosticException(
                f"{self.name}: loop '{self.loop}' has {target.trip_count} iterations, more than the {MAX_UNROLL} "
                "that may be unrolled; split it first"
            )
        target.kind = StringAttr("unroll")
