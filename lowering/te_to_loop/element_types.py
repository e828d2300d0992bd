"""Element types and reductions at the loop level: the signless `loop_type` of a te type, a combiner's identity and
update (`arith.addf %acc, %v fastmath<reassoc,contract>` for a float sum).
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ReducedPrecisionFloatType,
    Signedness,
    TensorType,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop

_COMBINER_INIT = {
    "sum": 0.0,
    "prod": 1.0,
    "max": float("-inf"),
    "min": float("inf"),
    "maxnum": float("nan"),
    "max_nnan": float("-inf"),
}
_INTEGER_COMBINER = {"maxnum": "max", "max_nnan": "max"}
"""Combiners that are another one on integers (which have no NaN)."""
FUSED_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.ALLOW_CONTRACT,))
_REDUCE_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT))
_NO_NAN_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.NO_NANS, FastMathFlag.NO_SIGNED_ZEROS))


def is_unsigned(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def loop_type(type: Attribute) -> Attribute:
    """The loop-level type of a te type (also as a memref's elements): unsigned integers become signless (`ui8` ->
    `i8`), bfloat16 its bits (`i16`: LLVM IR text through llvmlite has no `bfloat`; te bodies only bitcast it), float8,
    float4 and 4- and 2-bit integers a byte (`i8`, holding them in its low bits; te bodies only bitcast, extend and
    truncate them)."""
    if isinstance(type, IntegerType) and type.width.data in (2, 4):
        return IntegerType(8)
    if is_unsigned(type):
        assert isinstance(type, IntegerType)
        return IntegerType(type.width.data)
    if isinstance(type, BFloat16Type):
        return IntegerType(16)
    if isinstance(type, ReducedPrecisionFloatType) and type.bitwidth <= 8:
        return IntegerType(8)
    if isinstance(type, MemRefType):
        return loop.memref_of(type.get_shape(), loop_type(type.element_type))
    return type


def _signless_constant(value: int, element: IntegerType) -> arith.ConstantOp:
    """An integer constant of `element`'s width, its bits those of `value` (taken modulo 2^width)."""
    width = element.width.data
    bits = value % (1 << width)
    signed = bits - (1 << width) if width > 1 and bits >= 1 << (width - 1) else bits
    return arith.ConstantOp(IntegerAttr(signed, IntegerType(width)))


def combiner_init(combiner: str, element: Attribute) -> arith.ConstantOp:
    """The combiner's identity: for integers, 0, 1, or the type's smallest or largest value (signed or not)."""
    if isinstance(element, IntegerType):
        width = element.width.data
        if is_unsigned(element):
            identities = {"sum": 0, "prod": 1, "max": 0, "min": (1 << width) - 1}
        else:
            identities = {"sum": 0, "prod": 1, "max": -(1 << (width - 1)), "min": (1 << (width - 1)) - 1}
        return _signless_constant(identities[_INTEGER_COMBINER.get(combiner, combiner)], element)
    assert isinstance(element, AnyFloat)
    return arith.ConstantOp(FloatAttr(_COMBINER_INIT[combiner], element))


def combine(combiner: str, acc: SSAValue, value: SSAValue, *, unsigned: bool) -> Operation:
    if isinstance(acc.type, IntegerType):
        integer_ops = {"sum": arith.AddiOp, "prod": arith.MuliOp, "max": arith.MaxSIOp, "min": arith.MinSIOp}
        if unsigned:
            integer_ops |= {"max": arith.MaxUIOp, "min": arith.MinUIOp}
        return integer_ops[_INTEGER_COMBINER.get(combiner, combiner)](acc, value)
    if combiner == "sum":
        return arith.AddfOp(acc, value, _REDUCE_FLAGS)
    if combiner == "prod":
        return arith.MulfOp(acc, value, _REDUCE_FLAGS)
    if combiner == "max":
        return arith.MaximumfOp(acc, value)
    if combiner == "maxnum":
        return arith.MaxnumfOp(acc, value)
    if combiner == "max_nnan":
        return arith.MaximumfOp(acc, value, _NO_NAN_FLAGS)
    return arith.MinimumfOp(acc, value)


def buffer_type(value: SSAValue) -> Attribute:
    """The buffer type of the te tensor `value` (elements of its `loop_type`)."""
    tensor = value.type
    if not isinstance(tensor, TensorType):
        raise DiagnosticException(f"te-to-loop: expected a tensor value, got {tensor}")
    return _memref_of_tensor(tensor)


@lru_cache(maxsize=4096)
def _memref_of_tensor(tensor: TensorType) -> MemRefType:
    """The buffer type of a tensor type, made once (building a `MemRefType` verifies it, which a model's repeated
    tensors would pay for each time)."""
    return loop.memref_of(tensor.get_shape(), loop_type(tensor.element_type))
