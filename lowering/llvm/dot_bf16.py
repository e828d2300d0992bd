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
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import BFloat16Type, DenseArrayBase, IntegerAttr, ModuleOp, VectorType, f32, i32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.conversion import as_llvm, replace_lowered
from minimlc.lowering.target import Target

if TYPE_CHECKING:  # the emitter imports the conversion, which imports this module
    from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Value

BFDOT = "llvm.aarch64.neon.bfdot.v4f32.v8bf16"
"""AArch64's bfloat16 pair dot product: `<4 x float>` accumulator, two `<8 x bfloat>` operands."""


def bf16_lanes(target: Target, kind: object) -> int:
    """f32 lanes of each intrinsic call for a dot product of type `kind` on `target` (the pieces, a power of two of
    them, are joined pairwise), 0 if it gets the expansion."""
    if not isinstance(kind, VectorType):
        return 0
    (lanes,) = kind.get_shape()
    fits = [width for width in (16, 8, 4) if width <= target.dot_bf16_bits // 32 and lanes % width == 0]
    pieces = lanes // fits[0] if fits else 0
    return fits[0] if pieces and pieces & (pieces - 1) == 0 else 0


def bf16_intrinsic(target: Target, width: int) -> str:
    """The intrinsic of a `width`-lane piece on `target`."""
    return BFDOT if target.arch == "aarch64" else f"llvm.x86.avx512bf16.dpbf16ps.{width * 32}"


def expand_bf16_dot_products(module: ModuleOp, target: Target) -> None:
    """Replace every `llvmx.dot_bf16` that `target` has no instruction for by its definition in arith ops."""
    for op in list(module.walk()):
        if isinstance(op, llvm_ext.DotBF16Op) and not bf16_lanes(target, op.result.type):
            builder = Builder(InsertPoint.before(op))
            op.result.replace_all_uses_with(bf16_dot_expansion(builder, op.acc, op.lhs, op.rhs))
            op.detach()
            op.erase()


def bf16_dot_expansion(builder: Builder, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`acc + lo(lhs) lo(rhs) + hi(lhs) hi(rhs)` in arith ops, the low value first."""
    words = lhs.type

    def constant(value: int) -> SSAValue:
        scalar = builder.insert(arith.ConstantOp(IntegerAttr(value, i32))).result
        return builder.insert(vector.BroadcastOp(scalar, words)).vector if isinstance(words, VectorType) else scalar

    floats = acc.type
    shift, high_half = constant(16), constant(-65536)  # 0xFFFF0000

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
        assert isinstance(kind, VectorType), "expand_bf16_dot_products leaves only vector dot products"
        assert width, "expand_bf16_dot_products leaves only register-wide dot products"
        (lanes,) = kind.get_shape()
        intrinsic = bf16_intrinsic(self.target, width)
        operands = [as_llvm(rewriter, value) for value in op.operands]
        new_ops: list[Operation] = []
        results: list[SSAValue] = []
        for start in range(0, lanes, width):
            pieces: list[SSAValue] = []
            for value in operands:
                if width != lanes:
                    assert isinstance(value.type, VectorType)
                    piece = VectorType(value.type.element_type, [width])
                    mask = DenseArrayBase.from_list(i32, list(range(start, start + width)))
                    new_ops.append(llvm.ShuffleVectorOp(value, value, mask, piece))
                    value = new_ops[-1].res
                if pieces:  # the words as the bfloat16 pairs they hold; the accumulator stays f32
                    new_ops.append(llvm.BitcastOp(value, VectorType(BFloat16Type(), [2 * width])))
                    value = new_ops[-1].results[0]
                pieces.append(value)
            new_ops.append(llvm.CallIntrinsicOp(intrinsic, pieces, [VectorType(f32, [width])]))
            results.append(new_ops[-1].results[0])
        while len(results) > 1:
            results = joined_pairs(results, new_ops)
        replace_lowered(rewriter, op, new_ops, results)


def joined_pairs(parts: list[SSAValue], new_ops: list[Operation]) -> list[SSAValue]:
    """Concatenate neighbouring pairs of equal vectors (one shufflevector each, appended to `new_ops`)."""
    joined: list[SSAValue] = []
    for first, second in zip(parts[::2], parts[1::2], strict=True):
        assert isinstance(first.type, VectorType)
        (lanes,) = first.type.get_shape()
        mask = DenseArrayBase.from_list(i32, list(range(2 * lanes)))
        new_ops.append(llvm.ShuffleVectorOp(first, second, mask, VectorType(first.type.element_type, [2 * lanes])))
        joined.append(new_ops[-1].res)
    return joined


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
    if not width:  # the expansion's arith ops, built in a block of their own and emitted like any others
        scratch = Block()
        total = bf16_dot_expansion(Builder(InsertPoint.at_end(scratch)), op.acc, op.lhs, op.rhs)
        for inner in scratch.ops:
            emit_op(fe, inner)
        value = fe.values[total]
        for inner in reversed(list(scratch.ops)):
            inner.detach()
            inner.erase()  # drops their uses of the operands
        return value
    assert isinstance(kind, VectorType)
    (lanes,) = kind.get_shape()
    name = bf16_intrinsic(fe.module.target, width)
    results: list[Value] = []
    for start in range(0, lanes, width):
        pieces: list[Value] = []
        for element, (whole, ref) in zip(("float", "i32", "i32"), (fe.values[v] for v in op.operands), strict=True):
            piece = f"<{width} x {element}>"
            shuffle = f"shufflevector {whole} {ref}, {whole} {ref}, {shuffle_mask(range(start, start + width))}"
            value = (whole, ref) if width == lanes else (piece, fe.emit(shuffle, None, piece))
            if pieces:
                pairs = f"<{2 * width} x bfloat>"
                value = (pairs, fe.emit(f"bitcast {value[0]} {value[1]} to {pairs}", None, pairs))
            pieces.append(value)
        piece = f"<{width} x float>"
        results.append((piece, call(fe, name, pieces, piece)))
    return emit_joined(fe, results)


def emit_joined(fe: FunctionEmitter, parts: list[Value]) -> Value:
    """`joined_pairs` as LLVM IR text, until one vector is left."""
    while len(parts) > 1:
        joined = []
        for (half, first), (_, second) in zip(parts[::2], parts[1::2], strict=True):
            lanes, element = half[1:-1].split(" x ")
            wide = f"<{2 * int(lanes)} x {element}>"
            mask = shuffle_mask(range(2 * int(lanes)))
            joined.append((wide, fe.emit(f"shufflevector {half} {first}, {half} {second}, {mask}", None, wide)))
        parts = joined
    return parts[0]


def shuffle_mask(values: range | list[int]) -> str:
    """A `shufflevector` mask of `values` as LLVM IR text."""
    return f"<{len(values)} x i32> <" + ", ".join(f"i32 {v}" for v in values) + ">"
