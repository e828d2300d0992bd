"""`loop-split`: split one loop into an outer and an inner loop (TVM `split`).

`loop-split{kernel=matmul_0 loop=j factor=8}` turns loop `j` (trip count a multiple of 8) into `j_o` (the original
range, step multiplied by 8, same kind) around `j_i` (8 iterations, serial); the old index is `j_o + j_i`:

    loop.for "j" %j = 0 to 64 step 1 serial { body(%j) }
    // becomes
    loop.for "j_o" %j_o = 0 to 64 step 8 serial {
      loop.for "j_i" %j_i = 0 to 8 step 1 serial {
        %j = arith.addi %j_o, %j_i : index
        body(%j)
      }
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import check_new_names, find_kernel, find_loop, new_loop


def split_loop(kernel: func.FuncOp, target: loop.ForOp, factor: int, names: tuple[str, str], pass_name: str):
    """Split `target` by `factor` into loops named `names`; returns (outer, inner)."""
    name = target.loop_name.data
    if factor < 1 or target.trip_count % factor:
        raise DiagnosticException(
            f"{pass_name}: factor {factor} does not divide the {target.trip_count} iterations of loop '{name}' "
            f"in kernel '{kernel.sym_name.data}'"
        )
    check_new_names(kernel, pass_name, names)
    step = target.step.value.data
    outer = new_loop(names[0], target.lower.value.data, target.upper.value.data, step * factor, target.kind.data)
    inner = new_loop(names[1], 0, step * factor, step)
    outer.body.block.add_op(inner)
    index = Builder(InsertPoint.at_start(inner.body.block)).insert(
        arith.AddiOp(outer.induction_var, inner.induction_var)
    )
    index.result.name_hint = name
    old_body = target.body.block
    old_body.args[0].replace_all_uses_with(index.result)
    for op in list(old_body.ops):
        op.detach()
        inner.body.block.add_op(op)
    Rewriter.replace_op(target, outer)
    return outer, inner


@dataclass(frozen=True)
class LoopSplitPass(ModulePass):
    """Split loop `loop` of kernel `kernel` by `factor` into `<loop>_o` and `<loop>_i`."""

    name = "loop-split"

    kernel: str
    loop: str
    factor: int

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        split_loop(kernel, target, self.factor, (f"{self.loop}_o", f"{self.loop}_i"), self.name)
