"""ONNX converters for tensor ops: shapes, concatenation, slicing, gathering, reductions, shape plumbing.

Each converter is named exactly like its ONNX op and takes the node's inputs positionally and its attributes as
keyword arguments with ONNX's defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`).
Index-valued inputs (axes, split sizes, starts, indices, repeats, shapes) must be compile-time constants; they
become typed properties. A node whose inputs are all constants gets here only if `onnx_fold` has no exact evaluator for it.
Where an ONNX input and an attribute share a name (Split's `split`, Squeeze's `axes` before and after opset 13,
Slice's before opset 10), the input takes an `_input` suffix: inputs are passed by position.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import Float8E8M0FNUType, f32
from xdsl.ir import Attribute

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_index_checks import check_index_range
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    dtype_of,
    emit_reshape,
    normalise_axis,
)


def _shape(value: Value) -> tuple[int, ...]:
    return tuple(value.array.shape) if isinstance(value, ConstantValue) else shape_of(value)


def _constant_ints(value: Value | None, what: str) -> list[int] | None:
    """The integers of a constant index input (None when omitted), as a flat list."""
    if value is None:
        return None
    if not isinstance(value, ConstantValue):
        raise NodeError(
            f"{what} must be a compile-time constant (an initializer or computed from constants)"
        )
    if not np.issubdtype(value.array.dtype, np.integer) or value.array.ndim > 1:
        raise NodeError(
            f"{what} must be a 0-D or 1-D integer tensor, got {value.array.dtype} of shape {value.array.shape}"
        )
    return [int(v) for v in value.array.reshape(-1)]


def _either(
    input_value: Value | None, attribute: Sequence[int] | None, what: str
) -> list[int] | None:
    """An index list given as an input (opset >= 13 style) or as an attribute (older opsets)."""
    from_input = _constant_ints(input_value, what)
    if from_input is not None and attribute is not None:
        raise NodeError(f"{what} is given both as an input and as an attribute")
    return from_input if attribute is None else list(attribute)


def _unique_axes(axes: Sequence[int], rank: int) -> list[int]:
    normalised = [normalise_axis(axis, rank) for axis in axes]
    if len(set(normalised)) != len(normalised):
        raise NodeError(f"axes {list(axes)} repeat an axis")
    return sorted(normalised)


# Shape plumbing (outputs are compile-time constants)


def Shape(ctx: NodeContext, data: Value, *, start: int = 0, end: int | None = None) -> Value:
    """The (static) shape of `data`, dims `start` to `end`: a compile-time constant."""
    return ConstantValue(ctx.node.output[0], np.array(_shape(data)[start:end], dtype=np.int64))


def Size(ctx: NodeContext, data: Value) -> Value:
    """The (static) element count of `data`: a compile-time constant."""
    return ConstantValue(ctx.node.output[0], np.array(math.prod(_shape(data)), dtype=np.int64))


def _emit_cast(ctx: NodeContext, input: Value, dtype: np.dtype, saturate: int, round_mode: str | bytes) -> Value:
    if dtype not in ELEMENT_TYPES:
        raise UnsupportedNodeError(
            f"casting to {dtype} is not supported: run-time tensors are {', '.join(map(str, ELEMENT_TYPES))}"
        )
    mode = as_text(round_mode)
    if mode not in graph.ROUND_MODES:
        raise NodeError(f"attribute round_mode='{mode}' must be one of {', '.join(graph.ROUND_MODES)}")
    x = ctx.data(input)
    element = ELEMENT_TYPES[dtype]
    if graph.element_type(x) == element:
        return x
    e8m0 = isinstance(element, Float8E8M0FNUType)  # round_mode applies to no other target
    return ctx.emit(graph.CastOp(x, element, saturate=bool(saturate), round_mode=mode if e8m0 else None))


def Cast(ctx: NodeContext, input: Value, *, to: int, saturate: int = 1, round_mode: str | bytes = "up") -> Value:
    """Convert between any two run-time element types (`ELEMENT_TYPES`) -> graph.cast (nothing for the same type)."""
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(to))
    except (KeyError, TypeError, ValueError) as error:
        raise UnsupportedNodeError(f"casting to element type {to} is not supported") from error
    return _emit_cast(ctx, input, dtype, saturate, round_mode)


def CastLike(
    ctx: NodeContext, input: Value, target_type: Value, *, saturate: int = 1, round_mode: str | bytes = "up"
) -> Value:
    """Convert to the element type of `target_type` -> graph.cast (nothing for the same type)."""
    if isinstance(target_type, ConstantValue):
        return _emit_cast(ctx, input, target_type.array.dtype, saturate, round_mode)
    return _emit_cast(ctx, input, dtype_of(graph.element_type(target_type)), saturate, round_mode)


def Where(ctx: NodeContext, condition: Value, X: Value, Y: Value) -> Value:
    """`X` where the bool `condition` holds, else `Y` -> graph.where (one side for a uniform constant condition)."""
    x, y = ctx.data(X), ctx.data(Y)
    if isinstance(condition, ConstantValue):
        mask = condition.array.astype(bool)
        shape = graph.broadcast_shapes(mask.shape, shape_of(x), shape_of(y))
        if shape is not None and (mask.all() or not mask.any()):
            chosen = x if mask.all() else y
            return chosen if shape_of(chosen) == shape else ctx.emit(graph.ExpandOp(chosen, shape))
    selector = ctx.data(condition)
    if graph.element_type(selector) != graph.BOOL:
        raise NodeError(f"condition must be a bool tensor, got {graph.element_type(selector)}")
    if graph.element_type(x) != graph.element_type(y):
        raise NodeError(f"X and Y have different element types {graph.element_type(x)} and {graph.element_type(y)}")
    shapes = shape_of(selector), shape_of(x), shape_of(y)
    if graph.broadcast_shapes(*shapes) is None:
        raise NodeError(f"input shapes {', '.join(map(str, shapes))} are not broadcast-compatible")
    return ctx.emit(graph.WhereOp(selector, x, y))


# Shape manipulation


def Squeeze(
    ctx: NodeContext,
    data: Value,
    axes_input: Value | None = None,
    *,
    axes: Sequence[int] | None = None,
) -> Value:
    """Drop size-1 dims (the given ones, or all) -> graph.reshape."""
    x = ctx.data(data)
    shape = shape_of(x)
    given = _either(axes_input, axes, "axes")
    dropped = (
        [d for d, extent in enumerate(shape) if extent == 1]
        if given is None
        else _unique_axes(given, len(shape))
    )
    wide = [axis for axis in dropped if shape[axis] != 1]
    if wide:
        raise NodeError(f"cannot squeeze axis {wide[0]} of extent {shape[wide[0]]} (shape {shape})")
    target = tuple(extent for d, extent in enumerate(shape) if d not in dropped)
    return x if target == shape else emit_reshape(ctx, x, target)


def Unsqueeze(
    ctx: NodeContext,
    data: Value,
    axes_input: Value | None = None,
    *,
    axes: Sequence[int] | None = None,
) -> Value:
    """Insert size-1 dims at the given axes of the result -> graph.reshape."""
    x = ctx.data(data)
    shape = shape_of(x)
    given = _either(axes_input, axes, "axes")
    if given is None:
        raise NodeError("axes are required")
    inserted = _unique_axes(given, len(shape) + len(given))
    rest = iter(shape)
    target = tuple(1 if d in inserted else next(rest) for d in range(len(shape) + len(given)))
    return emit_reshape(ctx, x, target)


def Expand(ctx: NodeContext, input: Value, shape: Value) -> Value:
    """Broadcast to a constant shape (both ways, as numpy) -> graph.expand."""
    x = ctx.data(input)
    requested = _constant_ints(shape, "shape")
    assert requested is not None
    target = graph.broadcast_shapes(shape_of(x), tuple(requested))
    if target is None:
        raise NodeError(
            f"input shape {shape_of(x)} does not broadcast with the requested shape {tuple(requested)}"
        )
    return x if target == shape_of(x) else ctx.emit(graph.ExpandOp(x, target))


def Tile(ctx: NodeContext, input: Value, repeats: Value) -> Value:
    """Repeat along each dim a constant number of times -> graph.tile."""
    x = ctx.data(input)
    counts = _constant_ints(repeats, "repeats")
    assert counts is not None
    if len(counts) != len(shape_of(x)) or any(c < 0 for c in counts):
        raise NodeError(
            f"repeats {counts} must hold one non-negative count per input dim ({len(shape_of(x))})"
        )
    return x if all(c == 1 for c in counts) else ctx.emit(graph.TileOp(x, counts))


def Trilu(ctx: NodeContext, input: Value, k: Value | None = None, *, upper: int = 1) -> Value:
    """The upper or lower triangle of each matrix from the constant `k`-th diagonal on -> graph.trilu."""
    x = ctx.data(input)
    if len(shape_of(x)) < 2:
        raise NodeError(f"input must have rank 2 or more, got shape {shape_of(x)}")
    diagonal = _constant_ints(k, "k") or [0]
    if len(diagonal) != 1:
        raise NodeError(f"k must hold one value, got {diagonal}")
    return ctx.emit(graph.TriluOp(x, k=diagonal[0], upper=bool(upper)))


# Joining and splitting


def Concat(ctx: NodeContext, *inputs: Value, axis: int | None = None) -> Value:
    """Join along `axis` -> graph.concat (an input alone is returned as it is)."""
    if axis is None:
        raise NodeError("attribute axis is required")
    values = [ctx.data(value) for value in inputs]
    shapes = [shape_of(value) for value in values]
    along = normalise_axis(axis, len(shapes[0]))
    for shape in shapes[1:]:
        if len(shape) != len(shapes[0]) or any(
            a != b for d, (a, b) in enumerate(zip(shape, shapes[0])) if d != along
        ):
            raise NodeError(
                f"input shapes {shapes[0]} and {shape} differ outside the concatenation axis {along}"
            )
    return values[0] if len(values) == 1 else ctx.emit(graph.ConcatOp(values, along))


def Split(
    ctx: NodeContext,
    input: Value,
    split_input: Value | None = None,
    *,
    axis: int = 0,
    split: Sequence[int] | None = None,
    num_outputs: int | None = None,
) -> tuple[Value, ...]:
    """Split along `axis` into given sizes, `num_outputs` parts, or one equal part per output -> graph.slice each."""
    x = ctx.data(input)
    shape = shape_of(x)
    along = normalise_axis(axis, len(shape))
    extent = shape[along]
    sizes = _either(split_input, split, "split")
    outputs = len(ctx.node.output)
    if sizes is None:
        parts = outputs if num_outputs is None else num_outputs
        chunk = -(-extent // parts) if num_outputs is not None else extent // parts
        if num_outputs is None and extent % parts:
            raise NodeError(f"cannot split an axis of extent {extent} into {parts} equal parts")
        sizes = [min(chunk, extent - chunk * part) for part in range(parts)]
    if len(sizes) != outputs or sum(sizes) != extent or any(s < 0 for s in sizes):
        raise NodeError(
            f"split sizes {sizes} do not cut the axis of extent {extent} into {outputs} outputs"
        )
    results: list[Value] = []
    offset = 0
    for size in sizes:
        starts = [offset if d == along else 0 for d in range(len(shape))]
        part = tuple(size if d == along else e for d, e in enumerate(shape))
        results.append(ctx.emit(graph.SliceOp(x, starts, [1] * len(shape), part)))
        offset += size
    return tuple(results)


def Slice(
    ctx: NodeContext,
    data: Value,
    starts_input: Value | None = None,
    ends_input: Value | None = None,
    axes_input: Value | None = None,
    steps_input: Value | None = None,
    *,
    starts: Sequence[int] | None = None,
    ends: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
) -> Value:
    """Strided box with constant starts/ends/axes/steps (numpy slicing, clamped) -> graph.slice."""
    x = ctx.data(data)
    shape = shape_of(x)
    first = _either(starts_input, starts, "starts")
    last = _either(ends_input, ends, "ends")
    if first is None or last is None or len(first) != len(last):
        raise NodeError(f"starts {first} and ends {last} must both be given, of the same length")
    chosen = _either(axes_input, axes, "axes")
    dims = (
        list(range(len(first)))
        if chosen is None
        else [normalise_axis(a, len(shape)) for a in chosen]
    )
    strides = _constant_ints(steps_input, "steps") or [1] * len(first)
    if not len(dims) == len(strides) == len(first) or len(set(dims)) != len(dims) or 0 in strides:
        raise NodeError(
            f"axes {dims} and steps {strides} must match starts, without repeats or zero steps"
        )
    box = [range(extent) for extent in shape]
    for dim, start, end, step in zip(dims, first, last, strides):
        box[dim] = range(shape[dim])[slice(start, end, step)]
    if all(len(r) == e and r.step == 1 for r, e in zip(box, shape)):
        return x
    return ctx.emit(
        graph.SliceOp(
            x, [r.start if len(r) else 0 for r in box], [r.step for r in box], [len(r) for r in box]
        )
    )


def Gather(ctx: NodeContext, data: Value, indices: Value, *, axis: int = 0) -> Value:
    """Entries of `data` along `axis` at `indices` (negative counts from the end): graph.gather for constant indices,
    graph.take for run-time ones (an index out of range raises at run time: `onnx_index_checks`)."""
    x = ctx.data(data)
    shape = shape_of(x)
    along = normalise_axis(axis, len(shape))
    extent = shape[along]
    if not isinstance(indices, ConstantValue):
        if graph.element_type(indices) not in graph.INDICES:
            raise NodeError(f"indices must be int32 or int64, got {graph.element_type(indices)}")
        if extent == 0:
            raise NodeError(f"cannot gather from axis {along} of extent 0")
        check_index_range(ctx, indices, [extent], f"axis {along} of extent {extent}")
        return ctx.emit(graph.TakeOp(x, indices, along))
    if not np.issubdtype(indices.array.dtype, np.integer):
        raise NodeError(f"indices must be an integer tensor, got {indices.array.dtype}")
    flat = [int(i) for i in indices.array.reshape(-1)]
    bad = [i for i in flat if not -extent <= i < extent]
    if bad:
        raise NodeError(f"indices {bad} are out of range for axis {along} of extent {extent}")
    normalised = [i + extent if i < 0 else i for i in flat]
    return ctx.emit(graph.GatherOp(x, along, normalised, indices.array.shape))


# Reductions


_IDENTITY_OVER_NO_AXES = (
    graph.ReduceSumOp,
    graph.ReduceMeanOp,
    graph.ReduceMaxOp,
    graph.ReduceMinOp,
    graph.ReduceProdOp,
    graph.ReduceLogSumExpOp,
)


def _reduce(
    ctx: NodeContext,
    op: type[graph.ReduceOp],
    data: Value,
    axes_input: Value | None,
    axes: Sequence[int] | None,
    keepdims: int,
    noop_with_empty_axes: int,
) -> Value:
    x = ctx.data(data)
    if graph.element_type(x) == graph.BOOL and op in (graph.ReduceMaxOp, graph.ReduceMinOp):  # any / all, on bytes
        as_bytes = ctx.emit(graph.CastOp(x, graph.UNSIGNED[0]))
        reduced = _reduce(ctx, op, as_bytes, axes_input, axes, keepdims, noop_with_empty_axes)
        return ctx.emit(graph.CastOp(ctx.data(reduced), graph.BOOL))
    if graph.element_type(x) not in op.ELEMENTS:
        kinds = ", ".join(map(str, op.ELEMENTS))
        raise UnsupportedNodeError(f"{op.name} of {graph.element_type(x)} is not supported, only of {kinds}")
    shape = shape_of(x)
    given = _either(axes_input, axes, "axes")
    if not given:
        if noop_with_empty_axes:  # each element reduced alone: the identity for most, |x| for L1, ...
            return x if op in _IDENTITY_OVER_NO_AXES else ctx.emit(op(x, [], bool(keepdims)))
        given = list(range(len(shape)))
    reduced = _unique_axes(given, len(shape))
    if any(shape[axis] == 0 for axis in reduced):  # no values to combine: the combiner's identity, everywhere
        kept = [1 if axis in reduced else size for axis, size in enumerate(shape) if keepdims or axis not in reduced]
        return _empty_reduction(ctx, op, graph.element_type(x), kept)
    return ctx.emit(op(x, reduced, bool(keepdims)))


def _empty_reduction(ctx: NodeContext, op: type[graph.ReduceOp], element: Attribute, shape: list[int]) -> Value:
    """The reduction of the empty set, everywhere: a float constant, cast for other floats; for integers the type's
    bounds in place of the infinities (as ONNX's identities are; NaN: 0), a weight of that type."""
    value = _EMPTY_REDUCTION[op]
    dtype = dtype_of(element)
    if dtype.kind not in "iub":
        identity = ctx.emit(graph.ConstantOp(value, shape))
        return identity if element == f32 else ctx.emit(graph.CastOp(identity, element))
    info = np.iinfo(dtype)
    bounded = 0 if math.isnan(value) else min(max(value, info.min), info.max)
    return ctx.data(ConstantValue(f"{ctx.node.output[0]}.empty_reduction", np.full(shape, bounded, dtype)))


_EMPTY_REDUCTION: dict[type[graph.ReduceOp], float] = {
    graph.ReduceSumOp: 0.0,
    graph.ReduceL1Op: 0.0,
    graph.ReduceL2Op: 0.0,
    graph.ReduceSumSquareOp: 0.0,
    graph.ReduceProdOp: 1.0,
    graph.ReduceMaxOp: -np.inf,
    graph.ReduceMinOp: np.inf,
    graph.ReduceLogSumOp: -np.inf,  # log(0)
    graph.ReduceLogSumExpOp: -np.inf,  # log(0)
    graph.ReduceMeanOp: np.nan,  # 0 / 0
}
"""Each reduction over no values (an empty axis among the reduced ones)."""


def _reducer(op: type[graph.ReduceOp], doc: str) -> Converter:
    """The converter of one Reduce* op: they share inputs, attributes and checks, and differ in the graph op."""

    def convert(
        ctx: NodeContext,
        data: Value,
        axes_input: Value | None = None,
        *,
        axes: Sequence[int] | None = None,
        keepdims: int = 1,
        noop_with_empty_axes: int = 0,
    ) -> Value:
        return _reduce(ctx, op, data, axes_input, axes, keepdims, noop_with_empty_axes)

    convert.__doc__ = doc
    return convert


ReduceSum = _reducer(graph.ReduceSumOp, "Sum over axes -> graph.reduce_sum.")
ReduceMean = _reducer(graph.ReduceMeanOp, "Mean over axes -> graph.reduce_mean.")
ReduceMax = _reducer(graph.ReduceMaxOp, "Maximum over axes -> graph.reduce_max.")
ReduceMin = _reducer(graph.ReduceMinOp, "Minimum over axes -> graph.reduce_min.")
ReduceProd = _reducer(graph.ReduceProdOp, "Product over axes -> graph.reduce_prod.")
ReduceL1 = _reducer(graph.ReduceL1Op, "Sum of absolute values over axes -> graph.reduce_l1.")
ReduceL2 = _reducer(graph.ReduceL2Op, "Euclidean norm over axes -> graph.reduce_l2.")
ReduceLogSum = _reducer(graph.ReduceLogSumOp, "`log(sum(x))` over axes -> graph.reduce_log_sum.")
ReduceLogSumExp = _reducer(graph.ReduceLogSumExpOp, "`log(sum(exp(x)))` over axes -> graph.reduce_log_sum_exp.")
ReduceSumSquare = _reducer(graph.ReduceSumSquareOp, "Sum of squares over axes -> graph.reduce_sum_square.")


CONVERTERS: dict[str, Converter] = {
    # shape plumbing
    "Shape": Shape,
    "Size": Size,
    "Cast": Cast,
    "CastLike": CastLike,
    # shape manipulation
    "Squeeze": Squeeze,
    "Unsqueeze": Unsqueeze,
    "Expand": Expand,
    "Tile": Tile,
    "Trilu": Trilu,
    # joining and splitting
    "Concat": Concat,
    "Split": Split,
    "Slice": Slice,
    "Gather": Gather,
    "Where": Where,
    # reductions
    "ReduceSum": ReduceSum,
    "ReduceMean": ReduceMean,
    "ReduceMax": ReduceMax,
    "ReduceMin": ReduceMin,
    "ReduceProd": ReduceProd,
    "ReduceL1": ReduceL1,
    "ReduceL2": ReduceL2,
    "ReduceLogSum": ReduceLogSum,
    "ReduceLogSumExp": ReduceLogSumExp,
    "ReduceSumSquare": ReduceSumSquare,
}
"""ONNX op type (default domain) -> converter, for the tensor family."""
