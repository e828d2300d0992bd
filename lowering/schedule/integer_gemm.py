"""The integer GEMM rule: the GEMM rule's register-blocked micro-kernel (`gemm.py`) on i32 sums of i32 products.

Applies to a sum reduction whose update adds (`arith.addi`) the product (`arith.muli`) of two i32 reads, one (A)
indexed by the row loop `i` and `k`, the other (B) by `k` and the column loop `j` (and maybe batch loops), as
`graph-to-te` lowers `graph.conv_integer` (im2col: the weight less its zero point times the columns) and as the
integer products of quantized inference read:

    loop.for "i1" { loop.for "i2" { acc = 0; loop.for "k3" { acc += w[i1, k3] * cols[i0, k3, i2] } ; ... } }

Same space, default and schedule as the float GEMM (`GEMM.space`, `GEMM.default`, `GEMM.apply`): the `mr x nr`
tile of i32 accumulators stays in registers and each multiply-add is a vector `muli` + `addi` of `nr` lanes (the
portable form; LLVM picks the target's i32 multiply). The dot-product form (`graph_to_te/quantized.py`: i32 words
of four k, `acc += llvmx.dot_u8s8(0, a_word, b_word)`) takes the same schedule, one `vpdpbusd` per vector, on the
dot product's own vectors (`dot_product_target`): `Target.dot_u8s8_lanes` i32 lanes, 4 on AArch64 where SVE's are
wider (`usdot`/`udot` are NEON's: an 8-lane layout split each into two and joined them with `ext`/`splice`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.dialects import llvm_ext
from minimlc.lowering.schedule.gemm import GEMM, GemmWorkload, gemm_workload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, updates_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.strategy.dot_product_form import dot_product_registers
from minimlc.lowering.target import Target

Shape = TypeVar("Shape")


@dataclass(frozen=True)
class IntegerWorkload(Generic[Shape]):
    """The float rule's workload of an integer kernel, and the target its tile is sized for (`dot_product_target`
    where the products are `llvmx.dot_u8s8`, else the module's)."""

    shape: Shape
    target: Target
    piece_lanes: int = 0
    """Lanes of the vectors the tile's channel vector is cut into (0: one vector), where the target's vectors are
    wider than the dot product's (`in_pieces`)."""
    udot_form: bool = False
    """Whether the products are the two-`udot` form (`Target.dot_u8s8_udot_bits`), which holds registers of its own."""

    def steps(self, steps: list[str]) -> list[str]:
        """The float rule's `steps`, in pieces of `piece_lanes` where that is set (`in_pieces`)."""
        return in_pieces(steps, self.piece_lanes) if self.piece_lanes else steps


def in_pieces(steps: list[str], lanes: int) -> list[str]:
    """`steps` with each vectorized loop, once its register tile is cached, split into an unrolled loop of vectors of
    `lanes` lanes: on 256-bit SVE an 8-lane dot product is two 128-bit `usdot` on halves that LLVM extracts and joins
    with `ext`/`splice` in the loop, where pieces join only in the tile's write-back.

        loop-vectorize{kernel=K loop=f_i}, loop-cache-write{kernel=K loop=w_o fill=true}
        // is followed by
        loop-split{kernel=K loop=f_i factor=4}, loop-unroll{kernel=K loop=f_i_o}, loop-vectorize{kernel=K loop=f_i_i}

    The output's zeroing loop (`..._init_...`) holds no dot product and stays whole; with one depth block the
    cache-write's fill has replaced it, and a step naming it would fail the whole schedule.
    """
    pieces, vectorized = [], []
    for step in steps:
        pieces.append(step)
        if found := re.fullmatch(r"loop-vectorize\{kernel=(\S+) loop=(\S+)\}", step):
            if "_init" not in found[2]:
                vectorized.append(found.groups())
        elif step.startswith("loop-cache-write{"):
            for kernel, loop in vectorized:
                pieces += [
                    f"loop-split{{kernel={kernel} loop={loop} factor={lanes}}}",
                    f"loop-unroll{{kernel={kernel} loop={loop}_o}}",
                    f"loop-vectorize{{kernel={kernel} loop={loop}_i}}",
                ]
            vectorized = []
    return pieces


def dot_product_target(target: Target, product: llvm_ext.DotU8S8Op | None = None) -> Target:
    """`target` as the dot-product layout's schedule sees it: vectors of `dot_u8s8_lanes` i32 lanes (x86: `target`),
    and, for `product`'s form, its vector registers less those the form holds (`dot_product_registers`: 2 in AVX2's
    `vpmaddubsw` form, whose 6 x 2 tile spilled an accumulator every step on znver3; it is 5 x 2 in a convolution,
    4 x 2 in a GEMM)."""
    held = dot_product_registers(target, product.lhs_bound, product.rhs_width) if product else 0
    return dataclasses.replace(
        target, vector_bits=32 * target.dot_u8s8_lanes, vector_registers=target.vector_registers - held
    )


def dot_product_workload(
    shape: Shape, target: Target, product: llvm_ext.DotU8S8Op, udot_form: bool = False
) -> IntegerWorkload[Shape]:
    """The workload of `product`'s kernel on `target`: tiled for `dot_product_target`, in pieces where the
    target's vectors are wider."""
    pieces = target.dot_u8s8_lanes if target.vector_lanes > target.dot_u8s8_lanes else 0
    return IntegerWorkload(shape, dot_product_target(target, product), pieces, udot_form)


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

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> IntegerWorkload[GemmWorkload] | None:
        found = _integer_product(kernel)
        if found is None:
            return None
        update, product = found
        shape = gemm_workload(module, kernel, update, product)
        if shape is None:
            return None
        if not isinstance(product, llvm_ext.DotU8S8Op):
            return IntegerWorkload(shape, target)
        return dot_product_workload(shape, target, product)

    def space(self, workload: IntegerWorkload[GemmWorkload], target: Target) -> Space:
        return GEMM.space(workload.shape, workload.target)

    def default(self, workload: IntegerWorkload[GemmWorkload], target: Target) -> Config:
        return GEMM.default(workload.shape, workload.target)

    def apply(self, workload: IntegerWorkload[GemmWorkload], config: Config) -> list[str]:
        return workload.steps(GEMM.apply(workload.shape, config))


INTEGER_GEMM = IntegerGemmRule()
