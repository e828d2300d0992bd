"""The bfloat16 convolution rule: the direct convolution schedule (`conv.py`) on float32 sums of bfloat16 pair dot
products.

Applies to a sum reduction whose update adds (`arith.addf`) `llvmx.dot_bf16(0.0, x_word, w_word)` of two i32 loads,
as `graph-to-te` lowers a float32 `graph.conv` marked for bfloat16 products (`graph_to_te/bfloat16_conv.py`): words
of two input channels, the weight's words read at loop indices, the output channels a multiple of the dot product's
vector:

    loop.for "i0" n { "i1" f { "i2" oh { "i3" ow { acc = 0.0; loop.for "k4" kh { "k5" kw { "k6" c/2 {
      acc += dot_bf16(0.0, x[i0, i2 + k4, i3 + k5, k6], w[i1, k6, k4, k5]) } } } ... } } } }

Same space, default and schedule as the float convolution (`CONV.space`, `CONV.default`, `CONV.apply`) on the dot
product's vectors (`bf16_target`): `nr` output channels in f32 lanes of `Target.dot_bf16_bits` (16 with AVX-512's
`vdpbf16ps`, 4 with AArch64's `bfdot`), the weight words packed at load time, `mr` output columns in registers; the
vectorizer folds the tile's add into the dot product, one `vdpbf16ps` per vector of output channels and pair of
input channels. Where the target's vectors are wider than the dot product's (neoverse-v1's 256-bit SVE over
128-bit `bfdot`) each channel vector is cut into pieces of the dot product's width (`in_pieces`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

from minimlc.lowering.schedule.bfloat16_gemm import bf16_product, bf16_target, bf16_workload
from minimlc.lowering.schedule.conv import CONV, ConvWorkload, conv_workload
from minimlc.lowering.schedule.integer_gemm import IntegerWorkload
from minimlc.lowering.schedule.kernel_analysis import accumulator_of
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class BF16ConvRule:
    """Direct bfloat16 convolution: the float convolution's register tile over `llvmx.dot_bf16` (see the module
    docstring). Its workload is the integer rules' (`IntegerWorkload`: the float shape, the target it is tiled for,
    the pieces)."""

    name: str = "bfloat16_conv"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> IntegerWorkload[ConvWorkload] | None:
        found = bf16_product(kernel)
        accumulator = accumulator_of(kernel)
        if found is None or accumulator is None or not target.dot_bf16_bits:
            return None
        _, product = found
        reads = [product.lhs.owner, product.rhs.owner]
        if not all(isinstance(read, memref.LoadOp) for read in reads):
            return None
        shape = conv_workload(module, kernel, bf16_target(target), accumulator, reads)
        return None if shape is None else bf16_workload(shape, target)

    def space(self, workload: IntegerWorkload[ConvWorkload], target: Target) -> Space:
        return CONV.space(workload.shape, workload.target)

    def default(self, workload: IntegerWorkload[ConvWorkload], target: Target) -> Config:
        return CONV.default(workload.shape, workload.target)

    def apply(self, workload: IntegerWorkload[ConvWorkload], config: Config) -> list[str]:
        return workload.steps(CONV.apply(workload.shape, config))


BF16_CONV = BF16ConvRule()
