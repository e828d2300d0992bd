"""`arith` and `math` -> `llvm` (+ `llvmx`) patterns of the `convert-to-llvm` pass.

Ops with a one-to-one LLVM instruction are lowered from tables; math functions become LLVM
intrinsics (`llvm.call_intrinsic "llvm.exp.f32"`) so that the loop vectoriser can widen them,
and calls to libm (`erff`, `expm1f`, ...) only where LLVM has no intrinsic. Fast-math flags are
carried over. Assumes scalar (or 1-D vector) operands; `index` is lowered to `i64`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathAttrBase
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.conversion import (
    as_llvm,
    declare_function,
    llvm_fastmath,
    replace_lowered,
    type_suffix,
)
from minimlc.lowering.strategy.data_layout import llvm_type
from minimlc.lowering.strategy.vectorization import LIBM_FUNCTIONS

_INTEGER_BINARY: dict[type[Operation], Callable[[SSAValue, SSAValue], Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

_FLOAT_BINARY: dict[type[Operation], type[llvm.AbstractFloatArithOp]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}

_CASTS: dict[type[Operation], Callable[[SSAValue, Attribute], Operation]] = {
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.UIToFPOp: llvm_ext.UIToFPOp,
    arith.FPToSIOp: llvm_ext.FPToSIOp,
    arith.FPToUIOp: llvm_ext.FPToUIOp,
    arith.BitcastOp: llvm.BitcastOp,
}

INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
    math.AbsFOp: "llvm.fabs",
    math.AcosOp: "llvm.acos",
    math.AsinOp: "llvm.asin",
    math.AtanOp: "llvm.atan",
    math.Atan2Op: "llvm.atan2",
    math.CeilOp: "llvm.ceil",
    math.CopySignOp: "llvm.copysign",
    math.CosOp: "llvm.cos",
    math.CoshOp: "llvm.cosh",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.FloorOp: "llvm.floor",
    math.FmaOp: "llvm.fma",
    math.LogOp: "llvm.log",
    math.Log10Op: "llvm.log10",
    math.Log2Op: "llvm.log2",
    math.PowFOp: "llvm.pow",
    math.RoundEvenOp: "llvm.roundeven",
    math.RoundOp: "llvm.round",
    math.SinOp: "llvm.sin",
    math.SinhOp: "llvm.sinh",
    math.SqrtOp: "llvm.sqrt",
    math.TanOp: "llvm.tan",
    math.TanhOp: "llvm.tanh",
    math.TruncOp: "llvm.trunc",
}


def _fastmath_of(op: Operation) -> llvm.FastMathAttr:
    flags = op.properties.get("fastmath")
    if isinstance(flags, FastMathAttrBase):
        return llvm_fastmath(flags)
    return llvm.FastMathAttr(None)


def _constant(value: int | float, type: Attribute) -> llvm.ConstantOp:
    if isinstance(type, IntegerType):
        return llvm.ConstantOp(IntegerAttr(int(value), type), type)
    assert isinstance(type, Float32Type | Float64Type)
    return llvm.ConstantOp(FloatAttr(float(value), type), type)


class ConstantLowering(RewritePattern):
    """Lowers `arith.constant` to `llvm.mlir.constant`, `index` values as `i64`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        type = llvm_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr) and value.type != type:
            value = IntegerAttr(value.value.data, i64)
        replace_lowered(rewriter, op, [llvm.ConstantOp(value, type)])


class IntegerBinaryLowering(RewritePattern):
    """Lowers arith integer binary ops to their LLVM instruction, keeping `nsw`/`nuw`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        llvm_op = _INTEGER_BINARY.get(type(op))
        if llvm_op is None:
            return
        lhs, rhs = (as_llvm(rewriter, v) for v in op.operands)
        new_op = llvm_op(lhs, rhs)
        if isinstance(op, arith.SignlessIntegerBinaryOperationWithOverflow):
            flags = llvm.OverflowAttr(llvm.OverflowFlag(f) for f in op.overflow_flags.data)
            new_op.properties["overflowFlags"] = IntegerAttr(flags.to_int(), 32)
        replace_lowered(rewriter, op, [new_op])


class FloatBinaryLowering(RewritePattern):
    """Lowers `arith.{addf,subf,mulf,divf}` to `llvm.{fadd,fsub,fmul,fdiv}` with fast-math."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        llvm_op = _FLOAT_BINARY.get(type(op))
        if llvm_op is None:
            return
        lhs, rhs = op.operands
        replace_lowered(rewriter, op, [llvm_op(lhs, rhs, _fastmath_of(op))])


class NegfLowering(RewritePattern):
    """Lowers `arith.negf` to `llvm.fneg`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        replace_lowered(rewriter, op, [llvm.FNegOp(op.operand, _fastmath_of(op))])


class CastLowering(RewritePattern):
    """Lowers arith conversions to the LLVM cast instruction of the same meaning."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        llvm_op = _CASTS.get(type(op))
        if llvm_op is None:
            return
        (arg,) = op.operands
        new_op = llvm_op(as_llvm(rewriter, arg), llvm_type(op.results[0].type))
        replace_lowered(rewriter, op, [new_op])


class IndexCastLowering(RewritePattern):
    """Lowers `arith.index_cast` to `sext`/`trunc` to or from `i64`, or to nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter) -> None:
        source = as_llvm(rewriter, op.input)
        target = llvm_type(op.result.type)
        assert isinstance(source.type, IntegerType)
        assert isinstance(target, IntegerType)
        if source.type.width.data < target.width.data:
            replace_lowered(rewriter, op, [llvm.SExtOp(source, target)])
        elif source.type.width.data > target.width.data:
            replace_lowered(rewriter, op, [llvm.TruncOp(source, target)])
        else:
            replace_lowered(rewriter, op, [], [source])


class CmpiLowering(RewritePattern):
    """Lowers `arith.cmpi` to `llvm.icmp` (both enumerate predicates in the same order)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = as_llvm(rewriter, op.lhs), as_llvm(rewriter, op.rhs)
        predicate = IntegerAttr(op.predicate.value.data, i64)
        replace_lowered(rewriter, op, [llvm.ICmpOp(lhs, rhs, predicate)])


