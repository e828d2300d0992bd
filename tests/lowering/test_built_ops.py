"""`built_ops` (lowering/generic/built_ops.py) and the constructors of the `te` and `loop` ops built the same way give
the ops xDSL's constructors and IRDL's init give: the same class, operands, result types, properties (in order),
attributes and regions, printed alike and verified."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, builtin, llvm, memref, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    VectorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation

from minimlc.dialects import loop, te
from minimlc.lowering.generic import built_ops

BLOCK = Block(arg_types=[MemRefType(f32, [4, 8]), IndexType(), IndexType(), MemRefType(i32, [16]), i32])
BUFFER, ROW, COLUMN, WORDS, WORD = BLOCK.args
VALUE = memref.LoadOp.get(BUFFER, [ROW, COLUMN]).res
VECTOR = vector.LoadOp(BUFFER, [ROW, COLUMN], VectorType(f32, [8])).result
IS_FIRST = arith.CmpiOp(ROW, COLUMN, "eq").result
PAIR = llvm.UndefOp(llvm.LLVMStructType.from_type_list([i64, f32])).res
FIELD = DenseArrayBase.from_list(i64, [1])

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
    "index_constant": (
        lambda: built_ops.constant(IntegerAttr(7, IndexType())),
        lambda: arith.ConstantOp(IntegerAttr(7, IndexType())),
    ),
    "f32_constant": (lambda: built_ops.constant(FloatAttr(-0.5, f32)), lambda: arith.ConstantOp(FloatAttr(-0.5, f32))),
    "cmpi_eq": (lambda: built_ops.cmpi(ROW, COLUMN, "eq"), lambda: arith.CmpiOp(ROW, COLUMN, "eq")),
    "cmpi_uge": (lambda: built_ops.cmpi(WORD, WORD, "uge"), lambda: arith.CmpiOp(WORD, WORD, "uge")),
    "select": (lambda: built_ops.select(IS_FIRST, ROW, COLUMN), lambda: arith.SelectOp(IS_FIRST, ROW, COLUMN)),
    "cast": (
        lambda: built_ops.cast(ROW, i64),
        lambda: builtin.UnrealizedConversionCastOp.get([ROW], [i64]),
    ),
    "extract_value": (
        lambda: built_ops.extract_value(FIELD, PAIR, f32),
        lambda: llvm.ExtractValueOp(FIELD, PAIR, f32),
    ),
    "insert_value": (
        lambda: built_ops.insert_value(FIELD, PAIR, VALUE),
        lambda: llvm.InsertValueOp(FIELD, PAIR, VALUE),
    ),
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


def _irdl_built(op_type: type[IRDLOperation], **arguments: object) -> IRDLOperation:
    op = op_type.__new__(op_type)
    IRDLOperation.__init__(op, **arguments)  # type: ignore[arg-type]
    return op


TENSOR = Block(arg_types=[TensorType(f32, [4, 8])]).args[0]
SIZES = (ROW, COLUMN)
DYNAMIC_BUFFER = MemRefType(f32, [-1, -1])

OWN_OPS = {
    "te.read": (
        lambda: te.ReadOp(TENSOR, [ROW, COLUMN]),
        lambda: _irdl_built(te.ReadOp, operands=[TENSOR, [ROW, COLUMN]], result_types=[f32]),
    ),
    "te.yield": (lambda: te.YieldOp(VALUE), lambda: _irdl_built(te.YieldOp, operands=[VALUE])),
    "te.compute": (
        lambda: te.ComputeOp("sum", TensorType(f32, [-1]), Block(arg_types=[IndexType()] * 2), [8], "add", [ROW]),
        lambda: _irdl_built(
            te.ComputeOp,
            operands=[[ROW]],
            result_types=[TensorType(f32, [-1])],
            regions=[Region(Block(arg_types=[IndexType()] * 2))],
            properties={
                "tag": StringAttr("sum"),
                "reduce_extents": DenseArrayBase.from_list(i64, [8]),
                "combiner": StringAttr("add"),
            },
        ),
    ),
    "loop.alloc": (
        lambda: loop.AllocOp(DYNAMIC_BUFFER, "global", SIZES),
        lambda: _irdl_built(
            loop.AllocOp,
            operands=[list(SIZES)],
            properties={"scope": StringAttr("global")},
            result_types=[DYNAMIC_BUFFER],
        ),
    ),
    "loop.weight": (
        lambda: loop.WeightOp("w", MemRefType(f32, [4, 8])),
        lambda: _irdl_built(
            loop.WeightOp, properties={"weight_name": StringAttr("w")}, result_types=[MemRefType(f32, [4, 8])]
        ),
    ),
    "loop.precompute": (
        lambda: loop.PrecomputeOp("pack", [BUFFER], MemRefType(f32, [8, 4])),
        lambda: _irdl_built(
            loop.PrecomputeOp,
            operands=[[BUFFER]],
            properties={"kernel": SymbolRefAttr("pack")},
            result_types=[MemRefType(f32, [8, 4])],
        ),
    ),
}


@pytest.mark.parametrize("case", OWN_OPS)
def test_own_op_equals_irdls_op(case: str) -> None:
    """The `te` and `loop` ops built as `create` builds them equal IRDL's init of the same arguments."""
    build, reference = OWN_OPS[case]
    built, expected = build(), reference()
    assert _described(built)[:5] == _described(expected)[:5]
    assert [len(r.blocks) for r in built.regions] == [len(r.blocks) for r in expected.regions]
    assert str(built) == str(expected)
