"""The integer form of `graph.matmul_nbits` at `accuracy_level = 4` (ORT's CompInt8, llama.cpp's Q8_0 activations):
A quantized to int8 per block of K once per call, each block's dot product with the weight codes exact in i32
through `llvmx.dot_u8s8` (the codes are its unsigned bytes, A's its signed ones), scaled into a float32 sum.

Per row of A and block (`a` its `block_size` values), with MLAS's rounding (`QuantizeARow_CompInt8`):

    peak = max |a|,  qa = roundeven(a * (127 / peak))  (0 where peak = 0),  a_scale = peak / 127
    y[n] = sum over blocks of float(sum_c qa[c] q[n, c] - zero[n, block] sum_c qa[c]) * (scale[n, block] * a_scale)

Kernels: "matmul_nbits_a_peak" (`peak`), "matmul_nbits_a_words" (`qa` as i32 words of four bytes),
"matmul_nbits_a_code_sums" (`sum qa` per block), "matmul_nbits_b_words" (B's bytes as i32 words: weights alone, so
computed at load time at O3) and "matmul_nbits", a sum over blocks whose step takes a whole block. int8: a weight
word and A's word hold the same four k. int4: a weight word holds eight values, `k = 2j` in the low nibble of byte j
and `2j + 1` in the high one; `w & 0x0F0F0F0F` pairs with A's word of the even k, `(w >> 4) & 0x0F0F0F0F` with that
of the odd k, so A's words are `[..., blocks, words, 2]` (even, odd).

    %w = te.read %b_words[%n, %block, 0] ; %lo = arith.andi %w, 0x0F0F0F0F ; %hi = ... shrui 4, andi ...
    %s = llvmx.dot_u8s8 %zero, %lo, %a_even {lhs_max = 15 : i64} ; %s2 = llvmx.dot_u8s8 %s, %hi, %a_odd ...

int4's dot products state their codes' bound (`lhs_max = 15`). On AVX2 without VNNI a dot product of 8 lanes (32
bytes) is then one `vpmaddubsw` and one `vpmaddwd` by ones (exact: |2 * 15 * -128| < 32768), int8's two `vpmaddwd`
and four shifts, ands and adds (`lowering/llvm/dot_product.py`): about 0.2 vector ops a weight byte, where the float
form takes 0.45 (int8) and 1.1 (int4).
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue

from minimlc.dialects import graph, llvm_ext, te
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant, read
from minimlc.lowering.graph_to_te.extents import Extents
from minimlc.lowering.graph_to_te.nn import _affine  # pyright: ignore[reportPrivateUsage]
from minimlc.lowering.graph_to_te.quantized import _byte_word  # pyright: ignore[reportPrivateUsage]

CHAINS = 2
"""Independent i32 partial sums a block's dot products go into (the `vpmaddwd` latency)."""

NIBBLES = 0x0F0F0F0F

INT4_CODE_MAX = 15
"""The largest int4 weight code, the `lhs_max` of int4's dot products."""


def _code(value: SSAValue, peak: SSAValue) -> SSAValue:
    """`value` quantized to int8 against its block's `peak` (an i32 in [-127, 127]): `roundeven(value * (127 /
    peak))`, 0 where peak is 0."""
    positive = arith.CmpfOp(peak, constant(0.0, f32), "ogt").result
    inverse = arith.SelectOp(positive, arith.DivfOp(constant(127.0, f32), peak).result, constant(0.0, f32)).result
    return scalar.cast(math.RoundEvenOp(arith.MulfOp(value, inverse).result).result, i32)


def integer_matmul_nbits(op: graph.MatMulNBitsOp) -> list[te.ComputeOp]:
    """The kernels of the integer form (see the module docstring)."""
    bits, block_size = op.bits.value.data, op.block_size
    columns, blocks, width = graph.shape_of(op.b)
    outer = Extents(op).of(op.a)[:-1]
    words = width // 4

    def a_value(outer_indices: list[SSAValue], block: SSAValue, offset: SSAValue | int) -> SSAValue:
        start = _affine(block, block_size, 0)
        k = _affine(start, 1, offset) if isinstance(offset, int) else arith.AddiOp(start, offset).result
        return read(op.a, [*outer_indices, k])

    def absolute(indices: Indices) -> SSAValue:
        *rows, block, c = indices
        return math.AbsFOp(a_value(rows, block, c)).result

    peak = build_compute("matmul_nbits_a_peak", (*outer, blocks), absolute, (block_size,), "max")

    def a_word(indices: Indices) -> SSAValue:
        if bits == 8:
            *rows, block, word = indices
            first, step = _affine(word, 4, 0), 1
        else:  # the even (parity 0) or odd k of eight
            *rows, block, word, parity = indices
            first, step = arith.AddiOp(_affine(word, 8, 0), parity).result, 2
        top = read(peak.result, [*rows, block])
        return _byte_word(lambda j: _code(a_value(rows, block, _affine(first, 1, j * step)), top))

    a_shape = (*outer, blocks, words) if bits == 8 else (*outer, blocks, words, 2)
    a_words = build_compute("matmul_nbits_a_words", a_shape, a_word)

    def code(indices: Indices) -> SSAValue:
        *rows, block, c = indices
        return _code(a_value(rows, block, c), read(peak.result, [*rows, block]))

    code_sums = build_compute("matmul_nbits_a_code_sums", (*outer, blocks), code, (block_size,), "sum")

    def b_word(indices: Indices) -> SSAValue:
        n, block, word = indices
        return _byte_word(lambda j: scalar.cast(read(op.b, [n, block, _affine(word, 4, j)]), i32))

    b_words = build_compute("matmul_nbits_b_words", (columns, blocks, words), b_word)

    def step(indices: Indices) -> SSAValue:
        *rows, n, block = indices
        pairs: list[tuple[SSAValue, SSAValue]] = []
        for word in range(words):
            weight = read(b_words.result, [n, block, index_constant(word)])
            if bits == 8:
                pairs.append((weight, read(a_words.result, [*rows, block, index_constant(word)])))
                continue
            low = arith.AndIOp(weight, constant(NIBBLES, i32)).result
            high = arith.AndIOp(arith.ShRUIOp(weight, constant(4, i32)).result, constant(NIBBLES, i32)).result
            for parity, codes in enumerate((low, high)):
                activation = read(a_words.result, [*rows, block, index_constant(word), index_constant(parity)])
                pairs.append((codes, activation))
        sums = [constant(0, i32) for _ in range(CHAINS)]
        for index, (weight, activation) in enumerate(pairs):
            chain = llvm_ext.DotU8S8Op(sums[index % CHAINS], weight, activation, INT4_CODE_MAX if bits == 4 else None)
            sums[index % CHAINS] = chain.result
        total = sums[0]
        for partial in sums[1:]:
            total = arith.AddiOp(total, partial).result
        if op.zero_points is None:
            zero = constant(1 << (bits - 1), i32)
        else:
            zero = scalar.cast(read(op.zero_points, [n, block]), i32)
        exact = arith.SubiOp(total, arith.MuliOp(zero, read(code_sums.result, [*rows, block])).result).result
        a_scale = arith.DivfOp(read(peak.result, [*rows, block]), constant(127.0, f32)).result
        scale = arith.MulfOp(read(op.scales, [n, block]), a_scale).result
        return arith.MulfOp(scalar.cast(exact, f32), scale).result

    matmul = build_compute("matmul_nbits", (*outer, columns), step, (blocks,), "sum")
    return [peak, a_words, code_sums, b_words, matmul]
