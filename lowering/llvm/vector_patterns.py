"""`vector` -> `llvm` patterns of the `convert-to-llvm` pass, for what `loop-vectorize` emits.

`vector.load`/`vector.store` on a memref become an `llvm.load`/`llvm.store` of the whole vector at the address of
the first element (alignment: one element, as accesses need not be vector-aligned); `vector.broadcast` becomes
`insertelement` into lane 0 and a zero-mask `shufflevector` (x86 `vbroadcastss`); `vector.fma` becomes the
`llvm.fma` intrinsic; `vector.shuffle` (a strided read's lanes picked from the span it loads) becomes
`shufflevector`. Assumes 1-D vectors of scalars, which is all `loop-vectorize` produces.
"""

from __future__ import annotations

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, VectorType, i32, i64
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.lowering.llvm.conversion import as_llvm, element_pointer, replace_lowered
from minimlc.lowering.strategy.data_layout import byte_size


class LoadLowering(RewritePattern):
    """Lowers `vector.load` to an `llvm.load` of the vector type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter) -> None:
        pointer = element_pointer(rewriter, op, op.base, tuple(op.indices))
        alignment = byte_size(op.result.type.element_type)
        replace_lowered(rewriter, op, [llvm.LoadOp(pointer, op.result.type, alignment=alignment)])


class StoreLowering(RewritePattern):
    """Lowers `vector.store` to an `llvm.store` of the vector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter) -> None:
        pointer = element_pointer(rewriter, op, op.base, tuple(op.indices))
        assert isinstance(op.vector.type, VectorType)
        alignment = byte_size(op.vector.type.element_type)
        rewriter.replace(op, llvm.StoreOp(op.vector, pointer, alignment=alignment))


class BroadcastLowering(RewritePattern):
    """Lowers `vector.broadcast` of a scalar to `insertelement` + zero-mask `shufflevector`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter) -> None:
        vector_type = op.vector.type
        assert isinstance(vector_type, VectorType)
        (lanes,) = vector_type.get_shape()
        undef = llvm.UndefOp(vector_type)
        zero = llvm.ConstantOp(IntegerAttr(0, i64), i64)
        first = llvm.InsertElementOp(undef, as_llvm(rewriter, op.source), zero)
        mask = DenseArrayBase.from_list(i32, [0] * lanes)
        splat = llvm.ShuffleVectorOp(first, undef, mask, vector_type)
        replace_lowered(rewriter, op, [undef, zero, first, splat])


class FmaLowering(RewritePattern):
    """Lowers `vector.fma` to the `llvm.fma` intrinsic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.FMAOp(op.lhs, op.rhs, op.acc))


class ShuffleLowering(RewritePattern):
    """Lowers a 1-D `vector.shuffle` to `shufflevector` with the same mask."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter) -> None:
        mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        result_type = op.result.type
        assert isinstance(result_type, VectorType)
        rewriter.replace(op, llvm.ShuffleVectorOp(op.v1, op.v2, mask, result_type))


VECTOR_PATTERNS: list[RewritePattern] = [
    LoadLowering(),
    StoreLowering(),
    BroadcastLowering(),
    FmaLowering(),
    ShuffleLowering(),
]
