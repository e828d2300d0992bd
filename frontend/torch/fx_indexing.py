"""`operator.getitem` of FX graphs: an element of a Python value (a shape, a tuple a node returned) or basic
indexing of a tensor (ints, slices with positive steps, `...` and `None`) as a graph.slice and a graph.reshape:

    q, k, v = qkv                # getitem(qkv, 0), ...: slice [0:1] of axis 0, reshaped without it
    x[:, -1, ::2]                # graph.slice {starts = [0, T - 1, 0], steps = [1, 1, 2]} then graph.reshape
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import SSAValue

from minimlc.dialects.graph import shape_of
from minimlc.frontend.torch.fx_context import FxContext, TorchImportError


def getitem(ctx: FxContext, obj: Any, index: Any) -> Any:
    """`obj[index]`: Python indexing of a Python value, basic indexing of a tensor."""
    if not isinstance(obj, SSAValue):
        return obj[index]
    shape = shape_of(obj)
    items = _expanded(index if isinstance(index, tuple) else (index,), len(shape))
    starts, steps, counts, result = [], [], [], []
    axis = 0
    for item in items:
        if item is None:
            result.append(1)
            continue
        start, step, count = _box(item, shape[axis])
        axis += 1
        starts.append(start)
        steps.append(step)
        counts.append(count)
        if isinstance(item, slice):
            result.append(count)
    value = obj
    if tuple(counts) != shape:
        value = ctx.emit("slice", obj, starts, steps, counts)
    return ctx.reshape(value, result)


def _box(item: int | slice, extent: int) -> tuple[int, int, int]:
    """The start, step and count an int or a slice reads of an axis of `extent`."""
    if isinstance(item, slice):
        start, stop, step = item.indices(extent)
        if step <= 0:
            raise TorchImportError(f"slice {item} of a tensor: steps must be positive")
        count = len(range(start, stop, step))
        if count == 0:
            raise TorchImportError(f"slice {item} of an axis of extent {extent} is empty")
        return start, step, count
    if not -extent <= item < extent:
        raise TorchImportError(f"index {item} is out of range for an axis of extent {extent}")
    return item % extent, 1, 1


def _expanded(items: tuple[Any, ...], rank: int) -> list[Any]:
    """The index items with `...` replaced by full slices and full slices added for the axes not indexed."""
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, slice | int)) or isinstance(item, bool):
            raise TorchImportError(
                f"tensor index {item!r} is not supported (only ints, slices, ... and None: no tensor indices)"
            )
    indexed = sum(1 for item in items if item is not None and item is not Ellipsis)
    if indexed > rank or sum(1 for item in items if item is Ellipsis) > 1:
        raise TorchImportError(f"index {items} does not fit a tensor of rank {rank}")
    fill = [slice(None)] * (rank - indexed)
    if Ellipsis in items:
        position = items.index(Ellipsis)
        return [*items[:position], *fill, *items[position + 1 :]]
    return [*items, *fill]
