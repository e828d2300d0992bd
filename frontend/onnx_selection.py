"""ONNX converters for the ops that scatter to, gather from or pick out elements at run-time positions:
ScatterElements (and its old name Scatter), ScatterND, GatherND, OneHot, TopK, Hardmax.

Each converter is named exactly like its ONNX op, inputs positional and attributes as keyword arguments with ONNX's
defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`). TopK's `K` and OneHot's `depth`
set the output's shape, so they are compile-time constants; indices and values are run-time data.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import f32

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_index_checks import check_index_range
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    emit_reshape,
    normalise_axis,
)


def _constant_int(value: Value, what: str) -> int:
    if not isinstance(value, ConstantValue) or value.array.size != 1:
        raise UnsupportedNodeError(f"{what} must be a compile-time constant with one element")
    return int(value.array.reshape(()))


def _check_indices(indices: Value, ctx: NodeContext) -> None:
    if graph.element_type(ctx.data(indices)) not in graph.INDICES:
        raise NodeError(f"indices must be int32 or int64, got {graph.element_type(ctx.data(indices))}")


def _reduction(reduction: str | bytes, element: object) -> str:
    name = as_text(reduction)
    if name not in graph.SCATTER_REDUCTIONS:
        raise NodeError(f"reduction must be one of {', '.join(graph.SCATTER_REDUCTIONS)}, got '{name}'")
    if name != "none" and element == graph.BOOL:
        raise UnsupportedNodeError(f"reduction '{name}' of bool data is not supported")
    return name


def ScatterElements(
    ctx: NodeContext, data: Value, indices: Value, updates: Value, *, axis: int = 0, reduction: str | bytes = "none"
) -> Value:
    """`updates` written into `data` along `axis` at `indices` (or combined by `reduction`) ->
    graph.scatter_elements."""
    x, index, update = ctx.data(data), ctx.data(indices), ctx.data(updates)
    _check_indices(index, ctx)
    source, shape = shape_of(x), shape_of(index)
    along = normalise_axis(axis, len(source))
    if shape_of(update) != shape or graph.element_type(update) != graph.element_type(x):
        raise NodeError(f"updates {update.type} must have the indices' shape {shape} and the data's element type")
    if len(shape) != len(source) or any(i > s for d, (i, s) in enumerate(zip(shape, source)) if d != along):
        raise NodeError(f"indices of shape {shape} do not fit data of shape {source} outside axis {along}")
    if math.prod(shape) == 0:
        return x
    check_index_range(ctx, indices, [source[along]], f"axis {along} of extent {source[along]}")
    name = _reduction(reduction, graph.element_type(x))
    return ctx.emit(graph.ScatterElementsOp(x, index, update, along, name))


def Scatter(ctx: NodeContext, data: Value, indices: Value, updates: Value, *, axis: int = 0) -> Value:
    """ScatterElements under its name before opset 11 -> graph.scatter_elements."""
    return ScatterElements(ctx, data, indices, updates, axis=axis)


def ScatterND(
    ctx: NodeContext, data: Value, indices: Value, updates: Value, *, reduction: str | bytes = "none"
) -> Value:
    """`updates` written into `data` at the index tuples in `indices`' last dim (or combined by `reduction`) ->
    graph.scatter_nd."""
    x, index, update = ctx.data(data), ctx.data(indices), ctx.data(updates)
    _check_indices(index, ctx)
    source, shape = shape_of(x), shape_of(index)
    if not shape or not 1 <= shape[-1] <= len(source):
        raise NodeError(f"indices of shape {shape} must end in a dim from 1 to the data's rank {len(source)}")
    expected = (*shape[:-1], *source[shape[-1] :])
    if shape_of(update) != expected or graph.element_type(update) != graph.element_type(x):
        raise NodeError(f"updates {update.type} must have shape {expected} and the data's element type")
    if math.prod(shape[:-1]) == 0:
        return x
    check_index_range(ctx, indices, source[: shape[-1]], f"the first {shape[-1]} axes of data {list(source)}")
    return ctx.emit(graph.ScatterNDOp(x, index, update, _reduction(reduction, graph.element_type(x))))


def GatherND(ctx: NodeContext, data: Value, indices: Value, *, batch_dims: int = 0) -> Value:
    """The slices of `data` at the index tuples in `indices`' last dim, after `batch_dims` shared leading dims ->
    graph.gather_nd."""
    x, index = ctx.data(data), ctx.data(indices)
    _check_indices(index, ctx)
    source, shape = shape_of(x), shape_of(index)
    if not 0 <= batch_dims < min(len(source), len(shape)) or source[:batch_dims] != shape[:batch_dims]:
        raise NodeError(f"batch_dims {batch_dims} must be leading dims shared by data {source} and indices {shape}")
    if not 1 <= shape[-1] <= len(source) - batch_dims:
        raise NodeError(f"index tuples of length {shape[-1]} do not fit data {source} after {batch_dims} batch dims")
    tupled = source[batch_dims : batch_dims + shape[-1]]
    check_index_range(ctx, indices, tupled, f"axes {batch_dims} to {batch_dims + shape[-1] - 1} of data {list(source)}")
    return ctx.emit(graph.GatherNDOp(x, index, batch_dims))


def OneHot(ctx: NodeContext, indices: Value, depth: Value, values: Value, *, axis: int = -1) -> Value:
    """`values[1]` where a new axis of extent `depth` equals the index, `values[0]` elsewhere -> graph.one_hot."""
    index, value = ctx.data(indices), ctx.data(values)
    if not isinstance(depth, ConstantValue) or depth.array.size != 1:
        raise UnsupportedNodeError("depth must be a compile-time constant with one element")
    extent = int(depth.array.reshape(()))
    if extent < 1:
        raise NodeError(f"depth must be positive, got {extent}")
    if graph.element_type(index) not in graph.NUMBERS:
        raise NodeError(f"indices must be numbers, got {graph.element_type(index)}")
    if math.prod(shape_of(value)) != 2:
        raise NodeError(f"values must hold (off, on), got shape {shape_of(value)}")
    along = normalise_axis(axis, len(shape_of(index)) + 1)  # an axis of the result
    return ctx.emit(graph.OneHotOp(index, emit_reshape(ctx, value, (2,)), along, extent))


def TopK(
    ctx: NodeContext, X: Value, K: Value | None = None, *, axis: int = -1, largest: int = 1, sorted: int = 1, k: int = 0
) -> tuple[Value, Value]:
    """The `K` largest or smallest elements along `axis` and their int64 positions -> graph.top_k (always sorted,
    which `sorted = 0` allows)."""
    x = ctx.data(X)
    source = shape_of(x)
    count = k if K is None else _constant_int(K, "K")
    along = normalise_axis(axis, len(source))
    if not 1 <= count <= source[along]:
        raise UnsupportedNodeError(f"K = {count} must be from 1 to the axis' extent {source[along]}")
    if graph.element_type(x) not in graph.NUMBERS:
        raise NodeError(f"input must be numbers, got {graph.element_type(x)}")
    op = ctx.builder.insert(graph.TopKOp(x, along, count, largest=bool(largest)))
    return op.values, op.indices


def Hardmax(ctx: NodeContext, input: Value, *, axis: int | None = None) -> Value:
    """1 at the first maximum along `axis`, 0 elsewhere -> graph.argmax, then graph.one_hot of it; before opset 13,
    on the input coerced to 2-D at `axis`."""
    x = ctx.data(input)
    shape = shape_of(x)
    if ctx.opset >= 13:
        along, coerced = normalise_axis(-1 if axis is None else axis, len(shape)), shape
    else:
        split = normalise_axis(1 if axis is None else axis, len(shape))
        along, coerced = 1, (math.prod(shape[:split]), math.prod(shape[split:]))
    if graph.element_type(x) != f32 or 0 in coerced:
        raise UnsupportedNodeError(f"Hardmax of {x.type} is not supported, only of non-empty float32 tensors")
    flat = x if coerced == shape else emit_reshape(ctx, x, coerced)
    first = ctx.emit(graph.ArgMaxOp(flat, along, keepdims=False))
    off_on = ConstantValue(f"{ctx.node.output[0]}_off_on", np.array([0.0, 1.0], np.float32))
    hard = ctx.emit(graph.OneHotOp(first, ctx.data(off_on), along, coerced[along]))
    return hard if coerced == shape else emit_reshape(ctx, hard, shape)


CONVERTERS: dict[str, Converter] = {
    "ScatterElements": ScatterElements,
    "Scatter": Scatter,
    "ScatterND": ScatterND,
    "GatherND": GatherND,
    "OneHot": OneHot,
    "TopK": TopK,
    "Hardmax": Hardmax,
}
"""ONNX op type (default domain) -> converter."""
