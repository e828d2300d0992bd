"""The integer GEMM rule: the GEMM rule's register-blocked micro-kernel (`gemm.py`) on i32 sums of i32 products.

Applies to a sum reduction whose update adds (`arith.addi`) the product (`arith.muli`) of two i32 reads, one (A)
indexed by the row loop `i` and `k`, the other (B) by `k` and the column loop `j` (and maybe batch loops), as
`graph-to-te` lowers `graph.conv_integer` (im2col: the weight less its zero point times the columns) and as the
integer products of quantized inference read:

    loop.for "i1" { loop.for "i2" { acc = 0; loop.for "k3" { acc += w[i1, k3] * cols[i0, k3, i2] } ; ... } }

Same space, default and schedule as the float GEMM (`GEMM.space`, `GEMM.default`, `GEMM.apply`): the `mr x nr`
tile of i32 accumulators stays in registers and each multiply-add is a vector `muli` + `addi` of `nr` lanes (the
portable form; LLVM picks the target's i32 multiply).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.dialects import loop
from minimlc.lowering.schedule.gemm import GEMM, GemmWorkload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, is_weight_at_every_call, updates_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target


def _integer_product(kernel: func.FuncOp) -> tuple[arith.AddiOp, arith.MuliOp] | None:
    """The kernel's one `acc + a * b` update on i32 and its product, or None."""
    accumulator = accumulator_of(kernel)
    if accumulator is None:
        return None
    updates = updates_of(kernel, accumulator, (arith.AddiOp,))
    if len(updates) != 1 or not isinstance(updates[0], arith.AddiOp):
        return None
    update = updates[0]
    if not isinstance(update.result.type, IntegerType) or update.result.type.width.data != 32:
        return None
    product = next((v.owner for v in update.operands if isinstance(v.owner, arith.MuliOp)), None)
    return None if product is None else (update, product)


def _loops_around(target: loop.ForOp) -> list[loop.ForOp]:
    loops: list[loop.ForOp] = []
    parent = target.parent_op()
    while isinstance(parent, loop.ForOp):
        loops.insert(0, parent)
        parent = parent.parent_op()
    return loops


@dataclass(frozen=True)
class IntegerGemmRule:
    """Integer GEMM: the float GEMM's register tile over i32 multiply-adds (see the module docstring)."""

    name: str = "integer_gemm"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> GemmWorkload | None:
        found = _integer_product(kernel)
        if found is None:
            return None
        update, product = found
        reduction = update.parent_op()
        spatial = reduction.parent_op() if isinstance(reduction, loop.ForOp) else None
        rows = spatial.parent_op() if isinstance(spatial, loop.ForOp) else None
        if not (isinstance(reduction, loop.ForOp) and isinstance(spatial, loop.ForOp) and isinstance(rows, loop.ForOp)):
            return None
        k_iv, j_iv, i_iv = reduction.induction_var, spatial.induction_var, rows.induction_var
        batch = {lp.induction_var for lp in _loops_around(rows)}
        params = list(kernel.body.block.args)
        reads = [operand.owner for operand in (product.lhs, product.rhs)]
        if not all(isinstance(read, memref.LoadOp) and read.memref in params for read in reads):
            return None
        name = kernel.sym_name.data
        for a_read, b_read in (reads, reads[::-1]):
            assert isinstance(a_read, memref.LoadOp) and isinstance(b_read, memref.LoadOp)
            a_indices, b_indices = set(a_read.indices), set(b_read.indices)
            if not ({i_iv, k_iv} <= a_indices <= {i_iv, k_iv} | batch):
                continue
            if not ({k_iv, j_iv} <= b_indices <= {k_iv, j_iv} | batch) or len(b_read.indices) != len(b_indices):
                continue
            b_batched = bool(b_indices & batch)
            if b_batched and list(b_read.indices)[-1] is not j_iv:
                return None
            operand = params.index(b_read.memref)
            return GemmWorkload(
                name,
                rows.loop_name.data,
                spatial.loop_name.data,
                reduction.loop_name.data,
                rows.trip_count,
                spatial.trip_count,
                reduction.trip_count,
                operand,
                list(b_read.indices).index(j_iv),
                is_weight_at_every_call(module, name, operand) and not b_batched,
                b_batched,
            )
        return None

    def space(self, workload: GemmWorkload, target: Target) -> Space:
        return GEMM.space(workload, target)

    def default(self, workload: GemmWorkload, target: Target) -> Config:
        return GEMM.default(workload, target)

    def apply(self, workload: GemmWorkload, config: Config) -> list[str]:
        return GEMM.apply(workload, config)


INTEGER_GEMM = IntegerGemmRule()
