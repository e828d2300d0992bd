"""ONNX converters for ops of run-time indices: GatherElements, CumSum, CumProd, ArgMax, ArgMin, ReverseSequence
(Gather, which also takes constant indices, lives in `onnx_tensor`).

Each converter is named exactly like its ONNX op, inputs positional and attributes as keyword arguments with ONNX's
defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`). Axes are attributes, or (CumSum)
a compile-time constant input.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i64

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_index_checks import check_index_range, check_range
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    Value,
    normalise_axis,
)


def GatherElements(ctx: NodeContext, data: Value, indices: Value, *, axis: int = 0) -> Value:
    """`data` read along `axis` at `indices` of the same rank (negative counts from the end) ->
    graph.take_along_axis (an index out of range raises at run time)."""
    x, index = ctx.data(data), ctx.data(indices)
    source, shape = shape_of(x), shape_of(index)
    along = normalise_axis(axis, len(source))
    if graph.element_type(index) not in graph.INDICES:
        raise NodeError(f"indices must be int32 or int64, got {graph.element_type(index)}")
    if len(shape) != len(source) or any(i > s for d, (i, s) in enumerate(zip(shape, source)) if d != along):
        raise NodeError(f"indices of shape {shape} do not fit data of shape {source} outside axis {along}")
    if source[along] == 0:
        raise NodeError(f"cannot gather from axis {along} of extent 0")
    check_index_range(ctx, indices, [source[along]], f"axis {along} of extent {source[along]}")
    return ctx.emit(graph.TakeAlongAxisOp(x, index, along))


def _cumulative(
    ctx: NodeContext, op: type[graph.CumulativeOp], x: Value, axis: Value, exclusive: int, reverse: int
) -> Value:
    data = ctx.data(x)
    if not isinstance(axis, ConstantValue) or axis.array.size != 1 or not np.issubdtype(axis.array.dtype, np.integer):
        raise NodeError("axis must be a compile-time constant integer scalar")
    along = normalise_axis(int(axis.array.reshape(())), len(shape_of(data)))
    return ctx.emit(op(data, along, exclusive=bool(exclusive), reverse=bool(reverse)))


def CumSum(ctx: NodeContext, x: Value, axis: Value, *, exclusive: int = 0, reverse: int = 0) -> Value:
    """Running sum along a constant `axis` -> graph.cumsum."""
    return _cumulative(ctx, graph.CumSumOp, x, axis, exclusive, reverse)


def CumProd(ctx: NodeContext, x: Value, axis: Value, *, exclusive: int = 0, reverse: int = 0) -> Value:
    """Running product along a constant `axis` -> graph.cumprod."""
    return _cumulative(ctx, graph.CumProdOp, x, axis, exclusive, reverse)


def _arg_reduce(
    ctx: NodeContext, op: type[graph.ArgReduceOp], data: Value, axis: int, keepdims: int, select_last_index: int
) -> Value:
    x = ctx.data(data)
    shape = shape_of(x)
    along = normalise_axis(axis, len(shape))
    if shape[along] == 0:
        raise NodeError(f"axis {along} is empty")
    return ctx.emit(op(x, along, keepdims=bool(keepdims), select_last_index=bool(select_last_index)))


def ArgMax(ctx: NodeContext, data: Value, *, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> Value:
    """Position (int64) of the maximum along `axis`, first or last -> graph.argmax."""
    return _arg_reduce(ctx, graph.ArgMaxOp, data, axis, keepdims, select_last_index)


def ArgMin(ctx: NodeContext, data: Value, *, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> Value:
    """Position (int64) of the minimum along `axis`, first or last -> graph.argmin."""
    return _arg_reduce(ctx, graph.ArgMinOp, data, axis, keepdims, select_last_index)


def ReverseSequence(
    ctx: NodeContext, input: Value, sequence_lens: Value, *, batch_axis: int = 1, time_axis: int = 0
) -> Value:
    """Each batch entry's first `sequence_lens[b]` time steps reversed (lengths at run time) ->
    graph.reverse_sequence; a length outside [0, T] raises at run time, as in ONNX Runtime."""
    x, lengths = ctx.data(input), ctx.data(sequence_lens)
    shape = shape_of(x)
    if len(shape) < 2 or {batch_axis, time_axis} != {0, 1}:
        raise NodeError(f"batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1 of an input of rank >= 2")
    if graph.element_type(lengths) != i64 or shape_of(lengths) != (shape[batch_axis],):
        raise NodeError(
            f"sequence_lens must be int64 of shape ({shape[batch_axis]},), got {graph.element_type(lengths)} of shape "
            f"{shape_of(lengths)}"
        )
    steps = shape[time_axis]
    check_range(ctx, sequence_lens, np.array([0]), np.array([steps + 1]), f"sequence_lens must lie in [0, {steps}]")
    return ctx.emit(graph.ReverseSequenceOp(x, lengths, batch_axis, time_axis))


CONVERTERS: dict[str, Converter] = {
    "GatherElements": GatherElements,
    "CumSum": CumSum,
    "CumProd": CumProd,
    "ArgMax": ArgMax,
    "ArgMin": ArgMin,
    "ReverseSequence": ReverseSequence,
}
"""ONNX op type (default domain) -> converter."""
