"""Lower `graph.matmul_nbits` to `te` sum reductions that read the packed weight bytes and dequantise them in the
body, so the weight is never expanded in memory.

"matmul_nbits_a_sums" sums each block of A's rows (`[..., blocks]`). "matmul_nbits" reduces over the blocks; one
step takes a whole block: it reads the block's bytes `b[n, block, c]` (constant `c`), unpacks their values (int8: the
byte; int4: the low nibble, then the high one), converts them to f32 and sums their products with A's elements in
`CHAINS` interleaved chains; then applies the zero point and the scale once per block:

    step(n, block) = scale[n, block] * (sum_c a[block * bs + c] * q[n, block, c] - zero[n, block] * a_sum[block])

so a value costs a conversion and a fused multiply-add (int4: and an unpacking op); the zero point (default
`2^(bits-1)`) and the scale cost once per block. With both per value a GEMV on one core was compute-bound at 5 vector
ops per value (K=N=4096, AVX2: int8 1.30 ms, int4 1.23 ms; now 1.08 and 0.86). The cancellation is mild: the sum and
`zero * a_sum` differ by the block's dot product, within a few float32 roundings of the larger. The weight-only
schedule (`schedule/weight_only.py`) vectorises it along N. At `accuracy_level = 4` the product is an integer
one instead (`weight_only_int8.py`).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant, read
from minimlc.lowering.graph_to_te.extents import Extents
from minimlc.lowering.graph_to_te.nn import _affine  # pyright: ignore[reportPrivateUsage]
from minimlc.lowering.graph_to_te.weight_only_int8 import integer_matmul_nbits

CHAINS = {8: 4, 4: 2}
"""Bits -> the independent partial sums a block's products go into: enough to hide the multiply-add latency, few
enough to stay in registers with int4's unpacked pairs (K=N=4096 on Zen 3, 16 columns: int8 1.31 ms with 2 chains,
1.08 with 4; int4 0.86 with 2, 0.99 with 4)."""


def _values(byte: SSAValue, bits: int) -> list[SSAValue]:
    """The unsigned values a weight byte holds, as f32, in order along K."""
    word = scalar.cast(byte, i32)
    if bits == 8:
        return [arith.UIToFPOp(word, f32).result]
    low = arith.AndIOp(word, constant(15, i32)).result
    high = arith.ShRUIOp(word, constant(4, i32)).result
    return [arith.UIToFPOp(value, f32).result for value in (low, high)]


def _sum(values: list[SSAValue]) -> SSAValue:
    """`values` added left to right (one dependency chain)."""
    total = values[0]
    for value in values[1:]:
        total = arith.AddfOp(total, value).result
    return total


class MatMulNBitsLowering(RewritePattern):
    """Lower matmul_nbits to the block sums of A and one sum over blocks "matmul_nbits" (see the module
    docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulNBitsOp, rewriter: PatternRewriter) -> None:
        if op.int8_activations:
            rewriter.replace(op, integer_matmul_nbits(op))
            return
        bits, block_size = op.bits.value.data, op.block_size
        blocks, width = graph.shape_of(op.b)[1:]
        outer = Extents(op).of(op.a)[:-1]  # run-time extents where A's rows are `?`
        shape = (*outer, graph.shape_of(op.b)[0])

        def a_sum(indices: Indices) -> SSAValue:
            *outer, block, c = indices
            return read(op.a, [*outer, arith.AddiOp(_affine(block, block_size, 0), c).result])

        sums = build_compute("matmul_nbits_a_sums", (*outer, blocks), a_sum, (block_size,), "sum")

        def step(indices: Indices) -> SSAValue:
            *outer, n, block = indices
            start = _affine(block, block_size, 0)
            products: list[SSAValue] = []
            for c in range(width):
                for j, value in enumerate(_values(read(op.b, [n, block, index_constant(c)]), bits)):
                    a = read(op.a, [*outer, _affine(start, 1, c * (8 // bits) + j)])
                    products.append(arith.MulfOp(a, value).result)
            total = _sum([_sum(products[chain :: CHAINS[bits]]) for chain in range(CHAINS[bits])])
            if op.zero_points is None:
                zero = constant(float(1 << (bits - 1)), f32)
            else:
                zero = arith.UIToFPOp(scalar.cast(read(op.zero_points, [n, block]), i32), f32).result
            shift = arith.MulfOp(zero, read(sums.result, [*outer, block])).result
            return arith.MulfOp(read(op.scales, [n, block]), arith.SubfOp(total, shift).result).result

        rewriter.replace(op, [sums, build_compute("matmul_nbits", shape, step, (blocks,), "sum")])


PATTERNS: list[RewritePattern] = [MatMulNBitsLowering()]
