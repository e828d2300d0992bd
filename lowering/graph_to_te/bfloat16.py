"""bfloat16 inner products: float32 operands paired into i32 words of two bfloat16 values, summed by
`llvmx.dot_bf16` in float32 (x86 `vdpbf16ps`, AArch64 `bfdot`).

The graph pass `graph-bf16-products` marks the float32 ops whose inner products run in bfloat16
(`BF16_PRODUCTS_ATTR`); their te forms pair the reduction axis into words: element j (0 or 1) of word w is element
`w + j * ceil(extent / 2)` (`pair_index`), so a vector of words reads two contiguous vectors. Each value is rounded
to nearest even (NaN kept) where its word is built (`bf16_word`); accumulation stays float32.

    %w = te.compute "matmul_bf16_rhs" ... { ... te.yield %word : i32 }   // lo: B[k, n], hi: B[k + K/2, n]
    %c = te.compute "matmul" ... { te.yield llvmx.dot_bf16 %zero, %a, %b : f32, i32 } sum
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import bf16, i16, i32
from xdsl.ir import SSAValue

from minimlc.lowering.graph.graph_bf16_products import BF16_PRODUCTS_ATTR
from minimlc.lowering.graph_to_te.builder import constant, index_constant
from minimlc.lowering.graph_to_te.nn import _affine  # pyright: ignore[reportPrivateUsage]
from minimlc.lowering.graph_to_te.small_floats import from_f32

__all__ = ["BF16_PRODUCTS_ATTR", "bf16_word", "pair_index"]


def bf16_word(low: SSAValue, high: SSAValue) -> SSAValue:
    """The i32 word of two float32 values rounded to bfloat16: `low`'s in bits 0-15, `high`'s in bits 16-31."""
    low_bits = arith.ExtUIOp(_bf16_bits(low), i32).result
    high_bits = arith.ShLIOp(arith.ExtUIOp(_bf16_bits(high), i32).result, constant(16, i32)).result
    return arith.OrIOp(low_bits, high_bits).result


def _bf16_bits(value: SSAValue) -> SSAValue:
    return arith.BitcastOp(from_f32(value, bf16), i16).result


def pair_index(word: SSAValue, j: int, extent: int) -> tuple[SSAValue, SSAValue | None]:
    """The index `word + j * ceil(extent / 2)` of element j (0 or 1) of `word` along an axis of `extent` grouped in
    pairs, clamped into the axis, and whether it lies inside (None: always). Past the extent the weight side's
    element must be 0; the other side may then read anything finite (the clamped element)."""
    half = -(-extent // 2)
    index = _affine(word, 1, j * half)
    if (j + 1) * half <= extent:
        return index, None
    inside = arith.CmpiOp(index, index_constant(extent), "slt").result
    return arith.MinSIOp(index, index_constant(extent - 1)).result, inside
