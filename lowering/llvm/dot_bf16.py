"""`llvmx.dot_bf16` -> AVX512-BF16's `vdpbf16ps` or AArch64's `bfdot`, or shifts and multiplies, in `convert-to-llvm`
and in the direct emitter (which give the same LLVM IR).

Where the target has the instruction (`Target.dot_bf16_bits`) a vector of f32 lanes is cut into the widest register
the instruction takes (x86: 16, 8 or 4 lanes; AArch64: 4), its words reinterpreted as the bfloat16 pairs they hold,
one call per piece, the pieces joined pairwise:

    %r = llvmx.dot_bf16 %acc, %a, %b : vector<16xf32>, vector<16xi32>
    // becomes, on znver4
    %a16 = llvm.bitcast %a : vector<16xi32> to vector<32xbf16> ; %b16 likewise
    %r = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %a16, %b16)
    // on aarch64-linux-gnu -mcpu=neoverse-v1, per 4 lanes
    %a0 = llvm.shufflevector %a, %a [0, 1, 2, 3] ; %a0h = llvm.bitcast %a0 : vector<4xi32> to vector<8xbf16> ; ...
    %r0 = llvm.call_intrinsic "llvm.aarch64.neon.bfdot.v4f32.v8bf16"(%acc0, %a0h, %b0h)

A scalar, a vector no power of two of registers fills, or a target without the instruction get the definition in
arith ops (before the conversion's walk, which lowers them like any others): a word's low value is the f32 of its
bits shifted up 16, its high value the f32 of its bits with the low 16 cleared, `acc + lo_a lo_b + hi_a hi_b`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import BFloat16Type, VectorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.conversion import as_llvm, replace_lowered
from minimlc.lowering.llvm.dot_pieces import (
    Expansion,
    emit_expanded,
    emit_joined,
    emit_split_pieces,
    i32_splat,
    joined_pairs,
    piece_lanes,
    split_pieces,
)
from minimlc.lowering.target import Target

if TYPE_CHECKING:  # the emitter imports the conversion, which imports this module
    from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Value

BFDOT = "llvm.aarch64.neon.bfdot.v4f32.v8bf16"
"""AArch64's bfloat16 pair dot product: `<4 x float>` accumulator, two `<8 x bfloat>` operands."""


def bf16_lanes(target: Target, kind: object) -> int:
    """f32 lanes of each intrinsic call for a dot product of type `kind` on `target`, 0 if it gets the expansion."""
    return piece_lanes(kind, target.dot_bf16_bits // 32)  # type: ignore[arg-type]


def bf16_intrinsic(target: Target, width: int) -> str:
    """The intrinsic of a `width`-lane piece on `target`."""
    return BFDOT if target.arch == "aarch64" else f"llvm.x86.avx512bf16.dpbf16ps.{width * 32}"


def bf16_dot_expander(target: Target) -> Callable[[Operation], Expansion | None]:
    """For `expand_ops`: a `llvmx.dot_bf16` that `target` has no instruction for gets its definition in arith ops."""
    return lambda op: None if bf16_lanes(target, op.results[0].type) else bf16_dot_expansion


def bf16_dot_expansion(builder: Builder, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`acc + lo(lhs) lo(rhs) + hi(lhs) hi(rhs)` in arith ops, the low value first."""
    floats = acc.type
    shift, high_half = i32_splat(builder, 16, lhs.type), i32_splat(builder, -65536, lhs.type)  # 0xFFFF0000

    def low(word: SSAValue) -> SSAValue:
        return builder.insert(arith.BitcastOp(builder.insert(arith.ShLIOp(word, shift)).result, floats)).result

    def high(word: SSAValue) -> SSAValue:
        return builder.insert(arith.BitcastOp(builder.insert(arith.AndIOp(word, high_half)).result, floats)).result

    total = acc
    for half in (low, high):
        product = builder.insert(arith.MulfOp(half(lhs), half(rhs))).result
        total = builder.insert(arith.AddfOp(total, product)).result
    return total


class DotBF16Lowering(RewritePattern):
    """Lowers a vector `llvmx.dot_bf16` to one `vdpbf16ps` (or `bfdot`) call per register-wide piece."""

    def __init__(self, target: Target):
        self.target = target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: llvm_ext.DotBF16Op, rewriter: PatternRewriter) -> None:
        kind = op.result.type
        width = bf16_lanes(self.target, kind)
        assert isinstance(kind, VectorType), "expand_ops leaves only vector dot products"
        assert width, "expand_ops leaves only register-wide dot products"
        intrinsic = bf16_intrinsic(self.target, width)
        operands = [as_llvm(rewriter, value) for value in op.operands]
        new_ops: list[Operation] = []
        pairs = VectorType(BFloat16Type(), [2 * width])
        results: list[SSAValue] = []
        for piece in split_pieces(operands, width, new_ops, lambda position: pairs if position else None):
            new_ops.append(llvm.CallIntrinsicOp(intrinsic, piece, [VectorType(f32, [width])]))
            results.append(new_ops[-1].results[0])
        while len(results) > 1:
            results = joined_pairs(results, new_ops)
        replace_lowered(rewriter, op, new_ops, results)


def emit_bf16_dot(
    fe: FunctionEmitter,
    op: llvm_ext.DotBF16Op,
    call: Callable[..., str],
    emit_op: Callable[[FunctionEmitter, Operation], None],
) -> Value:
    """`DotBF16Lowering` (or the expansion) as LLVM IR text in the direct emitter, in the same order; `call(fe, name,
    args, result)` emits an intrinsic call, `emit_op` any other op."""
    kind = op.result.type
    width = bf16_lanes(fe.module.target, kind)
    if not width:
        return emit_expanded(fe, op, bf16_dot_expansion, emit_op)
    name = bf16_intrinsic(fe.module.target, width)
    pairs, piece = f"<{2 * width} x bfloat>", f"<{width} x float>"
    operands = [fe.values[v] for v in op.operands]
    pieces = emit_split_pieces(fe, operands, width, lambda position: pairs if position else None)
    results = [(piece, call(fe, name, parts, piece)) for parts in pieces]
    return emit_joined(fe, results)
