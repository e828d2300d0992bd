"""`loop-tile`: tile a perfect nest of loops (TVM `tile`): split each loop and move all the outer parts out.

`loop-tile{kernel=matmul_0 loops=i,j sizes=8,16}` splits `i` by 8 and `j` by 16 (see `loop-split`) and reorders the
nest to `i_o, j_o, i_i, j_i`; the loops must be perfectly nested, outermost first, with nothing but index arithmetic
between them (`loop-decompose-reduction` makes a reduction's nest perfect):

    loop.for "i" %i = 0 to 64 step 1 serial {
      loop.for "j" %j = 0 to 64 step 1 serial { body(%i, %j) }
    }
    // becomes
    loop.for "i_o" %i_o = 0 to 64 step 8 serial {
      loop.for "j_o" %j_o = 0 to 64 step 16 serial {
        loop.for "i_i" %i_i = 0 to 8 step 1 serial {
          loop.for "j_i" %j_i = 0 to 16 step 1 serial { body(%i_o + %i_i, %j_o + %j_i) }
        }
      }
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.loop.analysis import find_kernel, find_loop
from minimlc.lowering.loop.loop_reorder import perfect_chain, rebuild_nest
from minimlc.lowering.loop.loop_split import split_loop


@dataclass(frozen=True)
class LoopTilePass(ModulePass):
    """Tile the perfectly nested loops `loops` of kernel `kernel` by `sizes` into `<loop>_o`... then `<loop>_i`..."""

    name = "loop-tile"

    kernel: str
    loops: tuple[str, ...]
    sizes: tuple[int, ...]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if len(self.loops) != len(self.sizes):
            raise DiagnosticException(
                f"{self.name}: {len(self.loops)} loops but {len(self.sizes)} sizes (one size per loop)"
            )
        kernel = find_kernel(op, self.name, self.kernel)
        perfect_chain(kernel, self.loops, self.name)
        for name, size in zip(self.loops, self.sizes):
            split_loop(kernel, find_loop(kernel, self.name, name), size, (f"{name}_o", f"{name}_i"), self.name)
        split_names = [f"{name}_{part}" for name in self.loops for part in ("o", "i")]
        chain = perfect_chain(kernel, split_names, self.name)
        by_name = {candidate.loop_name.data: candidate for candidate in chain}
        order = [f"{name}_o" for name in self.loops] + [f"{name}_i" for name in self.loops]
        rebuild_nest(chain, [by_name[name] for name in order])
