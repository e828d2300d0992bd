"""Import-time evaluators of the ONNX ops that move, reshape, index and generate data (`onnx_fold`).

Each evaluator is named like its op and takes a `Folding`, the node's inputs as `ConstantValue`s in ONNX order (None
for an omitted optional one) and its attributes as keyword arguments with ONNX's defaults, as a converter does; it
returns the output array (a tuple of them for several outputs). Only elements are moved (or, for Range and
ConstantOfShape, written), so any element type is exact. A valid node it does not compute raises `NotFoldable`, and is
compiled; an invalid one raises `NodeError`, with the message its converter gives.

    Slice(folding, Const("x", np.arange(5)), Const("s", np.array([-1])), Const("e", np.array([-9])), None,
          Const("t", np.array([-2])))  # array([4, 2, 0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx

from minimlc.dialects import graph
from minimlc.frontend.onnx_ops import ConstantValue, NodeError, _reshape_target, as_text, normalise_axis
from minimlc.frontend.onnx_tensor import _constant_ints, _either, _unique_axes

Const = ConstantValue


class NotFoldable(Exception):
    """A valid node that import-time folding does not compute exactly (an element type, a mode): it is compiled."""


@dataclass(frozen=True)
class Folding:
    """What an evaluator may use besides its inputs: the node and the default domain's opset."""

    node: onnx.NodeProto
    opset: int


def _ints(value: Const | None, what: str) -> list[int]:
    """A required constant index input as a flat list of integers."""
    if value is None:
        raise NodeError(f"input {what} is required")
    ints = _constant_ints(value, what)
    assert ints is not None
    return ints


def _in_range(indices: np.ndarray, extent: int, where: str) -> np.ndarray:
    """Integer `indices` with negative ones counted from the end; NodeError for one outside [-extent, extent)."""
    if not np.issubdtype(indices.dtype, np.integer):
        raise NodeError(f"indices must be an integer tensor, got {indices.dtype}")
    wide = indices.astype(np.int64)
    bad = wide[(wide < -extent) | (wide >= extent)]
    if bad.size:
        raise NodeError(f"indices {[int(i) for i in bad[:8]]} are out of range for {where}")
    return np.where(wide < 0, wide + extent, wide)


# Shapes


def Shape(folding: Folding, data: Const, *, start: int = 0, end: int | None = None) -> np.ndarray:
    """Dims `start` to `end` of the shape (clamped, as Python slices)."""
    return np.array(data.array.shape[start:end], dtype=np.int64)


def Size(folding: Folding, data: Const) -> np.ndarray:
    return np.array(data.array.size, dtype=np.int64)


def Identity(folding: Folding, input: Const) -> np.ndarray:
    return input.array


