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
four channels.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.dialects import llvm_ext
from minimlc.lowering.schedule.conv import CONV, ConvWorkload, conv_workload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of, updates_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class IntegerConvRule:
    """Direct integer convolution: the float convolution's register tile over i32 multiply-adds."""

    name: str = "integer_conv"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ConvWorkload | None:
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
        return conv_workload(module, kernel, target, accumulator, reads)

    def space(self, workload: ConvWorkload, target: Target) -> Space:
        return CONV.space(workload, target)

    def default(self, workload: ConvWorkload, target: Target) -> Config:
        return CONV.default(workload, target)

    def apply(self, workload: ConvWorkload, config: Config) -> list[str]:
        return CONV.apply(workload, config)


INTEGER_CONV = IntegerConvRule()