class CmpfLowering(RewritePattern):
    """Lowers `arith.cmpf` to `llvm.fcmp` (both enumerate predicates in the same order)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter) -> None:
        new_op = llvm.FCmpOp(op.lhs, op.rhs, IntegerAttr(op.predicate.value.data, i64))
        if op.fastmath.data:
            # xDSL prints and parses `llvm.fcmp`'s flags in its attribute dictionary only.
            new_op.attributes["fastmathFlags"] = llvm_fastmath(op.fastmath)
        replace_lowered(rewriter, op, [new_op])


class SelectLowering(RewritePattern):
    """Lowers `arith.select` to `llvm.select`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = as_llvm(rewriter, op.lhs), as_llvm(rewriter, op.rhs)
        replace_lowered(rewriter, op, [llvm.SelectOp(op.cond, lhs, rhs)])


class IntrinsicLowering(RewritePattern):
    """Lowers min/max and math functions to calls of the type-mangled LLVM intrinsic."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        intrinsic = INTRINSICS.get(type(op))
        if intrinsic is None:
            return
        args = [as_llvm(rewriter, v) for v in op.operands]
        result_type = args[0].type
        call = llvm.CallIntrinsicOp(f"{intrinsic}.{type_suffix(result_type)}", args, [result_type])
        call.properties["fastmathFlags"] = _fastmath_of(op)
        replace_lowered(rewriter, op, [call])


class LibmLowering(RewritePattern):
    """Lowers math functions without an LLVM intrinsic to calls of libm (`erff`, `erf`, ...)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        base = LIBM_FUNCTIONS.get(type(op))
        if base is None:
            return
        (arg,) = op.operands
        if isinstance(arg.type, Float32Type):
            name = f"{base}f"
        elif isinstance(arg.type, Float64Type):
            name = base
        else:
            raise DiagnosticException(f"convert-to-llvm: '{op.name}' on {arg.type} unsupported")
        declare_function(rewriter, op, name, llvm.LLVMFunctionType([arg.type], arg.type))
        call = llvm.CallOp(name, arg, return_type=arg.type, fastmath=_fastmath_of(op))
        replace_lowered(rewriter, op, [call])


class RsqrtLowering(RewritePattern):
    """Lowers `math.rsqrt` to `1 / llvm.sqrt`, both with the op's fast-math flags."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter) -> None:
        type = op.operand.type
        fastmath = _fastmath_of(op)
        one = rewriter.insert(_constant(1.0, type)).result
        sqrt = llvm.CallIntrinsicOp(f"llvm.sqrt.{type_suffix(type)}", [op.operand], [type])
        sqrt.properties["fastmathFlags"] = fastmath
        rewriter.insert(sqrt)
        assert sqrt.ress is not None
        replace_lowered(rewriter, op, [llvm.FDivOp(one, sqrt.ress, fastmath)])


class RoundingDivisionLowering(RewritePattern):
    """Lowers `arith.{floordivsi,ceildivsi,ceildivui}` to a division and a remainder fix-up."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, arith.FloorDivSIOp | arith.CeilDivSIOp | arith.CeilDivUIOp):
            return
        lhs, rhs = as_llvm(rewriter, op.lhs), as_llvm(rewriter, op.rhs)
        signed = not isinstance(op, arith.CeilDivUIOp)
        div, rem = (llvm.SDivOp, llvm.SRemOp) if signed else (llvm.UDivOp, llvm.URemOp)
        quotient = rewriter.insert(div(lhs, rhs)).res
        remainder = rewriter.insert(rem(lhs, rhs)).res
        zero = rewriter.insert(_constant(0, lhs.type)).result
        one = rewriter.insert(_constant(1, lhs.type)).result
        adjust = _icmp(rewriter, "ne", remainder, zero)
        if signed:
            # Floor division rounds toward -inf, so it adjusts when the signs differ; ceiling
            # division toward +inf, so when they agree.
            remainder_negative = _icmp(rewriter, "slt", remainder, zero)
            divisor_negative = _icmp(rewriter, "slt", rhs, zero)
            floor = isinstance(op, arith.FloorDivSIOp)
            signs = _icmp(rewriter, "ne" if floor else "eq", remainder_negative, divisor_negative)
            adjust = rewriter.insert(llvm.AndOp(adjust, signs)).res
        step = llvm.SubOp if isinstance(op, arith.FloorDivSIOp) else llvm.AddOp
        adjusted = rewriter.insert(step(quotient, one)).res
        replace_lowered(rewriter, op, [llvm.SelectOp(adjust, adjusted, quotient)])


def _icmp(rewriter: PatternRewriter, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    flag = llvm.ICmpPredicateFlag(predicate)
    return rewriter.insert(llvm.ICmpOp(lhs, rhs, IntegerAttr(flag.to_int(), i64))).res


ARITH_MATH_PATTERNS: tuple[RewritePattern, ...] = (
    ConstantLowering(),
    IntegerBinaryLowering(),
    FloatBinaryLowering(),
    NegfLowering(),
    CastLowering(),
    IndexCastLowering(),
    CmpiLowering(),
    CmpfLowering(),
    SelectLowering(),
    IntrinsicLowering(),
    LibmLowering(),
    RsqrtLowering(),
    RoundingDivisionLowering(),
)
"""All patterns of this module, for `ConvertToLlvmPass`."""
