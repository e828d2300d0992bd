"""The form a u8 x s8 dot product (`llvmx.dot_u8s8`) takes on x86 with AVX2 and without VNNI, decided alike by
`convert-to-llvm` (`llvm/dot_product.py`, which emits it) and the integer schedule rules (`schedule/integer_gemm.py`,
`schedule/integer_conv.py`, which size their register tile for it).

Where the op's bounds keep every byte-pair sum inside i16 (`maddubs_exact`) each 8-lane piece is one `vpmaddubsw` and
one `vpmaddwd` by a vector of ones, whose i16 result needs a register of its own: beside the float tile's
accumulators, weight vectors and broadcast the form holds `MADDUBS_REGISTERS` more, so a tile sized without them
spills an accumulator every reduction step (AVX2's 6 x 2 tile: 17 ymm registers of 16):

    takes_maddubs(target_from_name("znver3"), lhs_bound=255, rhs_bits=7)   # True: 7-bit weights
    dot_product_registers(target_from_name("znver3"), 255, 7)              # 2: the ones and the i16 pair sums
    dot_product_registers(target_from_name("znver4"), 255, 8)              # 0: vpdpbusd accumulates in place
"""

from __future__ import annotations

from minimlc.lowering.target import Target

MADDUBS_REGISTERS = 2
"""Vector registers the `vpmaddubsw` form holds beside the tile: the i16 ones `vpmaddwd` multiplies by, and the i16
pair sums between the two instructions."""


def maddubs_exact(lhs_bound: int, rhs_bits: int) -> bool:
    """Whether `vpmaddubsw` never saturates on unsigned bytes at most `lhs_bound` and signed bytes of `rhs_bits` bits:
    the most negative pair sum, `2 * lhs_bound * -2^(rhs_bits - 1)`, is at least -32768 (the most positive one is
    then at most 32767)."""
    return 2 * lhs_bound * 2 ** (rhs_bits - 1) <= 2**15


def takes_maddubs(target: Target, lhs_bound: int, rhs_bits: int) -> bool:
    """Whether a dot product of those bounds is `vpmaddubsw` + `vpmaddwd` by ones on `target` (AVX2 without VNNI)."""
    return bool(target.dot_u8s8_madd_bits) and maddubs_exact(lhs_bound, rhs_bits)


def dot_product_registers(target: Target, lhs_bound: int, rhs_bits: int) -> int:
    """Vector registers a dot product of those bounds holds on `target` beside a float tile's (`MADDUBS_REGISTERS` in
    the `vpmaddubsw` form; `vpdpbusd` and `usdot` accumulate in place: none). The two-`udot` form's row sums are
    per column (`schedule/integer_conv.py`'s `UDOT_ROW_SUM_REGISTERS`); the exact two-`vpmaddwd` form's widened
    bytes are not counted: its tile is the float one's (a 3 x 2 tile that counts them measured alike)."""
    return MADDUBS_REGISTERS if takes_maddubs(target, lhs_bound, rhs_bits) else 0
