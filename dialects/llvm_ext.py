"""LLVM instructions that xDSL's `llvm` dialect lacks, as the `llvmx` dialect.

Each op mirrors the LLVM IR instruction of the same name; `minimlc.lowering.llvm.translate`
emits them as such.
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import AnyFloatConstr, SignlessIntegerConstraint, VectorType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import NoMemoryEffect


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


LLVMExt = Dialect("llvmx", [FPToSIOp, FPToUIOp, UIToFPOp], [])
