"""`loop-parallel`: mark a loop's iterations as independent, to run on several threads (TVM `parallel`).

`loop-parallel{kernel=matmul_0 loop=i_o}` sets the loop's kind to `parallel`; `loop-outline-parallel` then runs the
loop's iterations as tasks on the session's thread pool (a parallel loop nested in another one runs serially).

    loop.for "i_o" %i_o = 0 to 64 step 8 serial { ... }
    // becomes
    loop.for "i_o" %i_o = 0 to 64 step 8 parallel { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from minimlc.lowering.loop.analysis import find_kernel, find_loop


@dataclass(frozen=True)
class LoopParallelPass(ModulePass):
    """Mark loop `loop` of kernel `kernel` parallel."""

    name = "loop-parallel"

    kernel: str
    loop: str

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        find_loop(find_kernel(op, self.name, self.kernel), self.name, self.loop).kind = StringAttr("parallel")
