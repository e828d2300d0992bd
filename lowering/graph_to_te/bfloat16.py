"""bfloat16 inner products: float32 operands paired into i32 words of two bfloat16 values, summed by
`llvmx.dot_bf16` in float32 (x86 `vdpbf16ps`, AArch64 `bfdot`).

The graph pass `graph-bf16-products` marks the float32 ops whose inner products run in bfloat16
(`BF16_PRODUCTS_ATTR`); their te forms pair the reduction axis into words: element j (0 or 1) of word w is element
`w + j * ceil(extent / 2)` (`pair_index`), so a vector of words reads two contiguous vectors. Each value is rounded
to nearest even (NaN kept) where its word is built (`bf16_word`: `llvmx.pack_bf16`); accumulation stays float32.

    %w = te.compute "matmul_bf16_rhs" ... { ... te.yield %word : i32 }   // lo: B[k, n], hi: B[k + K/2, n]
    %c = te.compute "matmul" ... { te.yield llvmx.dot_bf16 %zero, %a, %b : f32, i32 } sum

A marked MatMul (A of rank >= 2, B a matrix or of A's batch axes) and a marked Gemm (any transposes, alpha, beta, bias;
the pass marks it where B is computed from weights alone) take the form (`matmul_form`, `gemm_form`). A's words
"matmul_bf16_lhs" (..., M, ceil(K/2)) are computed per run, B's words "matmul_bf16_rhs" (B's batch..., ceil(K/2), N)
once at load time where B is computed from weights alone (`loop-hoist-constants`), per run where it is an activation
(attention's scores and context), and "matmul" sums `llvmx.dot_bf16(0.0, a, b)` over the words in float32 (Gemm's
"gemm_bf16_lhs", "gemm_bf16_rhs", "gemm", then "gemm_bias": `alpha * sum + beta * C`). A vector A or B, a broadcast B
batch, and run-time K, N or B batch axes stay float32. Past K both sides' words hold 0.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph, llvm_ext, te
from minimlc.lowering.graph.graph_bf16_products import BF16_PRODUCTS_ATTR
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    broadcast_indices,
    build_compute,
    constant,
    index_constant,
    scaled,
)
from minimlc.lowering.graph_to_te.builder import read as read_at
from minimlc.lowering.graph_to_te.extents import Extent, Extents
from minimlc.lowering.graph_to_te.nn import _affine  # pyright: ignore[reportPrivateUsage]

__all__ = ["BF16_PRODUCTS_ATTR", "bf16_word", "gemm_form", "matmul_form", "pair_index"]


def bf16_word(low: SSAValue, high: SSAValue) -> SSAValue:
    """The i32 word of two float32 values rounded to bfloat16: `low`'s in bits 0-15, `high`'s in bits 16-31
    (`llvmx.pack_bf16`, which the LLVM lowerings give the target's conversion)."""
    return llvm_ext.PackBF16Op(low, high).result


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


Reader = Callable[[Indices, SSAValue, SSAValue], SSAValue]
"""`(batch, k, n)` -> the float32 element of B at batch indices `batch`, depth `k` and column `n`."""


def matmul_form(op: graph.MatMulOp) -> list[te.ComputeOp] | None:
    """The bfloat16 form of a marked MatMul (see the module docstring), or None where it stays float32."""
    lhs, rhs = graph.shape_of(op.lhs), graph.shape_of(op.rhs)
    if BF16_PRODUCTS_ATTR not in op.attributes or len(lhs) < 2 or len(rhs) < 2 or DYNAMIC_INDEX in rhs:
        return None
    if len(rhs) > 2 and rhs[:-2] != lhs[:-2]:
        return None  # B's batch must be A's: the bf16 GEMM rule tiles no broadcast B
    extents = Extents(op)
    outer = [extents.at(op.lhs, axis) for axis in range(len(lhs) - 1)]
    *batch, depth, columns = rhs

    def a(k: SSAValue, outer_indices: Indices) -> SSAValue:
        return read_at(op.lhs, [*outer_indices, k])

    left = _words("matmul_bf16_lhs", outer, depth, a)
    right = _rhs_words("matmul_bf16_rhs", batch, depth, columns, lambda b, k, n: read_at(op.rhs, [*b, k, n]))
    return [left, right, _dot_sum("matmul", left, right, [*outer, columns], depth)]


def gemm_form(op: graph.GemmOp) -> list[te.ComputeOp] | None:
    """The bfloat16 form of a marked Gemm (see the module docstring), or None where it stays float32."""
    b = graph.shape_of(op.b)
    if BF16_PRODUCTS_ATTR not in op.attributes or DYNAMIC_INDEX in b:
        return None
    extents = Extents(op)
    depth, columns = (b[1], b[0]) if op.trans_b else b
    rows = extents.at(op.a, 1 if op.trans_a else 0)
    left = _words("gemm_bf16_lhs", [rows], depth, lambda k, i: read_at(op.a, [k, *i] if op.trans_a else [*i, k]))
    right = _rhs_words(
        "gemm_bf16_rhs", [], depth, columns, lambda _, k, n: read_at(op.b, [n, k] if op.trans_b else [k, n])
    )
    shape = [rows, columns]
    gemm = _dot_sum("gemm", left, right, shape, depth)
    alpha, beta, bias = op.alpha.value.data, op.beta.value.data, op.c
    if bias is None and alpha == 1.0:
        return [left, right, gemm]

    def epilogue(indices: Indices) -> SSAValue:
        total = scaled(read_at(gemm.result, indices), alpha)
        if bias is None:
            return total
        c = read_at(bias, broadcast_indices(graph.shape_of(bias), shape, indices))
        return arith.AddfOp(total, scaled(c, beta)).result

    return [left, right, gemm, build_compute("gemm_bias", shape, epilogue)]


def _words(tag: str, outer: list[Extent], depth: int, element: Callable[[SSAValue, Indices], SSAValue]) -> te.ComputeOp:
    """A's words (..., ceil(depth / 2)): `element(k, outer_indices)` paired along k (0 past the depth)."""

    def body(indices: Indices) -> SSAValue:
        *outer_indices, word = indices
        return bf16_word(*(_paired(word, j, depth, lambda k: element(k, outer_indices)) for j in (0, 1)))

    return build_compute(tag, (*outer, -(-depth // 2)), body)


def _rhs_words(tag: str, batch: list[int], depth: int, columns: int, element: Reader) -> te.ComputeOp:
    """B's words (batch..., ceil(depth / 2), columns): `element(batch_indices, k, n)` paired along k (0 past the
    depth)."""

    def body(indices: Indices) -> SSAValue:
        *batch_indices, word, column = indices
        return bf16_word(*(_paired(word, j, depth, lambda k: element(batch_indices, k, column)) for j in (0, 1)))

    return build_compute(tag, (*batch, -(-depth // 2), columns), body)


def _paired(word: SSAValue, j: int, depth: int, element: Callable[[SSAValue], SSAValue]) -> SSAValue:
    """Element j of `word` along the depth, 0.0 past it."""
    k, inside = pair_index(word, j, depth)
    value = element(k)
    return value if inside is None else arith.SelectOp(inside, value, constant(0.0, f32)).result


def _dot_sum(tag: str, left: te.ComputeOp, right: te.ComputeOp, shape: list[Extent], depth: int) -> te.ComputeOp:
    """The float32 sum over words of `llvmx.dot_bf16(0.0, left[..., w], right[w, n])`."""

    batched = len(graph.shape_of(right.result)) > 2  # B's batch axes are A's

    def product(indices: Indices) -> SSAValue:
        *outer, column, word = indices
        b_batch = outer[:-1] if batched else []
        a, b = read_at(left.result, [*outer, word]), read_at(right.result, [*b_batch, word, column])
        return llvm_ext.DotBF16Op(constant(0.0, f32), a, b).result

    return build_compute(tag, shape, product, (-(-depth // 2),), "sum")
