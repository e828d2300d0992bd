"""The integer GEMM rule: the GEMM rule's register-blocked micro-kernel (`gemm.py`) on i32 sums of i32 products.

Applies to a sum reduction whose update adds (`arith.addi`) the product (`arith.muli`) of two i32 reads, one (A)
indexed by the row loop `i` and `k`, the other (B) by `k` and the column loop `j` (and maybe batch loops), as
`graph-to-te` lowers `graph.conv_integer` (im2col: the weight less its zero point times the columns) and as the
integer products of quantized inference read:

    loop.for "i1" { loop.for "i2" { acc = 0; loop.for "k3" { acc += w[i1, k3] * cols[i0, k3, i2] } ; ... } }

Same space, default and schedule as the float GEMM (`GEMM.space`, `GEMM.default`, `GEMM.apply`): the `mr x nr`
tile of i32 accumulators stays in registers and each multiply-add is a vector `muli` + `addi` of `nr` lanes (the
portable form; LLVM picks the target's i32 multiply). The dot-product form (`graph_to_te/quantized.py`: i32 words
of four k, `acc += llvmx.dot_u8s8(0, a_word, b_word)`) takes the same schedule, one `vpdpbusd` per vector.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.dialects import llvm_ext
from minimlc.lowering.schedule.gemm import GEMM, GemmWorkload, gemm_workload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, updates_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target


def _integer_product(kernel: func.FuncOp) -> tuple[arith.AddiOp, arith.MuliOp | llvm_ext.DotU8S8Op] | None:
    """The kernel's one `acc + a * b` (or `acc + dot_u8s8(0, a, b)`) update on i32 and its product, or None."""
    accumulator = accumulator_of(kernel)
    if accumulator is None:
        return None
    updates = updates_of(kernel, accumulator, (arith.AddiOp,))
    if len(updates) != 1 or not isinstance(updates[0], arith.AddiOp):
        return None
    update = updates[0]
    if not isinstance(update.result.type, IntegerType) or update.result.type.width.data != 32:
        return None
    products = (arith.MuliOp, llvm_ext.DotU8S8Op)
    product = next((v.owner for v in update.operands if isinstance(v.owner, products)), None)
    return None if product is None else (update, product)


@dataclass(frozen=True)
class IntegerGemmRule:
    """Integer GEMM: the float GEMM's register tile over i32 multiply-adds (see the module docstring)."""

    name: str = "integer_gemm"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> GemmWorkload | None:
        found = _integer_product(kernel)
        if found is None:
            return None
        update, product = found
        return gemm_workload(module, kernel, update, product)

    def space(self, workload: GemmWorkload, target: Target) -> Space:
        return GEMM.space(workload, target)

    def default(self, workload: GemmWorkload, target: Target) -> Config:
        return GEMM.default(workload, target)

    def apply(self, workload: GemmWorkload, config: Config) -> list[str]:
        return GEMM.apply(workload, config)


INTEGER_GEMM = IntegerGemmRule()
