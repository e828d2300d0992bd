"""ONNX converters for the ops whose output extent depends on the data: NonZero, Compress, Unique.

Each returns `DataDependentValue`s: the output at an upper bound of its extent plus a run-time count, which the
runtime trims (`lowering/abi.py`). Such an output may only be a graph output; a node reading one is refused.
Unique of slices along an axis compares the rows of the input with that axis first and the others flattened.
"""

from __future__ import annotations

import math

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    Converter,
    DataDependentValue,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_reshape,
    normalise_axis,
)


def _flat(ctx: NodeContext, x: Value) -> tuple[int, ...]:
    """The input's shape, refused when empty (no upper bound to compute at)."""
    shape = shape_of(ctx.data(x))
    if math.prod(shape) == 0:
        raise UnsupportedNodeError(f"an empty input (shape {shape}) is not supported")
    return shape


def NonZero(ctx: NodeContext, X: Value) -> DataDependentValue:
    """The coordinates of the nonzero elements, one row per axis -> graph.nonzero (trimmed to their number)."""
    _flat(ctx, X)
    op = ctx.builder.insert(graph.NonZeroOp(ctx.data(X)))
    return DataDependentValue(op.result, op.count, 1)


def Compress(ctx: NodeContext, input: Value, condition: Value, *, axis: int | None = None) -> DataDependentValue:
    """The slices along `axis` (of the flattened input without one) where `condition` holds -> graph.compress."""
    shape = _flat(ctx, input)
    x, keep = ctx.data(input), ctx.data(condition)
    if graph.element_type(keep) != graph.BOOL or len(shape_of(keep)) != 1 or shape_of(keep)[0] == 0:
        raise NodeError(f"condition must be a non-empty 1-D bool tensor, got {keep.type}")
    if axis is None:
        x, along = emit_reshape(ctx, x, (math.prod(shape),)), 0
    else:
        along = normalise_axis(axis, len(shape))
    op = ctx.builder.insert(graph.CompressOp(x, keep, along))
    return DataDependentValue(op.result, op.count, along)


def Unique(
    ctx: NodeContext, X: Value, *, axis: int | None = None, sorted: int = 1
) -> tuple[DataDependentValue, DataDependentValue, Value, DataDependentValue]:
    """The distinct elements (of the flattened input) or slices along `axis`, their first indices, each one's
    inverse index and the counts -> graph.unique of the elements, or of the rows of the input with `axis` moved
    first and the other axes flattened (the distinct rows then moved back)."""
    shape = _flat(ctx, X)
    x = ctx.data(X)
    if graph.element_type(x) not in graph.NUMBERS:
        raise NodeError(f"input must be numbers, got {graph.element_type(x)}")
    along = None if axis is None or len(shape) == 1 else normalise_axis(axis, len(shape))
    perm: tuple[int, ...] = ()
    if along is None:
        rows = x if len(shape) == 1 else emit_reshape(ctx, x, (math.prod(shape),))
    else:
        perm = (along, *(d for d in range(len(shape)) if d != along))
        moved = ctx.emit(graph.TransposeOp(x, perm)) if along else x
        rows = emit_reshape(ctx, moved, (shape[along], math.prod(shape) // shape[along]))
    op = ctx.builder.insert(graph.UniqueOp(rows, sorted=bool(sorted)))
    values = op.result
    if along is not None:
        values = emit_reshape(ctx, values, tuple(shape[d] for d in perm))
        values = ctx.emit(graph.TransposeOp(values, [perm.index(d) for d in range(len(shape))])) if along else values
    return (
        DataDependentValue(values, op.count, along or 0),
        DataDependentValue(op.indices, op.count, 0),
        op.inverse,
        DataDependentValue(op.counts, op.count, 0),
    )


CONVERTERS: dict[str, Converter] = {
    "NonZero": NonZero,
    "Compress": Compress,
    "Unique": Unique,
}
"""ONNX op type (default domain) -> converter."""
