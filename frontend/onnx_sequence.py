"""ONNX converters for sequences and optionals of static length, as import-time containers of graph values.

A sequence is a `SequenceValue` (a tuple of tensors: SSA values or constants, each of its own static shape) and an
optional an `OptionalValue` (a tensor, a sequence, or nothing): the ops that build, index and edit them
(SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt, SequenceErase, SequenceLength, SplitToSequence,
Optional, OptionalHasElement, OptionalGetElement) only rearrange the tuple at import time; the tensors themselves
are computed by native code as any other (a split is `graph.slice`s, ConcatFromSequence a `graph.concat`). Positions
and split sizes must be compile-time constants (the backend binds them: they choose the output's shape).

    s = SequenceConstruct(a, b); t = SequenceInsert(s, c, 0); y = ConcatFromSequence(t, axis=0)
    -> y = graph.concat(c, a, b)

SequenceMap runs its body once per element (`onnx_control.unrolled`), like Loop's body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    dtype_of,
    normalise_axis,
)


@dataclass(frozen=True)
class SequenceValue:
    """A sequence of known length: its tensors, and the element type of an empty one."""

    items: tuple[Value, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class OptionalValue:
    """An optional: its tensor or sequence, or None when empty."""

    content: Value | SequenceValue | None


Item = Value | SequenceValue | OptionalValue
"""What a name holds at import time: a tensor, a sequence or an optional."""


def dtype_of_value(value: Value) -> np.dtype:
    """The numpy element type of a tensor value."""
    return value.array.dtype if isinstance(value, ConstantValue) else dtype_of(graph.element_type(value))


def shape_of_value(value: Value) -> tuple[int, ...]:
    return value.array.shape if isinstance(value, ConstantValue) else shape_of(value)


def sequence_of(items: Sequence[Value], dtype: np.dtype | None = None) -> SequenceValue:
    """A sequence of `items`, which must share one element type (`dtype` for an empty one)."""
    dtypes = {dtype_of_value(item) for item in items} | ({dtype} if dtype is not None else set())
    if len(dtypes) > 1:
        raise NodeError(f"sequence elements must share one element type, got {sorted(map(str, dtypes))}")
    if not dtypes:
        raise NodeError("the element type of an empty sequence is unknown")
    return SequenceValue(tuple(items), dtypes.pop())


def _sequence(value: Item | None, what: str = "input_sequence") -> SequenceValue:
    if not isinstance(value, SequenceValue):
        raise NodeError(f"{what} must be a sequence, got {_kind(value)}")
    return value


def _tensor(value: Item | None, what: str) -> Value:
    if not isinstance(value, (SSAValue, ConstantValue)):
        raise NodeError(f"{what} must be a tensor, got {_kind(value)}")
    return value


def _kind(value: Item | None) -> str:
    if isinstance(value, SequenceValue):
        return "a sequence"
    if isinstance(value, OptionalValue):
        return "an optional"
    return "nothing" if value is None else "a tensor"


def constant_integer(value: Item | None, what: str) -> int | None:
    """A one-element integer operand known at import time (None when omitted)."""
    if value is None:
        return None
    if not isinstance(value, ConstantValue):
        raise UnsupportedNodeError(f"{what} must be a compile-time constant (it chooses the output's shape)")
    if value.array.size != 1 or value.array.dtype.kind not in "iu":
        raise NodeError(f"{what} must be one integer, got {value.array.dtype} of shape {value.array.shape}")
    return int(value.array.reshape(()))


def _position(position: int, length: int, inclusive: bool) -> int:
    upper = length + 1 if inclusive else length
    if not -length <= position < upper:
        raise NodeError(f"position {position} is out of range for a sequence of length {length}")
    return position + length if position < 0 else position


def SequenceConstruct(ctx: NodeContext, *inputs: Item) -> SequenceValue:
    """The sequence of the input tensors."""
    return sequence_of([_tensor(value, f"input {index}") for index, value in enumerate(inputs)])


def SequenceEmpty(ctx: NodeContext, *, dtype: int = onnx.TensorProto.FLOAT) -> SequenceValue:
    """An empty sequence of element type `dtype`."""
    return SequenceValue((), np.dtype(helper.tensor_dtype_to_np_dtype(dtype)))


def SequenceInsert(
    ctx: NodeContext, input_sequence: Item, tensor: Item, position: Item | None = None
) -> SequenceValue:
    """`tensor` inserted before `position` (default: appended)."""
    sequence = _sequence(input_sequence)
    items = list(sequence.items)
    at = constant_integer(position, "position")
    items.insert(len(items) if at is None else _position(at, len(items), inclusive=True), _tensor(tensor, "tensor"))
    return sequence_of(items, sequence.dtype)


def SequenceAt(ctx: NodeContext, input_sequence: Item, position: Item) -> Value:
    """The element at `position`."""
    sequence = _sequence(input_sequence)
    at = constant_integer(position, "position")
    assert at is not None
    return sequence.items[_position(at, len(sequence.items), inclusive=False)]


def SequenceErase(ctx: NodeContext, input_sequence: Item, position: Item | None = None) -> SequenceValue:
    """The sequence without the element at `position` (default: the last)."""
    sequence = _sequence(input_sequence)
    items = list(sequence.items)
    at = constant_integer(position, "position")
    del items[-1 if at is None else _position(at, len(items), inclusive=False)]
    return SequenceValue(tuple(items), sequence.dtype)


def SequenceLength(ctx: NodeContext, input_sequence: Item) -> ConstantValue:
    """The length, a compile-time int64 scalar."""
    sequence = _sequence(input_sequence)
    return ConstantValue(f"{ctx.node.output[0]}.length", np.array(len(sequence.items), np.int64))


def SplitToSequence(
    ctx: NodeContext, input: Item, split: Item | None = None, *, axis: int = 0, keepdims: int = 1
) -> SequenceValue:
    """`input` cut along `axis` into parts of the given sizes, of one given size (the last shorter), or into
    single slices (without the axis unless `keepdims`) -> graph.slice each."""
    x = ctx.data(_tensor(input, "input"))
    shape = shape_of(x)
    along = normalise_axis(axis, len(shape))
    extent = shape[along]
    if split is None:
        sizes, squeeze = [1] * extent, not keepdims
    else:
        if not isinstance(split, ConstantValue):
            raise UnsupportedNodeError("split must be a compile-time constant (it sets the elements' shapes)")
        array = split.array
        if array.ndim == 0:
            chunk = int(array)
            if chunk <= 0:
                raise NodeError(f"split must be positive, got {chunk}")
            sizes = [min(chunk, extent - start) for start in range(0, extent, chunk)]
        else:
            sizes = [int(size) for size in array.reshape(-1)]
        squeeze = False
        if sum(sizes) != extent or any(size < 0 for size in sizes):
            raise NodeError(f"split sizes {sizes} do not cut the axis of extent {extent}")
    items: list[Value] = []
    offset = 0
    for size in sizes:
        starts = [offset if d == along else 0 for d in range(len(shape))]
        part_shape = tuple(size if d == along else e for d, e in enumerate(shape))
        part = ctx.emit(graph.SliceOp(x, starts, [1] * len(shape), part_shape))
        if squeeze:
            part = ctx.emit(graph.ReshapeOp(part, shape[:along] + shape[along + 1 :]))
        items.append(part)
        offset += size
    return sequence_of(items, dtype_of(graph.element_type(x)))


def ConcatFromSequence(ctx: NodeContext, input_sequence: Item, *, axis: int, new_axis: int = 0) -> Value:
    """The elements concatenated along `axis`, or stacked along a new `axis` when `new_axis` -> graph.concat."""
    sequence = _sequence(input_sequence)
    if not sequence.items:
        raise NodeError("cannot concatenate an empty sequence")
    return stacked(ctx, list(sequence.items), axis) if new_axis else concatenated(ctx, list(sequence.items), axis)


def concatenated(ctx: NodeContext, items: list[Value], axis: int) -> Value:
    """`items` joined along `axis` (numpy's concatenate when all are constants, else graph.concat)."""
    shapes = [shape_of_value(item) for item in items]
    along = normalise_axis(axis, len(shapes[0]))
    others = [s[:along] + s[along + 1 :] for s in shapes]
    if any(len(s) != len(shapes[0]) or other != others[0] for s, other in zip(shapes, others)):
        raise NodeError(f"cannot concatenate shapes {shapes} along axis {axis}")
    if all(isinstance(item, ConstantValue) for item in items):
        arrays = [item.array for item in items]  # pyright: ignore[reportAttributeAccessIssue]
        return ConstantValue(f"{ctx.node.output[0]}.joined", np.concatenate(arrays, along))
    if len(items) == 1:
        return ctx.data(items[0])
    return ctx.emit(graph.ConcatOp([ctx.data(item) for item in items], along))


def stacked(ctx: NodeContext, items: list[Value], axis: int) -> Value:
    """`items` (of one shape) stacked along a new `axis`."""
    shape = shape_of_value(items[0])
    along = normalise_axis(axis, len(shape) + 1)
    if any(shape_of_value(item) != shape for item in items):
        raise NodeError(f"cannot stack elements of shapes {[shape_of_value(item) for item in items]}")
    expanded = (*shape[:along], 1, *shape[along:])
    return concatenated(ctx, [_reshaped(ctx, item, expanded) for item in items], along)


def _reshaped(ctx: NodeContext, value: Value, shape: tuple[int, ...]) -> Value:
    if isinstance(value, ConstantValue):
        return ConstantValue(f"{value.name}.reshaped", value.array.reshape(shape))
    return ctx.emit(graph.ReshapeOp(value, shape))


def Optional(ctx: NodeContext, input: Item | None = None, *, type: onnx.TypeProto | None = None) -> OptionalValue:
    """An optional holding `input`, or an empty one (of `type`)."""
    if isinstance(input, OptionalValue):
        raise NodeError("an optional cannot hold an optional")
    return OptionalValue(input)


def OptionalHasElement(ctx: NodeContext, input: Item | None = None) -> ConstantValue:
    """Whether the optional holds an element (a tensor or sequence given directly does): a compile-time bool."""
    present = input is not None and (not isinstance(input, OptionalValue) or input.content is not None)
    return ConstantValue(f"{ctx.node.output[0]}.present", np.array(present))


def OptionalGetElement(ctx: NodeContext, input: Item) -> Value | SequenceValue:
    """The optional's element (a tensor or sequence given directly is returned as it is)."""
    if not isinstance(input, OptionalValue):
        return input
    if input.content is None:
        raise NodeError("the optional is empty")
    return input.content


CONVERTERS = {
    "SequenceConstruct": SequenceConstruct,
    "SequenceEmpty": SequenceEmpty,
    "SequenceInsert": SequenceInsert,
    "SequenceAt": SequenceAt,
    "SequenceErase": SequenceErase,
    "SequenceLength": SequenceLength,
    "SplitToSequence": SplitToSequence,
    "ConcatFromSequence": ConcatFromSequence,
    "Optional": Optional,
    "OptionalHasElement": OptionalHasElement,
    "OptionalGetElement": OptionalGetElement,
}
"""ONNX op type -> converter, for sequences and optionals."""

CONTAINER_OPS = frozenset({*CONVERTERS, "Identity", "SequenceMap", "If", "Loop", "Scan"})
"""The ops that take or give sequences and optionals; any other op given one is refused."""


def output_items(
    vi: onnx.ValueInfoProto, value: SequenceValue | OptionalValue
) -> tuple[list[tuple[onnx.ValueInfoProto, Value]], bool]:
    """The tensors a graph output holding a sequence or an optional returns, each with the value info it is checked
    against (`name[i]` for a sequence's elements), and whether the output is a sequence (a list at run time)."""
    element = _element_type(vi.type)
    if isinstance(value, OptionalValue):
        if value.content is None:
            return [], False
        if isinstance(value.content, SequenceValue):
            return output_items(vi, value.content)
        return [(helper.make_tensor_value_info(vi.name, element, None), value.content)], False
    items = [(helper.make_tensor_value_info(f"{vi.name}[{i}]", element, None), v) for i, v in enumerate(value.items)]
    return items, True


def _element_type(type_proto: onnx.TypeProto) -> int:
    """The element type of the tensors in a (possibly nested) sequence or optional type (0 when not declared)."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return _element_type(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return _element_type(type_proto.optional_type.elem_type)
    return type_proto.tensor_type.elem_type if kind == "tensor_type" else onnx.TensorProto.UNDEFINED
