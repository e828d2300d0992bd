"""LLVM instructions that xDSL's `llvm` dialect lacks, as the `llvmx` dialect.

Each op mirrors the LLVM IR instruction of the same name; `minimlc.lowering.llvm.translate`
emits them as such. Three ops are target instructions rather than LLVM ones: `llvmx.dot_u8s8`, the four-way byte
dot product of x86 VNNI (`vpdpbusd`), and `llvmx.dot_bf16`, the two-way bfloat16 dot product of AVX512-BF16
(`vdpbf16ps`) and AArch64's BF16 (`bfdot`), which `convert-to-llvm` lowers to the intrinsic where the target has it
and to shifts and multiplies elsewhere; `llvmx.pack_bf16`, the words `llvmx.dot_bf16` takes, made by AVX512-BF16's
conversion (`vcvtneps2bf16`) or by integer rounding elsewhere.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    IntegerAttr,
    IntegerType,
    SignlessIntegerConstraint,
    VectorType,
    f32,
    i32,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    EqAttrConstraint,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException


class FloatToIntCastOp(IRDLOperation, ABC):
    """Base of the float -> integer conversions."""

    arg = operand_def(AnyFloatConstr | VectorType.constr(AnyFloatConstr))
    result = result_def(SignlessIntegerConstraint | VectorType.constr(SignlessIntegerConstraint))

    traits = traits_def(NoMemoryEffect())

    assembly_format = "$arg attr-dict `:` type($arg) `to` type($result)"

    def __init__(self, arg: Operation | SSAValue, result_type: Attribute):
        super().__init__(operands=[arg], result_types=[result_type])


class IntToFloatCastOp(IRDLOperation, ABC):
    """Base of the integer -> float conversions."""

    arg = operand_def(SignlessIntegerConstraint | VectorType.constr(SignlessIntegerConstraint))
    result = result_def(AnyFloatConstr | VectorType.constr(AnyFloatConstr))

    traits = traits_def(NoMemoryEffect())

    assembly_format = "$arg attr-dict `:` type($arg) `to` type($result)"

    def __init__(self, arg: Operation | SSAValue, result_type: Attribute):
        super().__init__(operands=[arg], result_types=[result_type])


@irdl_op_definition
class FPToSIOp(FloatToIntCastOp):
    """Float to signed integer, rounding toward zero: `%i = llvmx.fptosi %x : f32 to i64`."""

    name = "llvmx.fptosi"


@irdl_op_definition
class FPToUIOp(FloatToIntCastOp):
    """Float to unsigned integer, rounding toward zero: `%i = llvmx.fptoui %x : f32 to i64`."""

    name = "llvmx.fptoui"


@irdl_op_definition
class UIToFPOp(IntToFloatCastOp):
    """Unsigned integer to float: `%x = llvmx.uitofp %i : i64 to f32`."""

    name = "llvmx.uitofp"


@irdl_op_definition
class SelectOp(IRDLOperation):
    """A select with one condition per lane, which xDSL's `arith.select` and `llvm.select` (both `i1`) cannot
    express: `%r = llvmx.select %c, %a, %b : vector<8xi1>, vector<8xf32>`."""

    name = "llvmx.select"

    T: ClassVar = VarConstraint("T", VectorType.constr())
    cond = operand_def(VectorType.constr(IntegerType(1)))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"

    def __init__(self, cond: Operation | SSAValue, lhs: Operation | SSAValue, rhs: Operation | SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        cond, value = self.cond.type, self.result.type
        assert isinstance(cond, VectorType)
        assert isinstance(value, VectorType)
        if cond.get_shape() != value.get_shape():
            raise VerifyException(f"{self.name}: condition {cond} and values {value} differ in lanes")


@irdl_op_definition
class FCmpOp(IRDLOperation):
    """A float comparison lane by lane, which xDSL's `llvm.fcmp` (an `i1` result) cannot express; the predicate
    numbers are `llvm.fcmp`'s: `%c = llvmx.fcmp %a, %b {predicate = 4 : i64} : vector<8xf32> -> vector<8xi1>`."""

    name = "llvmx.fcmp"

    T: ClassVar = VarConstraint("T", VectorType.constr(AnyFloatConstr))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(VectorType.constr(IntegerType(1)))
    predicate = prop_def(IntegerAttr)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: int):
        lanes = lhs.type.get_shape() if isinstance(lhs.type, VectorType) else ()
        super().__init__(
            operands=[lhs, rhs],
            result_types=[VectorType(IntegerType(1), lanes)],
            properties={"predicate": IntegerAttr(predicate, 64)},
        )


