"""`llvmx.dot_u8s8` -> the x86 VNNI or AArch64 I8MM intrinsic, AVX2's `vpmaddwd`, or shifts and multiplies, in
`convert-to-llvm`.

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

On x86 with AVX2 but no VNNI (`Target.dot_u8s8_madd_bits`) each 8-lane piece (4: SSE2's) is two exact `vpmaddwd`
instead, the bytes widened to i16 in place (`madd_dot_product`; not `vpmaddubsw`, whose i16 sums saturate), unless
the op's bounds keep every pair sum `a0 b0 + a1 b1` inside i16 (`maddubs_exact`, in `strategy/dot_product_form.py`,
which the integer schedule rules read too): `lhs_max` at most 128 (int4 codes: 15; 2 * 128 * -128 = -32768) or
`rhs_bits` 7 (weights in [-64, 63], known at import: 2 * 255 * -64 = -32640). Then each piece is one `vpmaddubsw`
and one `vpmaddwd` by ones (`maddubs_dot_product`), 32 multiply-adds in two instructions against the exact form's 16
in two plus four shifts:

    %r = llvmx.dot_u8s8 %acc, %a, %b {rhs_bits = 7 : i64} : vector<8xi32>
    // becomes, on x86_64 -mcpu=znver3
    %p = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%a8, %b8) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
    %s = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%p, %ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>

On
AArch64 with the dot product extension but no I8MM (`Target.dot_u8s8_udot_bits`: neoverse-n1, cortex-a76) each
4-lane piece is two `udot` (`udot_dot_product`): the signed bytes made unsigned by adding 128, and 128 times the sum
of the unsigned bytes (a `udot` with 128) taken off again.

A scalar, a vector that no power of two of registers fills, or a target without either get the definition in
arith ops (before the conversion's one walk, which then lowers them like any others): per byte j, the unsigned byte
`(a >> 8j) & 255` times the signed byte `(b << (24 - 8j)) >>s 24`, summed onto the accumulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    VectorType,
    i8,
    i16,
    i32,
)
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.conversion import as_llvm, replace_lowered
from minimlc.lowering.llvm.dot_pieces import Expansion, i32_splat, joined_pairs, piece_lanes, split_pieces
from minimlc.lowering.strategy.dot_product_form import takes_maddubs
from minimlc.lowering.target import Target

if TYPE_CHECKING:  # the emitter imports the conversion, which imports this module
    from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Value


UDOT = "llvm.aarch64.neon.udot.v4i32.v16i8"
"""AArch64's u8 x u8 four-way dot product: `<4 x i32>` accumulator, two `<16 x i8>` operands."""

MADD_INTRINSICS = {8: "llvm.x86.avx2.pmadd.wd", 4: "llvm.x86.sse2.pmadd.wd"}
"""`vpmaddwd` of a piece's lane count: `<2n x i16>` x `<2n x i16>` -> `<n x i32>`, each lane the exact sum of the two
products of its i16 pair."""

MADDUBS_INTRINSICS = {8: "llvm.x86.avx2.pmadd.ub.sw", 4: "llvm.x86.ssse3.pmadd.ub.sw.128"}
"""`vpmaddubsw` of a piece's lane count: `<4n x i8>` (unsigned) x `<4n x i8>` (signed) -> `<2n x i16>`, each lane the
sum of the two products of its byte pair, saturated."""


def intrinsic_lanes(target: Target, kind: object) -> int:
    """Lanes of each `vpdpbusd` (or `vpmaddwd` pair) for a dot product of type `kind` on `target` (the pieces, a
    power of two of them, are joined pairwise), 0 if it gets the expansion."""
    widest = (target.dot_u8s8_bits or target.dot_u8s8_madd_bits or target.dot_u8s8_udot_bits) // 32
    return piece_lanes(kind, widest)  # type: ignore[arg-type]


def dot_intrinsic(target: Target, width: int, lhs_bound: int = 255, rhs_bits: int = 8) -> tuple[str, bool]:
    """The intrinsic of a `width`-lane piece on `target` whose unsigned bytes are at most `lhs_bound` and signed ones
    fit `rhs_bits` bits, and whether its two byte operands are passed as bytes (`usdot`'s `<16 x i8>`) rather than
    as the i32 words holding them (`vpdpbusd`)."""
    if target.arch == "aarch64":
        return (UDOT if target.dot_u8s8_udot_bits else "llvm.aarch64.neon.usdot.v4i32.v16i8"), True
    if takes_maddubs(target, lhs_bound, rhs_bits):
        return MADDUBS_INTRINSICS[width], True
    if target.dot_u8s8_madd_bits:
        return MADD_INTRINSICS[width], False
    return f"llvm.x86.avx512.vpdpbusd.{width * 32}", False


