"""The ops code generation builds most often (index arithmetic, scalar and vector loads and stores), each built as
`Operation.create` builds it: the same op its xDSL constructor gives (operands, result types, properties), without
the constructor's pass over each argument against the op's definition (a third of building one; `loop-to-scf` and
the schedules build thousands). Operands must be SSA values.

    load(%a, [%i, %j])          // memref.load %a[%i, %j] : memref<4x8xf32>, as memref.LoadOp.get(%a, [%i, %j])
    addi(%i, %c4)               // arith.addi %i, %c4 : index, as arith.AddiOp(%i, %c4)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.arith import IntegerOverflowAttr
from xdsl.dialects.builtin import MemRefType, VectorType
from xdsl.ir import SSAValue

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