def Dropout(
    folding: Folding,
    data: Const,
    ratio_input: Const | None = None,
    training_mode: Const | None = None,
    *,
    ratio: float = 0.5,
    seed: int | None = None,
    is_test: int = 0,
    consumed_inputs: Sequence[int] | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Inference Dropout: the identity, with an all-true mask from opset 12 on (the converter says the rest)."""
    training = training_mode is not None and bool(training_mode.array.any())
    rate = 0.5 if ratio_input is None else ratio_input.array
    if training and (np.size(rate) != 1 or float(np.reshape(rate, ())) != 0.0):
        raise NotFoldable("training mode with a ratio above 0 drops elements at random")
    outputs = folding.node.output
    if len(outputs) < 2 or not outputs[1]:
        return data.array
    if folding.opset < 12:
        raise NotFoldable("the mask before opset 12")
    return data.array, np.ones(data.array.shape, np.bool_)


def Reshape(folding: Folding, data: Const, shape: Const, *, allowzero: int = 0) -> np.ndarray:
    """The data reshaped: a 0 copies the input's dim (unless `allowzero`), a -1 is inferred."""
    return data.array.reshape(_reshape_target(data.array.shape, shape.array, allowzero=bool(allowzero)))


def Flatten(folding: Folding, input: Const, *, axis: int = 1) -> np.ndarray:
    shape = input.array.shape
    split = normalise_axis(axis, len(shape), inclusive=True)
    return input.array.reshape(math.prod(shape[:split]), math.prod(shape[split:]))


def Squeeze(
    folding: Folding, data: Const, axes_input: Const | None = None, *, axes: Sequence[int] | None = None
) -> np.ndarray:
    """The given size-1 dims (all, by default) dropped; axes an attribute before opset 13, an input after."""
    shape = data.array.shape
    given = _either(axes_input, axes, "axes")
    dropped = [d for d, extent in enumerate(shape) if extent == 1] if given is None else _unique_axes(given, len(shape))
    if wide := [axis for axis in dropped if shape[axis] != 1]:
        raise NodeError(f"cannot squeeze axis {wide[0]} of extent {shape[wide[0]]} (shape {shape})")
    return data.array.reshape([extent for d, extent in enumerate(shape) if d not in dropped])


def Unsqueeze(
    folding: Folding, data: Const, axes_input: Const | None = None, *, axes: Sequence[int] | None = None
) -> np.ndarray:
    """Size-1 dims inserted at the given axes of the result; axes an attribute before opset 13, an input after."""
    shape = data.array.shape
    given = _either(axes_input, axes, "axes")
    if given is None:
        raise NodeError("axes are required")
    inserted = _unique_axes(given, len(shape) + len(given))
    rest = iter(shape)
    return data.array.reshape([1 if d in inserted else next(rest) for d in range(len(shape) + len(given))])


def Transpose(folding: Folding, data: Const, *, perm: Sequence[int] | None = None) -> np.ndarray:
    rank = data.array.ndim
    order = list(range(rank))[::-1] if perm is None else list(perm)
    if sorted(order) != list(range(rank)):
        raise NodeError(f"perm {order} is not a permutation of 0..{rank - 1}")
    return data.array.transpose(order)


def Expand(folding: Folding, input: Const, shape: Const) -> np.ndarray:
    """The input broadcast with the requested shape, both ways (as numpy)."""
    requested = tuple(_ints(shape, "shape"))
    target = graph.broadcast_shapes(input.array.shape, requested)
    if target is None:
        raise NodeError(f"input shape {input.array.shape} does not broadcast with the requested shape {requested}")
    return np.broadcast_to(input.array, target)


def Tile(folding: Folding, input: Const, repeats: Const) -> np.ndarray:
    counts = _ints(repeats, "repeats")
    if len(counts) != input.array.ndim or any(c < 0 for c in counts):
        raise NodeError(f"repeats {counts} must hold one non-negative count per input dim ({input.array.ndim})")
    return np.tile(input.array, counts)


# Joining and splitting


def Concat(folding: Folding, *inputs: Const, axis: int | None = None) -> np.ndarray:
    if axis is None:
        raise NodeError("attribute axis is required")
    arrays = [value.array for value in inputs]
    first = arrays[0].shape
    along = normalise_axis(axis, len(first))
    for array in arrays[1:]:
        if array.ndim != len(first) or any(a != b for d, (a, b) in enumerate(zip(array.shape, first)) if d != along):
            raise NodeError(f"input shapes {first} and {array.shape} differ outside the concatenation axis {along}")
    if len({array.dtype for array in arrays}) > 1:
        raise NodeError(f"inputs of element types {sorted({str(array.dtype) for array in arrays})} differ")
    return np.concatenate(arrays, axis=along)


def Split(
    folding: Folding,
    input: Const,
    split_input: Const | None = None,
    *,
    axis: int = 0,
    split: Sequence[int] | None = None,
    num_outputs: int | None = None,
) -> tuple[np.ndarray, ...]:
    """Parts along `axis` of the given sizes, `num_outputs` parts (the last smaller), or one equal part per output."""
    shape = input.array.shape
    along = normalise_axis(axis, len(shape))
    extent, outputs = shape[along], len(folding.node.output)
    sizes = _either(split_input, split, "split")
    if sizes is None:
        parts = outputs if num_outputs is None else num_outputs
        if num_outputs is None and extent % parts:
            raise NodeError(f"cannot split an axis of extent {extent} into {parts} equal parts")
        chunk = -(-extent // parts)
        sizes = [min(chunk, extent - chunk * part) for part in range(parts)]
    if len(sizes) != outputs or sum(sizes) != extent or any(s < 0 for s in sizes):
        raise NodeError(f"split sizes {sizes} do not cut the axis of extent {extent} into {outputs} outputs")
    return tuple(np.split(input.array, np.cumsum(sizes)[:-1], axis=along))


def Slice(
    folding: Folding,
    data: Const,
    starts_input: Const | None = None,
    ends_input: Const | None = None,
    axes_input: Const | None = None,
    steps_input: Const | None = None,
    *,
    starts: Sequence[int] | None = None,
    ends: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
) -> np.ndarray:
    """A strided box: negative starts and ends count from the end, then clamp to the axis (as Python slices do)."""
    rank = data.array.ndim
    first, last = _either(starts_input, starts, "starts"), _either(ends_input, ends, "ends")
    if first is None or last is None or len(first) != len(last):
        raise NodeError(f"starts {first} and ends {last} must both be given, of the same length")
    chosen = _either(axes_input, axes, "axes")
    dims = list(range(len(first))) if chosen is None else [normalise_axis(a, rank) for a in chosen]
    strides = _constant_ints(steps_input, "steps") or [1] * len(first)
    if not len(dims) == len(strides) == len(first) or len(set(dims)) != len(dims) or 0 in strides:
        raise NodeError(f"axes {dims} and steps {strides} must match starts, without repeats or zero steps")
    box = [slice(None)] * rank
    for dim, start, end, step in zip(dims, first, last, strides):
        box[dim] = slice(start, end, step)
    return data.array[tuple(box)]


# Gathering


def Gather(folding: Folding, data: Const, indices: Const, *, axis: int = 0) -> np.ndarray:
    along = normalise_axis(axis, data.array.ndim)
    extent = data.array.shape[along]
    positions = _in_range(indices.array, extent, f"axis {along} of extent {extent}")
    return np.take(data.array, positions, axis=along)


def GatherElements(folding: Folding, data: Const, indices: Const, *, axis: int = 0) -> np.ndarray:
    """`data` read along `axis` at `indices` of the same rank, whose other dims may be shorter than the data's."""
    source, shape = data.array.shape, indices.array.shape
    along = normalise_axis(axis, len(source))
    if len(shape) != len(source) or any(i > s for d, (i, s) in enumerate(zip(shape, source)) if d != along):
        raise NodeError(f"indices of shape {shape} do not fit data of shape {source} outside axis {along}")
    positions = _in_range(indices.array, source[along], f"axis {along} of extent {source[along]}")
    window = tuple(slice(None) if d == along else slice(0, extent) for d, extent in enumerate(shape))
    return np.take_along_axis(data.array[window], positions, axis=along)


def GatherND(folding: Folding, data: Const, indices: Const, *, batch_dims: int = 0) -> np.ndarray:
    """The slices of `data` at the index tuples of `indices`' last dim, after `batch_dims` shared leading dims."""
    source, shape = data.array.shape, indices.array.shape
    if not 0 <= batch_dims < min(len(source), len(shape)) or source[:batch_dims] != shape[:batch_dims]:
        raise NodeError(f"batch_dims {batch_dims} must be leading dims shared by data {source} and indices {shape}")
    depth = shape[-1]
    if not 1 <= depth <= len(source) - batch_dims:
        raise NodeError(f"index tuples of length {depth} do not fit data {source} after {batch_dims} batch dims")
    batches, count = math.prod(source[:batch_dims]), math.prod(shape[batch_dims:-1])
    tuples = indices.array.reshape(batches, count, depth)
    where = f"axes {batch_dims} to {batch_dims + depth - 1} of data {list(source)}"
    coordinates = [_in_range(tuples[..., k], source[batch_dims + k], where) for k in range(depth)]
    rows = data.array.reshape(batches, *source[batch_dims:])
    picked = rows[(np.arange(batches)[:, None], *coordinates)]
    return picked.reshape(*shape[:-1], *source[batch_dims + depth :])


def NonZero(folding: Folding, X: Const) -> np.ndarray:
    """The coordinates of the nonzero elements (NaN included), one row per axis, in row-major order."""
    if X.array.ndim == 0:
        raise NotFoldable("a 0-D input")
    return np.array(np.nonzero(X.array), dtype=np.int64).reshape(X.array.ndim, -1)


def Where(folding: Folding, condition: Const, X: Const, Y: Const) -> np.ndarray:
    if condition.array.dtype != np.bool_:
        raise NodeError(f"condition must be a bool tensor, got {condition.array.dtype}")
    if X.array.dtype != Y.array.dtype:
        raise NodeError(f"X and Y have different element types {X.array.dtype} and {Y.array.dtype}")
    shapes = condition.array.shape, X.array.shape, Y.array.shape
    if graph.broadcast_shapes(*shapes) is None:
        raise NodeError(f"input shapes {', '.join(map(str, shapes))} are not broadcast-compatible")
    return np.where(condition.array, X.array, Y.array)


def Trilu(folding: Folding, input: Const, k: Const | None = None, *, upper: int = 1) -> np.ndarray:
    """The upper (`j - i >= k`) or lower (`j - i <= k`) triangle of each matrix, zeros elsewhere."""
    if input.array.ndim < 2:
        raise NodeError(f"input must have rank 2 or more, got shape {input.array.shape}")
    diagonal = _constant_ints(k, "k") or [0]
    if len(diagonal) != 1:
        raise NodeError(f"k must hold one value, got {diagonal}")
    return (np.triu if upper else np.tril)(input.array, diagonal[0])


# Generators


def Range(folding: Folding, start: Const, limit: Const, delta: Const) -> np.ndarray:
    """`start`, `start + delta`, ... below `limit` (above, for a negative delta), summed one step after another in the
    inputs' type as ONNX Runtime does; `ceil((limit - start) / delta)` elements, computed in double from the inputs."""
    scalars = [value.array for value in (start, limit, delta)]
    if any(array.size != 1 for array in scalars) or len({array.dtype for array in scalars}) > 1:
        raise NodeError("start, limit and delta must be scalars of one element type")
    first, end, step = (array.reshape(()) for array in scalars)
    if step == 0:
        raise NodeError("delta must not be 0")
    count = max(math.ceil((float(end) - float(first)) / float(step)), 0)
    steps = np.full(count, step, dtype=first.dtype)
    if count:
        steps[0] = first
    return np.add.accumulate(steps, dtype=first.dtype)


def ConstantOfShape(folding: Folding, input: Const, *, value: onnx.TensorProto | None = None) -> np.ndarray:
    """A tensor of the given shape filled with `value`'s one element (float32 0 by default)."""
    shape = _ints(input, "shape")
    if input.array.ndim != 1 or any(d < 0 for d in shape):
        raise NodeError(f"shape must be a 1-D tensor of non-negative dims, got {input.array.tolist()}")
    fill = np.zeros(1, np.float32) if value is None else onnx.numpy_helper.to_array(value)
    if fill.size != 1:
        raise NodeError(f"attribute value must hold one element, got shape {fill.shape}")
    return np.full(shape, fill.reshape(()), dtype=fill.dtype)


def Pad(
    folding: Folding,
    data: Const,
    pads_input: Const | None = None,
    constant_value: Const | None = None,
    axes: Const | None = None,
    *,
    mode: str | bytes = "constant",
    pads: Sequence[int] | None = None,
    value: float = 0.0,
) -> np.ndarray:
    """Constant padding; a negative pad crops. Pads and the fill are inputs from opset 11 on, attributes before."""
    if as_text(mode) != "constant":
        raise NotFoldable(f"mode '{as_text(mode)}'")
    array, rank = data.array, data.array.ndim
    if folding.opset >= 11:
        widths = _ints(pads_input, "pads")
        fill = np.zeros((), array.dtype) if constant_value is None else constant_value.array
        if fill.size != 1:
            raise NodeError(f"input constant_value must hold one element, got shape {fill.shape}")
    elif pads is None:
        raise NodeError("attribute pads is required")
    else:
        widths, fill = list(pads), np.array(value)
    chosen = list(range(rank)) if axes is None else [normalise_axis(a, rank) for a in _ints(axes, "axes")]
    if len(widths) != 2 * len(chosen):
        raise NodeError(f"pads has {len(widths)} values, expected {2 * len(chosen)} for {len(chosen)} axes")
    begins, ends = [0] * rank, [0] * rank
    for position, axis in enumerate(chosen):
        begins[axis], ends[axis] = widths[position], widths[len(chosen) + position]
    for axis, size in enumerate(array.shape):
        if size + begins[axis] + ends[axis] < 0:
            raise NodeError(f"pads {begins + ends} crop more than axis {axis} of size {size}")
    cropped = array[tuple(slice(-min(b, 0), size + min(e, 0)) for b, e, size in zip(begins, ends, array.shape))]
    widths_kept = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    return np.pad(cropped, widths_kept, constant_values=fill.reshape(()).astype(array.dtype))


EVALUATORS = {
    evaluator.__name__: evaluator
    for evaluator in (
        *(Shape, Size, Identity, Dropout, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile),
        *(Concat, Split, Slice, Gather, GatherElements, GatherND, NonZero, Where, Trilu, Range, ConstantOfShape, Pad),
    )
}
"""ONNX op type (default domain) -> evaluator, for the ops that move, reshape, index and generate data."""
