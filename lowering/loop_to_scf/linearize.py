"""Accesses to buffers with a run-time extent below their outermost dimension, rewritten as one-dimensional accesses.

The address of `x[i, j]` in a `memref<?x?xf32>` needs the run-time extent of `j`'s dimension, which the memref type
(and the nested-array `getelementptr` of `convert-to-llvm`) cannot carry. `loop-to-scf` therefore rewrites every
`memref.load`/`memref.store`, `vector.load`/`vector.store` and `loop.prefetch` of such a buffer into an access of
its one-dimensional view (`memref.collapse_shape`, placed once after the buffer's definition) at the row-major
index, computed from the extents `extents_of` reads back; then drops each `loop.extents` (its uses take its
source). An outermost `?` alone (`memref<?x768xf32>`) needs nothing: the address arithmetic never uses it.

    %x = loop.extents %a[%n, %s] : memref<?x?xf32>
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    // becomes
    %flat = memref.collapse_shape %a [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    %row = arith.muli %i, %s : index
    %at = arith.addi %row, %j : index
    %v = memref.load %flat[%at] : memref<?xf32>
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IndexType, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.generic.built_ops import addi, load, muli, store, vector_load, vector_store
from minimlc.lowering.loop.analysis import ops_by_kind
from minimlc.lowering.loop.extents import extents_of, needs_linear_index

_ACCESSES = (memref.LoadOp, memref.StoreOp, vector.LoadOp, vector.StoreOp, loop.PrefetchOp)
_Access = memref.LoadOp | memref.StoreOp | vector.LoadOp | vector.StoreOp | loop.PrefetchOp


def linearize_dynamic_accesses(module: ModuleOp) -> None:
    """Rewrite every access to a buffer with an inner `?` under `module` as a 1-D access, then drop `loop.extents`."""
    found = ops_by_kind(module, (_ACCESSES, loop.ExtentsOp))
    views: dict[SSAValue, SSAValue] = {}
    for op in found[_ACCESSES]:
        if needs_linear_index(_buffer(op)):
            _linearize(op, views)
    for op in found[loop.ExtentsOp]:
        op.result.replace_all_uses_with(op.source)
        Rewriter.erase_op(op)


def _buffer(op: _Access) -> SSAValue:
    if isinstance(op, memref.LoadOp | memref.StoreOp):
        return op.memref
    if isinstance(op, loop.PrefetchOp):
        return op.buffer
    return op.base


def _linearize(op: _Access, views: dict[SSAValue, SSAValue]) -> None:
    buffer = _buffer(op)
    builder = Builder(InsertPoint.before(op))
    extents = extents_of(buffer)
    indices = list(op.indices)
    linear = indices[0]
    for extent, index in zip(extents[1:], indices[1:]):
        if isinstance(extent, int):
            extent = builder.insert(arith.ConstantOp(IntegerAttr(extent, IndexType()))).result
        scaled = builder.insert(muli(linear, extent)).result
        linear = builder.insert(addi(scaled, index)).result
    flat = _flat_view(buffer, views)
    if isinstance(op, memref.LoadOp):
        new: Operation = load(flat, [linear])
    elif isinstance(op, memref.StoreOp):
        new = store(op.value, flat, [linear])
    elif isinstance(op, vector.LoadOp):
        new = vector_load(flat, [linear], op.result.type)
    elif isinstance(op, vector.StoreOp):
        new = vector_store(op.vector, flat, [linear])
    else:
        new = loop.PrefetchOp(flat, [linear])
    Rewriter.replace_op(op, new)


def _flat_view(buffer: SSAValue, views: dict[SSAValue, SSAValue]) -> SSAValue:
    """The `memref<?xT>` view of `buffer`, made once right after its definition."""
    if buffer not in views:
        assert isinstance(buffer.type, MemRefType)
        rank = buffer.type.get_num_dims()
        collapse = memref.CollapseShapeOp.create(
            operands=[buffer],
            result_types=[MemRefType(buffer.type.element_type, [DYNAMIC_INDEX])],
            properties={"reassociation": ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in range(rank)])])},
        )
        if isinstance(buffer, OpResult):
            Rewriter.insert_op(collapse, InsertPoint.after(buffer.op))
        else:
            assert isinstance(buffer.owner, Block)
            Rewriter.insert_op(collapse, InsertPoint.at_start(buffer.owner))
        collapse.results[0].name_hint = f"{buffer.name_hint}_flat" if buffer.name_hint else None
        views[buffer] = collapse.results[0]
    return views[buffer]
