"""`llvmx.dot_u8s8` -> the x86 VNNI or AArch64 I8MM intrinsic, or shifts and multiplies, in `convert-to-llvm`.

Where the target has the instruction (`Target.dot_u8s8_bits`: AVX512-VNNI, AVX-VNNI; AArch64's `usdot`) a vector of
i32 lanes is cut into the widest register the target's `vpdpbusd` takes (16, 8 or 4 lanes; `usdot`: 4, its operands
as the 16 bytes they hold) and each piece becomes one call:

    %r = llvmx.dot_u8s8 %acc, %a, %b : vector<32xi32>
    // becomes, on znver4
    %a0 = llvm.shufflevector %a, %a [0, ..., 15] ; ... ; %r0 = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(...)
    %r = llvm.shufflevector %r0, %r1 [0, ..., 31]
    // on aarch64-linux-gnu -mcpu=neoverse-v1, per 4 lanes
    %a0b = llvm.bitcast %a0 : vector<4xi32> to vector<16xi8> ; ...
    %r0 = llvm.call_intrinsic "llvm.aarch64.neon.usdot.v4i32.v16i8"(%acc0, %a0b, %b0b)

A scalar, a vector that no power of two of registers fills, or a target without the instruction get the definition in
arith ops (before the conversion's one walk, which then lowers them like any others): per byte j, the unsigned byte
`(a >> 8j) & 255` times the signed byte `(b << (24 - 8j)) >>s 24`, summed onto the accumulator.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, VectorType, i8, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.conversion import as_llvm, replace_lowered
from minimlc.lowering.target import Target


def intrinsic_lanes(target: Target, kind: object) -> int:
    """Lanes of each `vpdpbusd` call for a dot product of type `kind` on `target` (the pieces, a power of two of
    them, are joined pairwise), 0 if it gets the expansion."""
    if not isinstance(kind, VectorType):
        return 0
    (lanes,) = kind.get_shape()
    widest = target.dot_u8s8_bits // 32
    fits = [width for width in (16, 8, 4) if width <= widest and lanes % width == 0]
    pieces = lanes // fits[0] if fits else 0
    return fits[0] if pieces and pieces & (pieces - 1) == 0 else 0


def dot_intrinsic(target: Target, width: int) -> tuple[str, bool]:
    """The intrinsic of a `width`-lane piece on `target`, and whether its two byte operands are passed as bytes
    (`usdot`'s `<16 x i8>`) rather than as the i32 words holding them (`vpdpbusd`)."""
    if target.arch == "aarch64":
        return "llvm.aarch64.neon.usdot.v4i32.v16i8", True
    return f"llvm.x86.avx512.vpdpbusd.{width * 32}", False


def expand_dot_products(module: ModuleOp, target: Target) -> None:
    """Replace every `llvmx.dot_u8s8` that `target` has no instruction for by its definition in arith ops."""
    for op in list(module.walk()):
        if isinstance(op, llvm_ext.DotU8S8Op) and not intrinsic_lanes(target, op.result.type):
            builder = Builder(InsertPoint.before(op))
            op.result.replace_all_uses_with(dot_product_expansion(builder, op.acc, op.lhs, op.rhs))
            op.detach()
            op.erase()


def dot_product_expansion(builder: Builder, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    kind = acc.type

    def constant(value: int) -> SSAValue:
        scalar = builder.insert(arith.ConstantOp(IntegerAttr(value, i32))).result
        return builder.insert(vector.BroadcastOp(scalar, kind)).vector if isinstance(kind, VectorType) else scalar

    total = acc
    for byte in range(4):
        unsigned = builder.insert(arith.ShRUIOp(lhs, constant(8 * byte))).result
        unsigned = builder.insert(arith.AndIOp(unsigned, constant(255))).result
        signed = builder.insert(arith.ShLIOp(rhs, constant(24 - 8 * byte))).result
        signed = builder.insert(arith.ShRSIOp(signed, constant(24))).result
        product = builder.insert(arith.MuliOp(unsigned, signed)).result
        total = builder.insert(arith.AddiOp(total, product)).result
    return total


class DotU8S8Lowering(RewritePattern):
    """Lowers a vector `llvmx.dot_u8s8` to one `vpdpbusd` (or `usdot`) intrinsic call per register-wide piece."""

    def __init__(self, target: Target):
        self.target = target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: llvm_ext.DotU8S8Op, rewriter: PatternRewriter) -> None:
        kind = op.result.type
        width = intrinsic_lanes(self.target, kind)
        assert isinstance(kind, VectorType), "expand_dot_products leaves only vector dot products"
        assert width, "expand_dot_products leaves only register-wide dot products"
        (lanes,) = kind.get_shape()
        piece = VectorType(i32, [width])
        intrinsic, as_bytes = dot_intrinsic(self.target, width)
        operands = [as_llvm(rewriter, value) for value in op.operands]
        new_ops: list[llvm.ShuffleVectorOp | llvm.CallIntrinsicOp | llvm.BitcastOp] = []
        results: list[SSAValue] = []
        for start in range(0, lanes, width):
            pieces: list[SSAValue] = []
            for value in operands:
                if width != lanes:
                    mask = DenseArrayBase.from_list(i32, list(range(start, start + width)))
                    new_ops.append(llvm.ShuffleVectorOp(value, value, mask, piece))
                    value = new_ops[-1].res
                if as_bytes and pieces:  # the accumulator stays i32 words
                    new_ops.append(llvm.BitcastOp(value, VectorType(i8, [4 * width])))
                    value = new_ops[-1].results[0]
                pieces.append(value)
            new_ops.append(llvm.CallIntrinsicOp(intrinsic, pieces, [piece]))
            results.append(new_ops[-1].results[0])
        while len(results) > 1:
            results = _concatenated(results, new_ops)
        replace_lowered(rewriter, op, new_ops, results)


def _concatenated(
    parts: list[SSAValue], new_ops: list[llvm.ShuffleVectorOp | llvm.CallIntrinsicOp | llvm.BitcastOp]
) -> list[SSAValue]:
    """Concatenate neighbouring pairs of equal-width vectors (one shufflevector each)."""
    joined: list[SSAValue] = []
    for first, second in zip(parts[::2], parts[1::2], strict=True):
        assert isinstance(first.type, VectorType)
        (lanes,) = first.type.get_shape()
        mask = DenseArrayBase.from_list(i32, list(range(2 * lanes)))
        new_ops.append(llvm.ShuffleVectorOp(first, second, mask, VectorType(i32, [2 * lanes])))
        joined.append(new_ops[-1].res)
    return joined
