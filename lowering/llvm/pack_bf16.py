"""`llvmx.pack_bf16` -> AVX512-BF16's conversion, or integer rounding elsewhere, as arith ops (`convert-to-llvm`
replaces each op before its patterns run, `dot_pieces.expand_ops`; the direct emitter emits the same ops in its
place).

Where the target converts float32 to bfloat16 itself (`converts_bf16`: x86 with AVX512-BF16), each half is an
`arith.truncf` to bfloat16 (LLVM's `fptrunc`, selected as `vcvtneps2bf16`: rounding to nearest even, a NaN quieted,
a denormal read as zero), its 16 bits widened and the high half's shifted up; LLVM makes a vector of 16 words two
conversions and one `vpermi2w`:

    %w = llvmx.pack_bf16 %lo, %hi : vector<16xf32> -> vector<16xi32>
    // becomes
    %l = arith.truncf %lo : vector<16xf32> to vector<16xbf16>
    %lb = arith.bitcast %l : vector<16xbf16> to vector<16xi16>
    %lw = arith.extui %lb : vector<16xi16> to vector<16xi32>      // likewise %hw, then
    %w = arith.ori %lw, (arith.shli %hw, 16)

Elsewhere (AArch64) each value is rounded in its own bits, a dozen integer ops a word: `bits + 0x7FFF + lowest kept
bit`, its top 16 bits, a NaN's with the quiet bit set instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, IntegerType, VectorType, i32
from xdsl.ir import Attribute, Operation, SSAValue

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.dot_pieces import Expansion, i32_splat
from minimlc.lowering.target import Target

_UNORDERED = arith.CMPF_COMPARISON_OPERATIONS.index("uno")
"""`arith.cmpf`'s (and LLVM's) predicate number of `uno`: true where either operand is NaN."""


def converts_bf16(target: Target) -> bool:
    """Whether `target`'s code converts float32 to bfloat16 by instruction: x86 with AVX512-BF16 (`vcvtneps2bf16`),
    which every target with its bfloat16 dot product has (`Target.dot_bf16_bits`)."""
    return target.is_x86 and target.dot_bf16_bits > 0


def pack_bf16_expander(target: Target) -> Callable[[Operation], Expansion]:
    """For `expand_ops`: every `llvmx.pack_bf16` gets `pack_bf16_expansion` for `target`."""
    expansion = functools.partial(pack_bf16_expansion, hardware=converts_bf16(target))
    return lambda op: expansion


def pack_bf16_expansion(builder: Builder, low: SSAValue, high: SSAValue, hardware: bool) -> SSAValue:
    """The word of `low` and `high` rounded to bfloat16 (see the module docstring), built at `builder`."""
    words = _like(low.type, i32)
    half = _converted if hardware else _rounded
    low_bits, high_bits = half(builder, low, words), half(builder, high, words)
    shifted = builder.insert(arith.ShLIOp(high_bits, i32_splat(builder, 16, words))).result
    return builder.insert(arith.OrIOp(low_bits, shifted)).result


def _converted(builder: Builder, value: SSAValue, words: Attribute) -> SSAValue:
    """`value`'s bfloat16 by `fptrunc`, its bits in the low half of a word."""
    truncated = builder.insert(arith.TruncFOp(value, _like(value.type, BFloat16Type()))).result
    bits = builder.insert(arith.BitcastOp(truncated, _like(value.type, IntegerType(16)))).result
    return builder.insert(arith.ExtUIOp(bits, words)).result


def _rounded(builder: Builder, value: SSAValue, words: Attribute) -> SSAValue:
    """`value` rounded to nearest even in integer ops, its bfloat16 bits in the low half of a word."""

    def constant(number: int) -> SSAValue:
        return i32_splat(builder, number, words)

    bits = builder.insert(arith.BitcastOp(value, words)).result
    kept = builder.insert(arith.ShRUIOp(bits, constant(16))).result
    lowest_kept = builder.insert(arith.AndIOp(kept, constant(1))).result
    bias = builder.insert(arith.AddiOp(lowest_kept, constant(0x7FFF))).result
    rounded = builder.insert(arith.AddiOp(bits, bias)).result
    quiet_nan = builder.insert(arith.OrIOp(bits, constant(0x00400000))).result
    if isinstance(words, VectorType):
        is_nan = builder.insert(llvm_ext.FCmpOp(value, value, _UNORDERED)).result
        chosen = builder.insert(llvm_ext.SelectOp(is_nan, quiet_nan, rounded)).result
    else:
        is_nan = builder.insert(arith.CmpfOp(value, value, "uno")).result
        chosen = builder.insert(arith.SelectOp(is_nan, quiet_nan, rounded)).result
    return builder.insert(arith.ShRUIOp(chosen, constant(16))).result


def _like(kind: Attribute, element: Attribute) -> Attribute:
    """`element`, as a vector of `kind`'s length where `kind` is a vector."""
    return VectorType(element, kind.get_shape()) if isinstance(kind, VectorType) else element