@irdl_op_definition
class CallIndirectOp(IRDLOperation):
    """A call through a function pointer, which xDSL's `llvm.call` cannot translate:
    `%r = llvmx.call_indirect %fn(%args) : (!llvm.ptr) -> i32`."""

    name = "llvmx.call_indirect"

    callee = operand_def(EqAttrConstraint(LLVMPointerType()))
    args = var_operand_def()
    result = result_def()

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def __init__(self, callee: SSAValue, args: Sequence[SSAValue], result_type: Attribute):
        super().__init__(operands=[callee, args], result_types=[result_type])


@irdl_op_definition
class DotU8S8Op(IRDLOperation):
    """Per 32-bit lane, the accumulator plus the dot product of the lane's four bytes, unsigned in `lhs` and signed
    in `rhs` (x86 `vpdpbusd`; wrapping, never saturating): `acc + sum_j u8(lhs >> 8j) * s8(rhs >> 8j)`, on i32 or
    vectors of i32: `%r = llvmx.dot_u8s8 %acc, %a, %b : vector<16xi32>`. `lhs_max`, where given, states that no
    unsigned byte exceeds it (int4 codes: `{lhs_max = 15 : i64}`), and `rhs_bits` that every signed byte fits that
    many bits (7-bit weights, [-64, 63]: `{rhs_bits = 7 : i64}`), so that a lowering may take a narrower form."""

    name = "llvmx.dot_u8s8"

    T: ClassVar = VarConstraint("T", EqAttrConstraint(i32) | VectorType.constr(EqAttrConstraint(i32)))
    acc = operand_def(T)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    lhs_max = opt_prop_def(IntegerAttr)
    rhs_bits = opt_prop_def(IntegerAttr)

    traits = traits_def(Pure())

    assembly_format = "$acc `,` $lhs `,` $rhs attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        acc: Operation | SSAValue,
        lhs: Operation | SSAValue,
        rhs: Operation | SSAValue,
        lhs_max: int | None = None,
        rhs_bits: int | None = None,
    ):
        bounds = {"lhs_max": lhs_max, "rhs_bits": rhs_bits}
        properties = {name: IntegerAttr(value, 64) for name, value in bounds.items() if value is not None}
        super().__init__(operands=[acc, lhs, rhs], result_types=[SSAValue.get(acc).type], properties=properties)

    @property
    def lhs_bound(self) -> int:
        """The largest unsigned byte `lhs` may hold: `lhs_max`, else 255."""
        return 255 if self.lhs_max is None else self.lhs_max.value.data

    @property
    def rhs_width(self) -> int:
        """The bits every signed byte of `rhs` fits: `rhs_bits`, else 8."""
        return 8 if self.rhs_bits is None else self.rhs_bits.value.data

    def verify_(self) -> None:
        kind = self.result.type
        if isinstance(kind, VectorType) and len(kind.get_shape()) != 1:
            raise VerifyException(f"{self.name}: {kind} is not a one-dimensional vector of i32")
        if not 0 <= self.lhs_bound <= 255:
            raise VerifyException(f"{self.name}: lhs_max {self.lhs_bound} is not an unsigned byte (0 to 255)")
        if not 1 <= self.rhs_width <= 8:
            raise VerifyException(f"{self.name}: rhs_bits {self.rhs_width} is not a signed byte's width (1 to 8)")


