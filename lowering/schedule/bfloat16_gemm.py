"""The bfloat16 GEMM rule: the GEMM rule's register-blocked micro-kernel (`gemm.py`) on sums of `llvmx.dot_bf16`.

Applies to a float32 sum reduction whose update adds (`arith.addf`) `llvmx.dot_bf16(0.0, a, b)` of two i32 word
reads, A's indexed by the row loop `i` and the word loop `k`, B's by `k` and the column loop `j`, as
`graph_to_te/bfloat16.py` lowers a marked MatMul or Gemm:

    loop.for "i0" { loop.for "i1" { acc = 0; loop.for "k2" { acc += dot_bf16(0, a[i0, k2], b[k2, i1]) } ; ... } }

Same space, default and schedule as the float GEMM (`GEMM.space`, `GEMM.default`, `GEMM.apply`), on the dot
product's own vectors (`bf16_target`): `Target.dot_bf16_bits` (x86: 16 f32 lanes with AVX-512, one `vdpbf16ps` per
vector of the `mr x nr` tile; AArch64: 4 lanes, NEON's `bfdot`, in pieces where SVE's vectors are wider:
`in_pieces`). No `split_k`: the GEMV split is measured on float32 sums only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp

from minimlc.dialects import llvm_ext
from minimlc.lowering.schedule.gemm import GemmWorkload, gemm_workload
from minimlc.lowering.schedule.integer_gemm import IntegerGemmRule, IntegerWorkload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, updates_of
from minimlc.lowering.target import Target

Shape = TypeVar("Shape")


def bf16_target(target: Target) -> Target:
    """`target` as the bfloat16 layout's schedule sees it: vectors of `dot_bf16_bits` (all of `target`'s on x86)."""
    return dataclasses.replace(target, vector_bits=target.dot_bf16_bits)


def bf16_workload(shape: Shape, target: Target) -> IntegerWorkload[Shape]:
    """The workload of a bfloat16 kernel (GEMM, convolution) on `target`: tiled for `bf16_target`, in pieces where
    the target's vectors are wider than the dot product's (SVE)."""
    pieces = target.dot_bf16_bits // 32 if target.vector_bits > target.dot_bf16_bits else 0
    return IntegerWorkload(shape, bf16_target(target), pieces)


def bf16_product(kernel: func.FuncOp) -> tuple[arith.AddfOp, llvm_ext.DotBF16Op] | None:
    """The kernel's one `acc + dot_bf16(0, a, b)` update and its product, or None."""
    accumulator = accumulator_of(kernel)
    if accumulator is None:
        return None
    updates = updates_of(kernel, accumulator, (arith.AddfOp,))
    if len(updates) != 1 or not isinstance(updates[0], arith.AddfOp):
        return None
    product = next((v.owner for v in updates[0].operands if isinstance(v.owner, llvm_ext.DotBF16Op)), None)
    return None if product is None else (updates[0], product)


@dataclass(frozen=True)
class BF16GemmRule(IntegerGemmRule):
    """bfloat16 GEMM: the float GEMM's register tile over `llvmx.dot_bf16` (see the module docstring); its space,
    default and steps are the integer GEMM rule's (the float GEMM's, on the workload's target, in pieces)."""

    name: str = "bf16_gemm"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> IntegerWorkload[GemmWorkload] | None:
        found = bf16_product(kernel)
        if found is None or not target.dot_bf16_bits:
            return None
        shape = gemm_workload(module, kernel, *found)
        return None if shape is None else bf16_workload(dataclasses.replace(shape, float_sum=False), target)


BF16_GEMM = BF16GemmRule()
