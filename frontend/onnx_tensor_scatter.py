"""ONNX converter for TensorScatter (opset 24), the in-place write of a key/value cache, as graph ops.

Each batch row b writes its `update` (extent S on `axis`) into `past_cache` (extent M) from position
`write_indices[b]` on (wrapping around M with mode "circular"). Written from the side of each cache position p, as
the other scatters are: the update row it receives is j = p - write_indices[b] (mod M when circular), and it takes
`update[..., j, ...]` where 0 <= j < S and keeps the cache elsewhere:

    %j = graph.sub %positions, %write_indices       : [B, M] int64
    %taken = graph.take_along_axis %update, %j_full  : (clamped j, broadcast to the cache's shape)
    %present = graph.where %written, %taken, %past_cache

A position the update does not reach keeps its cached element; an update row past the cache's end (linear mode) is
not written, so no index leaves the cache.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import ConstantValue, Converter, NodeContext, NodeError, Value, as_text, emit_reshape

_MODES = ("linear", "circular")


def _index_constant(ctx: NodeContext, name: str, array: np.ndarray) -> SSAValue:
    return ctx.data(ConstantValue(f"{ctx.node.output[0]}.{name}", np.asarray(array, np.int64)))


def TensorScatter(
    ctx: NodeContext,
    past_cache: Value,
    update: Value,
    write_indices: Value | None = None,
    *,
    axis: int = -2,
    mode: str | bytes = "linear",
) -> Value:
    """Write each batch row's update into the cache at its write index -> graph take_along_axis and where (module
    docstring)."""
    cache, new = ctx.data(past_cache), ctx.data(update)
    shape, update_shape = shape_of(cache), shape_of(new)
    rank = len(shape)
    kind = as_text(mode)
    if kind not in _MODES:
        raise NodeError(f"attribute mode='{kind}' must be 'linear' or 'circular'")
    if not -rank <= axis < rank or axis % rank == 0:
        raise NodeError(f"attribute axis={axis} must name an axis after the batch axis of rank-{rank} past_cache")
    axis %= rank
    if graph.element_type(cache) != graph.element_type(new):
        raise NodeError(f"update is {graph.element_type(new)}, past_cache is {graph.element_type(cache)}")
    if len(update_shape) != rank or any(
        u != c for d, (u, c) in enumerate(zip(update_shape, shape)) if d != axis
    ) or update_shape[axis] > shape[axis]:
        raise NodeError(f"update of shape {update_shape} does not fit past_cache of shape {shape} on axis {axis}")
    batch, extent, length = shape[0], shape[axis], update_shape[axis]
    if length == 0:
        return cache
    positions = _index_constant(ctx, "positions", np.arange(extent)[None, :])
    if write_indices is None:
        offsets = positions
    else:
        starts = ctx.data(write_indices)
        if graph.element_type(starts) != i64 or shape_of(starts) != (batch,):
            raise NodeError(f"write_indices must be int64 of shape ({batch},), got {starts.type}")
        offsets = ctx.emit(graph.SubOp(positions, emit_reshape(ctx, starts, (batch, 1))))
    if kind == "circular":
        offsets = ctx.emit(graph.ModOp(offsets, _index_constant(ctx, "extent", [extent])))
    zero = _index_constant(ctx, "zero", [0])
    written = ctx.emit(
        graph.AndOp(
            ctx.emit(graph.GreaterOrEqualOp(offsets, zero)),
            ctx.emit(graph.LessOp(offsets, _index_constant(ctx, "length", [length]))),
        )
    )
    rows = ctx.emit(graph.WhereOp(written, offsets, zero))
    # [B, M] -> [B, 1.., M, 1..] on the cache's axes, so that it broadcasts over the others
    on_axes = tuple(shape_of(rows)[0] if d == 0 else extent if d == axis else 1 for d in range(rank))
    indices = ctx.emit(graph.ExpandOp(emit_reshape(ctx, rows, on_axes), shape))
    taken = ctx.emit(graph.TakeAlongAxisOp(new, indices, axis))
    return ctx.emit(graph.WhereOp(emit_reshape(ctx, written, on_axes), taken, cache))


CONVERTERS: dict[str, Converter] = {"TensorScatter": TensorScatter}
"""ONNX op type (default domain) -> converter, the cache write."""
