"""The integer convolution rule: the direct convolution schedule (`conv.py`) on i32 sums of i32 products.

Applies to a sum reduction whose update adds (`arith.addi`) the product (`arith.muli`) of two i32 reads: a weight
read at loop indices, one output loop of which (the output channels) does not index the data, its trip count a
multiple of the vector width. `graph-to-te` lowers a group-1 `graph.conv_integer` to this shape, channels last:

    loop.for "i0" n { "i1" oh { "i2" ow { "i3" f { acc = 0; loop.for "k4" kh { "k5" kw { "k6" c {
      acc += w[i3, k6, k4, k5] * x[i0, i1 + k4, i2 + k5, k6] } } } ... } } } }

Same space, default and schedule as the float convolution (`CONV.space`, `CONV.default`, `CONV.apply`): `nr`
output channels in vectors of i32 lanes (the weight packed at load time), `mr` output columns in registers, each
multiply-add a vector `muli` + `addi` (the portable form; LLVM picks the target's i32 multiply). The dot-product form
(`graph_to_te/quantized.py`: i32 words of four channels, `acc += llvmx.dot_u8s8(0, x_word, w_word)`) takes the same
schedule: the loop vectorizer folds the add into the dot product, one `vpdpbusd` per vector of output channels and
four channels, on the dot product's vectors (`integer_gemm.dot_product_target`: 4 lanes on AArch64, SVE or not). The
two-`udot` form (`Target.dot_u8s8_udot_bits`, `llvm/dot_product.py`) holds a row sum per column
(`UDOT_ROW_SUM_REGISTERS`), so its tile has fewer columns: neoverse-n1's 14 x 2 tile sized for `usdot` spilled, 8 x 2
(on 56 columns) does not. AVX2's `vpmaddubsw` form (`strategy/dot_product_form.py`) holds two registers beside the
tile, which `dot_product_target` takes off the target's: 5 columns at most, where the float's 6 x 2 spilled.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.dialects import llvm_ext
from minimlc.lowering.schedule.conv import CONV, ConvWorkload, conv_workload
from minimlc.lowering.schedule.integer_gemm import IntegerWorkload, dot_product_target, dot_product_workload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, updates_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target

UDOT_ROW_SUM_REGISTERS = 1
"""Vector registers the two-`udot` form holds per output column beside its accumulators: the column's `udot(0, a,
0x80)`, subtracted from each of its vectors (LLVM computes the tile's row sums together); and once per tile the 0x80
bytes."""


@dataclass(frozen=True)
class IntegerConvRule:
    """Direct integer convolution: the float convolution's register tile over i32 multiply-adds."""

    name: str = "integer_conv"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> IntegerWorkload[ConvWorkload] | None:
        accumulator = accumulator_of(kernel)
        if accumulator is None:
            return None
        updates = updates_of(kernel, accumulator, (arith.AddiOp,))
        if len(updates) != 1 or not isinstance(updates[0], arith.AddiOp):
            return None
        element = updates[0].result.type
        if not isinstance(element, IntegerType) or element.width.data != 32:
            return None
        products = (arith.MuliOp, llvm_ext.DotU8S8Op)
        product = next((v.owner for v in updates[0].operands if isinstance(v.owner, products)), None)
        if product is None:
            return None
        reads = [product.lhs.owner, product.rhs.owner]
        if not all(isinstance(read, memref.LoadOp) for read in reads):
            return None
        if not isinstance(product, llvm_ext.DotU8S8Op):
            shape = conv_workload(module, kernel, target, accumulator, reads)
            return None if shape is None else IntegerWorkload(shape, target)
        shape = conv_workload(module, kernel, dot_product_target(target), accumulator, reads)
        udot_form = bool(target.dot_u8s8_udot_bits)
        return None if shape is None else dot_product_workload(shape, target, product, udot_form)

    def space(self, workload: IntegerWorkload[ConvWorkload], target: Target) -> Space:
        """The float convolution's space, its `mr` knob defaulting to `default`'s."""
        mr = self.default(workload, target)["mr"]
        knobs = CONV.space(workload.shape, workload.target).knobs
        return Space(tuple(dataclasses.replace(k, default=mr) if k.name == "mr" else k for k in knobs))

    def default(self, workload: IntegerWorkload[ConvWorkload], target: Target) -> Config:
        """The float convolution's default; in the two-`udot` form (`udot_form`), the most columns up to its `mr`
        that divide the width and fit the registers beside each column's row sum (`UDOT_ROW_SUM_REGISTERS`)."""
        config = CONV.default(workload.shape, workload.target)
        if workload.udot_form:
            vectors, registers = int(config["nr"]) // workload.target.dot_u8s8_lanes, workload.target.vector_registers
            per_column = vectors + UDOT_ROW_SUM_REGISTERS  # and the B vectors, the broadcast, the 0x80 bytes
            fits = [f for f in range(1, int(config["mr"]) + 1) if f * per_column + vectors + 2 <= registers]
            config["mr"] = max([f for f in fits if workload.shape.width % f == 0] or [1])
        return config

    def apply(self, workload: IntegerWorkload[ConvWorkload], config: Config) -> list[str]:
        return workload.steps(CONV.apply(workload.shape, config))


INTEGER_CONV = IntegerConvRule()