@irdl_op_definition
class DotBF16Op(IRDLOperation):
    """Per float32 lane, the accumulator plus the dot product of two pairs of bfloat16 values held in the 32-bit
    words of `lhs` and `rhs` (the low half of a word is its first value): `acc + lo(a) * lo(b) + hi(a) * hi(b)`,
    where a bfloat16 value is the float32 of its 16 bits followed by 16 zero bits (x86 `vdpbf16ps`, AArch64
    `bfdot`). On f32 with i32 words, or vectors of them of one length:
    `%r = llvmx.dot_bf16 %acc, %a, %b : vector<16xf32>, vector<16xi32>`. The instructions round their products
    and sums otherwise than float32 FMAs do (and may flush denormals): a bfloat16 tolerance covers both."""

    name = "llvmx.dot_bf16"

    T: ClassVar = VarConstraint("T", EqAttrConstraint(f32) | VectorType.constr(EqAttrConstraint(f32)))
    W: ClassVar = VarConstraint("W", EqAttrConstraint(i32) | VectorType.constr(EqAttrConstraint(i32)))
    acc = operand_def(T)
    lhs = operand_def(W)
    rhs = operand_def(W)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$acc `,` $lhs `,` $rhs attr-dict `:` type($result) `,` type($lhs)"

    def __init__(self, acc: Operation | SSAValue, lhs: Operation | SSAValue, rhs: Operation | SSAValue):
        super().__init__(operands=[acc, lhs, rhs], result_types=[SSAValue.get(acc).type])

    def verify_(self) -> None:
        kind, words = self.result.type, self.lhs.type
        lanes = kind.get_shape() if isinstance(kind, VectorType) else ()
        if len(lanes) > 1:
            raise VerifyException(f"{self.name}: {kind} is not a one-dimensional vector of f32")
        if (words.get_shape() if isinstance(words, VectorType) else ()) != lanes:
            raise VerifyException(f"{self.name}: words {words} and lanes {kind} differ in length")


@irdl_op_definition
class PackBF16Op(IRDLOperation):
    """Per 32-bit lane, the word of two float32 values rounded to nearest even as bfloat16, `low`'s in bits 0-15 and
    `high`'s in bits 16-31, a NaN as a quiet NaN of its sign: the words `llvmx.dot_bf16` takes. On f32, or vectors of
    f32 and of i32 of one length: `%w = llvmx.pack_bf16 %lo, %hi : vector<16xf32> -> vector<16xi32>`. x86's
    conversion (`vcvtneps2bf16`) reads a denormal as zero, as `vdpbf16ps` then reads the word anyway."""

    name = "llvmx.pack_bf16"

    T: ClassVar = VarConstraint("T", EqAttrConstraint(f32) | VectorType.constr(EqAttrConstraint(f32)))
    low = operand_def(T)
    high = operand_def(T)
    result = result_def(EqAttrConstraint(i32) | VectorType.constr(EqAttrConstraint(i32)))

    traits = traits_def(Pure())

    assembly_format = "$low `,` $high attr-dict `:` type($low) `->` type($result)"

    def __init__(self, low: SSAValue, high: SSAValue):
        kind = low.type
        words = VectorType(i32, kind.get_shape()) if isinstance(kind, VectorType) else i32
        super().__init__(operands=[low, high], result_types=[words])

    def verify_(self) -> None:
        kind, words = self.low.type, self.result.type
        lanes = kind.get_shape() if isinstance(kind, VectorType) else ()
        if (words.get_shape() if isinstance(words, VectorType) else ()) != lanes:
            raise VerifyException(f"{self.name}: words {words} and values {kind} differ in length")


LLVMExt = Dialect(
    "llvmx", [FPToSIOp, FPToUIOp, UIToFPOp, SelectOp, FCmpOp, CallIndirectOp, DotU8S8Op, DotBF16Op, PackBF16Op], []
)