def dot_product_expander(target: Target) -> Callable[[Operation], Expansion | None]:
    """For `expand_ops`: a `llvmx.dot_u8s8` that `target` has no instruction for gets its definition in arith ops."""
    return lambda op: None if intrinsic_lanes(target, op.results[0].type) else dot_product_expansion


def dot_product_expansion(builder: Builder, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    def constant(value: int) -> SSAValue:
        return i32_splat(builder, value, acc.type)

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
        assert isinstance(kind, VectorType), "expand_ops leaves only vector dot products"
        assert width, "expand_ops leaves only register-wide dot products"
        piece = VectorType(i32, [width])
        intrinsic, as_bytes = dot_intrinsic(self.target, width, op.lhs_bound, op.rhs_width)
        operands = [as_llvm(rewriter, value) for value in op.operands]
        new_ops: list[Operation] = []
        results: list[SSAValue] = []
        as_i8 = VectorType(i8, [4 * width])  # `usdot` takes the bytes; the accumulator stays i32 words
        for pieces in split_pieces(operands, width, new_ops, lambda position: as_i8 if as_bytes and position else None):
            if intrinsic in MADD_INTRINSICS.values():
                new_ops += madd_dot_product(intrinsic, width, *pieces)
            elif intrinsic in MADDUBS_INTRINSICS.values():
                new_ops += maddubs_dot_product(intrinsic, width, *pieces)
            elif intrinsic == UDOT:
                new_ops += udot_dot_product(*pieces)
            else:
                new_ops.append(llvm.CallIntrinsicOp(intrinsic, pieces, [piece]))
            results.append(new_ops[-1].results[0])
        while len(results) > 1:
            results = joined_pairs(results, new_ops)
        replace_lowered(rewriter, op, new_ops, results)


def madd_dot_product(intrinsic: str, width: int, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> list[Operation]:
    """The exact u8 x s8 dot product of `width` i32 lanes through two `vpmaddwd` (`intrinsic`), its result last. Each
    word, read as two i16 halves, gives its even bytes (the low byte of each half: `x & 255` unsigned,
    `(x << 8) >>s 8` signed) and its odd bytes (`x >> 8`, `x >>s 8`) widened in place, so that `vpmaddwd` of the
    even ones gives `a0 b0 + a2 b2` in the word's own lane (at most 2 * 255 * 128 in size), of the odd ones
    `a1 b1 + a3 b3`, and no lane moves:

        %a16 = llvm.bitcast %a : vector<8xi32> to vector<16xi16> ; %b16 likewise
        %even = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%a16 & 255, (%b16 << 8) >>s 8)
        %odd = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%a16 >> 8, %b16 >>s 8)
        %r = llvm.add %acc, (llvm.add %even, %odd)
    """
    piece, halves = VectorType(i32, [width]), VectorType(i16, [2 * width])
    ops: list[Operation] = [
        llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(halves, [value] * 2 * width), halves) for value in (8, 255)
    ]
    eight, low_byte = (constant.results[0] for constant in ops)

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    a16, b16 = (add(llvm.BitcastOp(value, halves)) for value in (lhs, rhs))
    a_even = add(llvm.AndOp(a16, low_byte))
    a_odd = add(llvm.LShrOp(a16, eight))
    b_even = add(llvm.AShrOp(add(llvm.ShlOp(b16, eight)), eight))
    b_odd = add(llvm.AShrOp(b16, eight))
    even = add(llvm.CallIntrinsicOp(intrinsic, [a_even, b_even], [piece]))
    odd = add(llvm.CallIntrinsicOp(intrinsic, [a_odd, b_odd], [piece]))
    add(llvm.AddOp(acc, add(llvm.AddOp(even, odd))))
    return ops


def maddubs_dot_product(intrinsic: str, width: int, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> list[Operation]:
    """The u8 x s8 dot product of `width` i32 lanes (`lhs`, `rhs`: their bytes) whose bounds are `maddubs_exact`, its
    result last: `vpmaddubsw` (`intrinsic`) sums byte pairs into i16 lanes, exactly within those bounds, and
    `vpmaddwd` by ones sums i16 pairs into the i32 lanes of their word; no lane moves:

        %pairs = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%a, %b) : (vector<32xi8>, ...) -> vector<16xi16>
        %sums = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%pairs, dense<1>) : (...) -> vector<8xi32>
        %r = llvm.add %acc, %sums
    """
    piece, halves = VectorType(i32, [width]), VectorType(i16, [2 * width])
    ones = llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(halves, [1] * 2 * width), halves)
    pairs = llvm.CallIntrinsicOp(intrinsic, [lhs, rhs], [halves])
    sums = llvm.CallIntrinsicOp(MADD_INTRINSICS[width], [pairs.results[0], ones.result], [piece])
    return [ones, pairs, sums, llvm.AddOp(acc, sums.results[0])]


def udot_dot_product(acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> list[Operation]:
    """The exact u8 x s8 dot product of 4 i32 lanes (`lhs`, `rhs`: their 16 bytes) through two `udot`, its result last:
    each signed byte b plus 128 is the unsigned byte `b ^ 128`, so `sum a b = udot(a, b ^ 128) - 128 sum a`, and
    `128 sum a` is `udot(a, 128)`, the same byte constant (the same for every piece of one `a`, computed once after
    CSE); every step is exact modulo 2^32, as the portable expansion's i32 arithmetic is:

        %b_u = llvm.xor %b, dense<-128> : vector<16xi8>
        %d = llvm.call_intrinsic "llvm.aarch64.neon.udot.v4i32.v16i8"(%acc, %a, %b_u)
        %sum = llvm.call_intrinsic "llvm.aarch64.neon.udot.v4i32.v16i8"(dense<0>, %a, dense<-128>)
        %r = llvm.sub %d, %sum
    """
    piece, as_bytes = VectorType(i32, [4]), VectorType(i8, [16])
    ops: list[Operation] = [
        llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(kind, [value] * kind.element_count()), kind)
        for kind, value in ((as_bytes, -128), (piece, 0))
    ]
    byte_128, zero = (constant.results[0] for constant in ops)

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    rhs_unsigned = add(llvm.XOrOp(rhs, byte_128))
    dot = add(llvm.CallIntrinsicOp(UDOT, [acc, lhs, rhs_unsigned], [piece]))
    add(llvm.SubOp(dot, add(llvm.CallIntrinsicOp(UDOT, [zero, lhs, byte_128], [piece]))))
    return ops


def emit_dot_piece(
    fe: FunctionEmitter, intrinsic: str, width: int, pieces: list[Value], call: Callable[..., str]
) -> Value:
    """One piece of `DotU8S8Lowering` as LLVM IR text in the direct emitter: `pieces` are the accumulator and the
    two words (or bytes), `call(fe, name, args, result)` emits an intrinsic call (`vpdpbusd`, `usdot`: one; else
    `madd_dot_product`, `maddubs_dot_product` or `udot_dot_product`, in the same order)."""
    piece, halves = f"<{width} x i32>", f"<{2 * width} x i16>"
    if intrinsic == UDOT:
        return piece, _emit_udot_piece(fe, pieces, call)
    if intrinsic in MADDUBS_INTRINSICS.values():
        (_, acc), lhs, rhs = pieces
        ones = f"<{', '.join(['i16 1'] * 2 * width)}>"
        pairs = call(fe, intrinsic, [lhs, rhs], halves)
        sums = call(fe, MADD_INTRINSICS[width], [(halves, pairs), (halves, ones)], piece)
        return piece, fe.emit(f"add {piece} {acc}, {sums}", None, piece)
    if intrinsic not in MADD_INTRINSICS.values():
        return piece, call(fe, intrinsic, pieces, piece)
    (_, acc), (_, lhs), (_, rhs) = pieces
    eight, low_byte = (f"<{', '.join([f'i16 {value}'] * 2 * width)}>" for value in (8, 255))
    a16, b16 = (fe.emit(f"bitcast {piece} {value} to {halves}", None, halves) for value in (lhs, rhs))
    a_even = fe.emit(f"and {halves} {a16}, {low_byte}", None, halves)
    a_odd = fe.emit(f"lshr {halves} {a16}, {eight}", None, halves)
    shifted = fe.emit(f"shl {halves} {b16}, {eight}", None, halves)
    b_even = fe.emit(f"ashr {halves} {shifted}, {eight}", None, halves)
    b_odd = fe.emit(f"ashr {halves} {b16}, {eight}", None, halves)
    even, odd = (call(fe, intrinsic, [(halves, x), (halves, y)], piece) for x, y in ((a_even, b_even), (a_odd, b_odd)))
    pairs = fe.emit(f"add {piece} {even}, {odd}", None, piece)
    return piece, fe.emit(f"add {piece} {acc}, {pairs}", None, piece)


def _emit_udot_piece(fe: FunctionEmitter, pieces: list[Value], call: Callable[..., str]) -> str:
    """`udot_dot_product` as LLVM IR text, in the same order."""
    (_, acc), (_, lhs), (_, rhs) = pieces
    piece, as_bytes = "<4 x i32>", "<16 x i8>"
    byte_128, zero = f"<{', '.join(['i8 -128'] * 16)}>", f"<{', '.join(['i32 0'] * 4)}>"
    rhs_unsigned = fe.emit(f"xor {as_bytes} {rhs}, {byte_128}", None, as_bytes)
    dot = call(fe, UDOT, [(piece, acc), (as_bytes, lhs), (as_bytes, rhs_unsigned)], piece)
    lhs_sum = call(fe, UDOT, [(piece, zero), (as_bytes, lhs), (as_bytes, byte_128)], piece)
    return fe.emit(f"sub {piece} {dot}, {lhs_sum}", None, piece)
