"""`built_ops` (lowering/generic/built_ops.py) and `loop.ForOp`'s constructor give the ops xDSL's constructors give:
the same class, operands, result types, properties (in order) and attributes, printed alike and verified."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, VectorType, f32, i32
from xdsl.ir import Block, Operation
from xdsl.irdl import IRDLOperation

from minimlc.dialects import loop
from minimlc.lowering.generic import built_ops

BLOCK = Block(arg_types=[MemRefType(f32, [4, 8]), IndexType(), IndexType(), MemRefType(i32, [16]), i32])
BUFFER, ROW, COLUMN, WORDS, WORD = BLOCK.args
VALUE = memref.LoadOp.get(BUFFER, [ROW, COLUMN]).res
VECTOR = vector.LoadOp(BUFFER, [ROW, COLUMN], VectorType(f32, [8])).result

CASES = {
    "load": (lambda: built_ops.load(BUFFER, [ROW, COLUMN]), lambda: memref.LoadOp.get(BUFFER, [ROW, COLUMN])),
    "load_i32": (lambda: built_ops.load(WORDS, [ROW]), lambda: memref.LoadOp.get(WORDS, [ROW])),
    "store": (
        lambda: built_ops.store(VALUE, BUFFER, [ROW, COLUMN]),
        lambda: memref.StoreOp.get(VALUE, BUFFER, [ROW, COLUMN]),
    ),
    "vector_load": (
        lambda: built_ops.vector_load(BUFFER, [ROW, COLUMN], VectorType(f32, [8])),
        lambda: vector.LoadOp(BUFFER, [ROW, COLUMN], VectorType(f32, [8])),
    ),
    "vector_store": (
        lambda: built_ops.vector_store(VECTOR, BUFFER, [ROW, COLUMN]),
        lambda: vector.StoreOp(VECTOR, BUFFER, [ROW, COLUMN]),
    ),
    "addi_index": (lambda: built_ops.addi(ROW, COLUMN), lambda: arith.AddiOp(ROW, COLUMN)),
    "addi_i32": (lambda: built_ops.addi(WORD, WORD), lambda: arith.AddiOp(WORD, WORD)),
    "muli": (lambda: built_ops.muli(ROW, COLUMN), lambda: arith.MuliOp(ROW, COLUMN)),
}


def _described(op: Operation) -> tuple[object, ...]:
    return (
        type(op),
        tuple(op.operands),
        tuple(op.result_types),
        list(op.properties.items()),
        list(op.attributes.items()),
        len(op.regions),
    )


@pytest.mark.parametrize("case", CASES)
def test_built_op_equals_the_constructors_op(case: str) -> None:
    build, reference = CASES[case]
    built = build()
    expected = reference()
    built.verify()
    assert _described(built) == _described(expected)
    assert str(built) == str(expected)


def test_a_loop_equals_irdls_loop() -> None:
    """`loop.ForOp` (built as `create` builds it) and IRDL's init of the same arguments give the same loop, static
    and with a run-time upper bound."""
    upper = arith.ConstantOp(IntegerAttr(12, IndexType())).result
    for bound in (10, upper):
        built = loop.ForOp("i", 2, bound, loop.ForOp.empty_body(), 4, "vectorize")
        expected = loop.ForOp.__new__(loop.ForOp)
        IRDLOperation.__init__(
            expected,
            operands=[[bound] if not isinstance(bound, int) else []],
            properties=dict(built.properties),
            regions=[loop.Region(loop.ForOp.empty_body())],
        )
        built.verify()
        assert _described(built)[:5] == _described(expected)[:5]
        assert str(built) == str(expected)
        assert built.is_dynamic == (bound is upper)
