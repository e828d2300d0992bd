"""The ops lowering builds most often (constants, index arithmetic, comparisons and selects, scalar and vector
loads and stores, casts and struct fields), each built as
`Operation.create` builds it: the same op its xDSL constructor gives (operands, result types, properties), without
the constructor's pass over each argument against the op's definition (half to three quarters of building one;
`graph-to-te`, the schedules and `loop-to-scf` build thousands). Operands must be SSA values.

    load(%a, [%i, %j])          // memref.load %a[%i, %j] : memref<4x8xf32>, as memref.LoadOp.get(%a, [%i, %j])
    addi(%i, %c4)               // arith.addi %i, %c4 : index, as arith.AddiOp(%i, %c4)
    constant(IntegerAttr(4, IndexType()))   // arith.constant 4 : index, as arith.ConstantOp(...)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, builtin, llvm, memref, vector
from xdsl.dialects.arith import IntegerOverflowAttr
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, MemRefType, VectorType, i1, i64
from xdsl.ir import Attribute, SSAValue

_NO_OVERFLOW = IntegerOverflowAttr("none")
"""The overflow flags `arith.AddiOp(a, b)` and `arith.MuliOp(a, b)` get (an attribute: one serves every op)."""


def load(buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.LoadOp:
    """`memref.LoadOp.get(buffer, indices)`."""
    assert isinstance(buffer.type, MemRefType)
    return memref.LoadOp.create(operands=[buffer, *indices], result_types=[buffer.type.element_type])


def store(value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.StoreOp:
    """`memref.StoreOp.get(value, buffer, indices)`."""
    return memref.StoreOp.create(operands=[value, buffer, *indices])


def vector_load(buffer: SSAValue, indices: Sequence[SSAValue], result_type: VectorType) -> vector.LoadOp:
    """`vector.LoadOp(buffer, indices, result_type)`."""
    return vector.LoadOp.create(operands=[buffer, *indices], result_types=[result_type])


def vector_store(value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> vector.StoreOp:
    """`vector.StoreOp(value, buffer, indices)`."""
    return vector.StoreOp.create(operands=[value, buffer, *indices])


def addi(lhs: SSAValue, rhs: SSAValue) -> arith.AddiOp:
    """`arith.AddiOp(lhs, rhs)`."""
    return arith.AddiOp.create(operands=[lhs, rhs], result_types=[lhs.type], properties={"overflowFlags": _NO_OVERFLOW})


def muli(lhs: SSAValue, rhs: SSAValue) -> arith.MuliOp:
    """`arith.MuliOp(lhs, rhs)`."""
    return arith.MuliOp.create(operands=[lhs, rhs], result_types=[lhs.type], properties={"overflowFlags": _NO_OVERFLOW})


def constant(value: IntegerAttr | FloatAttr) -> arith.ConstantOp:
    """`arith.ConstantOp(value)`."""
    return arith.ConstantOp.create(result_types=[value.type], properties={"value": value})


_PREDICATES = {name: IntegerAttr(number, i64) for number, name in enumerate(arith.CMPI_COMPARISON_OPERATIONS)}
"""`arith.cmpi`'s predicate attribute by name, made once."""


def cmpi(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpiOp:
    """`arith.CmpiOp(lhs, rhs, predicate)`."""
    return arith.CmpiOp.create(operands=[lhs, rhs], result_types=[i1], properties={"predicate": _PREDICATES[predicate]})


def select(condition: SSAValue, true_value: SSAValue, false_value: SSAValue) -> arith.SelectOp:
    """`arith.SelectOp(condition, true_value, false_value)`."""
    return arith.SelectOp.create(operands=[condition, true_value, false_value], result_types=[true_value.type])


def cast(value: SSAValue, result_type: Attribute) -> builtin.UnrealizedConversionCastOp:
    """`builtin.UnrealizedConversionCastOp.get([value], [result_type])`."""
    return builtin.UnrealizedConversionCastOp.create(operands=[value], result_types=[result_type])


def extract_value(position: DenseArrayBase, container: SSAValue, result_type: Attribute) -> llvm.ExtractValueOp:
    """`llvm.ExtractValueOp(position, container, result_type)`."""
    return llvm.ExtractValueOp.create(
        operands=[container], result_types=[result_type], properties={"position": position}
    )


def insert_value(position: DenseArrayBase, container: SSAValue, value: SSAValue) -> llvm.InsertValueOp:
    """`llvm.InsertValueOp(position, container, value)`."""
    return llvm.InsertValueOp.create(
        operands=[container, value], result_types=[container.type], properties={"position": position}
    )
