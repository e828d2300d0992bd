"""The importer's symbolic mode, node by node (`onnx_symbolic` explains it): `SymbolicImport` tracks every run-time
value's dimensions, evaluates shape computations, and rewrites the consumers of symbolic shapes into static graph
forms:

    Reshape to [batch, sequence, 12, 64] of x [batch, sequence, 768]  -> graph.reshape {shape = [0, 0, 12, 64]}
    Reshape to [batch*sequence, 768]                                  -> graph.reshape {shape = [-1, 768]}
    Expand of t [1, sequence] to Shape(ids) = [batch, sequence]       -> graph.where of a carrier of ids' batch
    Slice of x [batch, sequence, 768] from 1 to the end of axis 1     -> graph.slice to a `?` extent
    Slice of a [1, 512] buffer to sequence, Range(0, sequence)        -> graph.take at a cumsum of ones

A broadcast to a symbolic dimension the input lacks needs a tensor that has it (a carrier): a one-wide slice of a
value with that dimension, cast to bool, broadcast with the input by `graph.where(c, x, x)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import DYNAMIC, shape_of
from minimlc.frontend.onnx_index_checks import check_index_range
from minimlc.frontend.onnx_ops import ConstantValue, NodeContext
from minimlc.frontend.onnx_symbolic import (
    SHAPE_OPS,
    Dims,
    ShapeValue,
    Size,
    check_result_dims,
    elements_of,
    evaluate_shape_op,
    infer_dims,
    refuse,
    shape_of_dims,
    symbols_of,
    type_shape,
)
from minimlc.frontend.onnx_symbolic_dims import Dim, ceil_div, floor_div, is_symbolic
from minimlc.frontend.onnx_symbolic_indexing import SymbolicIndexing
from minimlc.frontend.onnx_symbolic_reshape import reshape_spec, reshape_steps

SHAPE_CONSUMERS = frozenset({"Reshape", "Expand", "ConstantOfShape", "Range", "Slice", "Tile"})
"""Ops that take a ShapeValue and become static graph forms."""
RESHAPES = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
"""Ops that become a graph.reshape, rewritten here when their input has a symbolic dimension."""
END = 2**62
"""Slice ends at or past this are `to the end` (exporters write INT64_MAX)."""


def _product(values: Sequence[Size]) -> Size:
    total: Size = 1
    for value in values:
        total = total * value
    return total


class SymbolicImport(SymbolicIndexing):
    """The symbolic dimensions of the values being imported, and the conversion of the nodes that need them."""

    def __init__(self) -> None:
        self.dims: dict[SSAValue, Dims] = {}
        self.flattened: dict[SSAValue, SSAValue] = {}
        """A [lead0*lead1*..., k] value -> the [lead0, lead1, ..., k] value it flattens (symbolic leading sizes)."""

    def of(self, value: SSAValue) -> Dims:
        """The dimensions of a run-time value (static types need no entry)."""
        return self.dims.get(value) or tuple(shape_of(value))

    # -- node conversion ----------------------------------------------------------------------------------------

    def takes(self, node: onnx.NodeProto, inputs: Sequence[Any]) -> bool:
        """Whether `convert` handles `node` (instead of the fold or the converter)."""
        if any(isinstance(value, ShapeValue) for value in inputs):
            return True
        data = inputs[0] if inputs else None
        dynamic = isinstance(data, SSAValue) and DYNAMIC in shape_of(data)
        if dynamic and self.takes_indexing(node, inputs):
            return True
        return dynamic and (node.op_type in RESHAPES | SHAPE_CONSUMERS | {"Shape", "Size"})

    def convert(self, node: onnx.NodeProto, label: str, inputs: Sequence[Any], ctx: NodeContext) -> list[Any]:
        """The outputs of `node`, which `takes` accepted."""
        op = node.op_type
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        data = inputs[0] if inputs else None
        if op in ("Shape", "Size") and isinstance(data, SSAValue):
            return [shape_of_dims(node, self.of(data))]
        computed = not isinstance(data, ShapeValue) and op in RESHAPES | SHAPE_CONSUMERS  # data is a tensor
        computed = computed or self.takes_indexing(node, inputs)
        if op in SHAPE_OPS and not computed:
            if any(isinstance(value, SSAValue) for value in inputs):
                raise refuse(label, "mixes run-time tensors with symbolic shape values", self._symbols(inputs))
            return [evaluate_shape_op(node, label, inputs)]
        rewrite = getattr(self, f"_{op.lower()}", None)
        if rewrite is None:
            raise refuse(label, f"{op} does not take symbolic shape values", self._symbols(inputs))
        return [rewrite(ctx, label, attributes, *inputs)]

    def record(self, node: onnx.NodeProto, label: str, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Infer and check the dimensions of a converted node's run-time outputs."""
        results = [value for value in outputs if isinstance(value, SSAValue)]
        if not any(DYNAMIC in shape_of(value) for value in results if isinstance(value.type, TensorType)):
            return
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        known = [
            self.of(v) if isinstance(v, SSAValue) else v.array if isinstance(v, ConstantValue) else None
            for v in inputs
        ]
        inferred = infer_dims(node, known, attributes)
        first = next((k for k in known if isinstance(k, tuple)), None)
        for n, value in enumerate(outputs):
            if isinstance(value, SSAValue) and isinstance(value.type, TensorType):
                dims = inferred[n] if n < len(inferred) else None
                self.dims[value] = check_result_dims(label, value, dims, first)

    def _symbols(self, inputs: Sequence[Any]) -> list[str]:
        found: list[str] = []
        for value in inputs:
            if isinstance(value, ShapeValue):
                found += value.symbols
            elif isinstance(value, SSAValue):
                found += symbols_of(self.of(value))
        return list(dict.fromkeys(found))

    def _target(self, label: str, value: Any, inputs: Sequence[Any]) -> list[Size]:
        elements = elements_of(value)
        if elements is None or elements.ndim != 1:
            raise refuse(label, "its shape input must be a 1-D integer tensor", self._symbols(inputs))
        return list(elements)

    # -- reshapes -----------------------------------------------------------------------------------------------

    def reshape_to(self, ctx: NodeContext, label: str, x: SSAValue, dims: Sequence[Size]) -> SSAValue:
        """`x` reshaped to `dims`: one graph.reshape, or a chain of them (`onnx_symbolic_reshape`)."""
        source = self.of(x)
        if tuple(source) == tuple(dims):
            return x
        if x in self.flattened and self.of(self.flattened[x]) == tuple(dims):
            return self.flattened[x]
        if _product(source) != _product(dims):
            raise refuse(
                label, f"reshapes {list(map(str, source))} to {list(map(str, dims))}, whose sizes do not match",
                symbols_of([*source, *dims]),
            )
        steps = reshape_steps(source, dims)
        if steps is None:
            raise refuse(
                label, f"the target {list(map(str, dims))} has more than one symbolic size that the input "
                f"{list(map(str, source))} lacks", symbols_of(dims),
            )
        value = x
        for step in steps:
            if step.perm is not None:
                value = ctx.emit(graph.TransposeOp(value, step.perm))
            else:
                shape = type_shape(step.shape)
                value = ctx.emit(graph.ReshapeOp(value, shape, reshape_spec(self.of(value), step.shape)
                                                 if DYNAMIC in shape else None))
            self.dims[value] = step.shape
        if len(dims) == 2 and len(source) > 2 and dims[-1] == source[-1] and symbols_of(source[:-1]):
            self.flattened[value] = x
        return value


    def _reshape(self, ctx, label, attributes, data, shape):
        x = ctx.data(data)
        source = self.of(x)
        dims: list[Size] = []
        rest = None
        for axis, size in enumerate(self._target(label, shape, [data, shape])):
            if size == 0 and not attributes.get("allowzero", 0):
                size = source[axis]
            elif size == -1:
                rest, size = axis, 1
            dims.append(size)
        if rest is not None:
            known = _product(dims)
            dims[rest] = floor_div(_product(source), known)
        return self.reshape_to(ctx, label, x, dims)

    def _flatten(self, ctx, label, attributes, data):
        source = self.of(ctx.data(data))
        split = attributes.get("axis", 1) % (len(source) + 1)
        return self.reshape_to(ctx, label, ctx.data(data), [_product(source[:split]), _product(source[split:])])

    def _squeeze(self, ctx, label, attributes, data, axes=None):
        source = self.of(ctx.data(data))
        listed = [int(a) for a in elements_of(axes).flat] if axes is not None else attributes.get("axes")
        if listed is None:
            if any(is_symbolic(d) for d in source):
                raise refuse(label, "squeezes unlisted axes of symbolic sizes", symbols_of(source))
            listed = [i for i, d in enumerate(source) if d == 1]
        chosen = {a % len(source) for a in listed}
        return self.reshape_to(ctx, label, ctx.data(data), [d for i, d in enumerate(source) if i not in chosen])

    def _unsqueeze(self, ctx, label, attributes, data, axes=None):
        dims = list(self.of(ctx.data(data)))
        listed = [int(a) for a in elements_of(axes).flat] if axes is not None else attributes["axes"]
        rank = len(dims) + len(listed)
        for axis in sorted(a % rank for a in listed):
            dims.insert(axis, 1)
        return self.reshape_to(ctx, label, ctx.data(data), dims)

    # -- broadcasts ---------------------------------------------------------------------------------------------

    def broadcast_to(self, ctx: NodeContext, label: str, x: SSAValue, dims: Sequence[Size]) -> SSAValue:
        """`x` numpy-broadcast to `dims`: a graph.expand for its static growth, then a graph.where with a carrier
        of each symbolic dimension `x` lacks."""
        source = (1,) * (len(dims) - len(self.of(x))) + tuple(self.of(x))
        if len(source) > len(dims):
            raise refuse(label, f"cannot broadcast {list(map(str, self.of(x)))} to {list(map(str, dims))}")
        staged: list[Size] = []
        carried: list[int] = []
        for axis, (have, want) in enumerate(zip(source, dims)):
            if have == want or want == 1:
                staged.append(have)
            elif have != 1:
                raise refuse(
                    label, f"broadcasts {have} to {want}, which agree only at run time", symbols_of([have, want])
                )
            elif is_symbolic(want):
                staged.append(1)
                carried.append(axis)
            else:
                staged.append(want)
        value = x
        if tuple(staged) != tuple(self.of(x)):
            if DYNAMIC in shape_of(x) and len(staged) != len(self.of(x)):
                value = self.reshape_to(ctx, label, x, source)
            if tuple(staged) != self.of(value):
                value = ctx.emit(graph.ExpandOp(value, type_shape(staged)))
                self.dims[value] = tuple(staged)
        if not carried:
            return value
        condition = None
        for axis in carried:
            carrier = self.carrier(ctx, label, dims[axis], axis, len(dims))
            condition = carrier if condition is None else ctx.emit(graph.AndOp(condition, carrier))
        assert condition is not None
        result = ctx.emit(graph.WhereOp(condition, value, value))
        self.dims[result] = tuple(dims)
        return result

    def carrier(self, ctx: NodeContext, label: str, size: Size, axis: int, rank: int) -> SSAValue:
        """A bool tensor of `rank` dimensions, all 1 but `axis`, which is `size`: a one-wide slice of a value that
        has that dimension."""
        found = next(((v, k) for v, dims in self.dims.items() for k, d in enumerate(dims) if d == size), None)
        if found is None:
            raise refuse(label, f"no value has the dimension {size} to broadcast to", symbols_of([size]))
        value, k = found
        source = shape_of(value)
        counts = [DYNAMIC if i == k else 1 for i in range(len(source))]
        picked = ctx.emit(graph.SliceOp(value, [0] * len(source), [1] * len(source), counts))
        self.dims[picked] = tuple(size if i == k else 1 for i in range(len(source)))
        line = self.reshape_to(ctx, label, picked, [size if i == axis else 1 for i in range(rank)])
        flag = ctx.emit(graph.CastOp(line, i1))
        self.dims[flag] = self.dims[line]
        return flag

    def _expand(self, ctx, label, attributes, data, shape):
        x = ctx.data(data)
        target = self._target(label, shape, [data, shape])
        rank = max(len(target), len(self.of(x)))
        wanted = (1,) * (rank - len(target)) + tuple(target)
        source = (1,) * (rank - len(self.of(x))) + tuple(self.of(x))
        dims = [have if want == 1 else want for have, want in zip(source, wanted)]
        return self.broadcast_to(ctx, label, x, dims)

    def _tile(self, ctx, label, attributes, data, repeats):
        x = ctx.data(data)
        source, counts = self.of(x), self._target(label, repeats, [data, repeats])
        if all(not is_symbolic(r) for r in counts):
            result = ctx.emit(graph.TileOp(x, [int(r) for r in counts]))
            self.dims[result] = tuple(d * r for d, r in zip(source, counts))
            return result
        if any(is_symbolic(r) and d != 1 for d, r in zip(source, counts)):
            raise refuse(label, "repeats a dimension other than 1 a symbolic number of times", symbols_of(counts))
        tiled = ctx.emit(graph.TileOp(x, [1 if is_symbolic(r) else int(r) for r in counts]))
        self.dims[tiled] = tuple(d if is_symbolic(r) else d * r for d, r in zip(source, counts))
        return self.broadcast_to(ctx, label, tiled, [d * r for d, r in zip(source, counts)])

    def _constantofshape(self, ctx, label, attributes, shape):
        dims = self._target(label, shape, [shape])
        filler = attributes.get("value")
        value = numpy_helper.to_array(filler) if filler is not None else np.zeros(1, np.float32)
        constant = ConstantValue(f"{ctx.node.output[0]}.fill", value.reshape([1] * len(dims)))
        return self.broadcast_to(ctx, label, ctx.data(constant), dims)

    # -- ranges and slices --------------------------------------------------------------------------------------

    def iota(self, ctx: NodeContext, label: str, count: Size, start: int, step: int, dtype: np.dtype) -> SSAValue:
        """[start, start + step, ...] of `count` elements of `dtype`: a running sum of ones broadcast to `count`."""
        one = ConstantValue(f"{ctx.node.output[0]}.one", np.ones(1, dtype))
        ones = self.broadcast_to(ctx, label, ctx.data(one), [count])
        value = ctx.emit(graph.CumSumOp(ones, 0, exclusive=True))
        for operand, op in ((step, graph.MulOp), (start, graph.AddOp)):
            if operand != (1 if op is graph.MulOp else 0):
                scalar = ctx.data(ConstantValue(f"{ctx.node.output[0]}.{op.name[6:]}", np.array([operand], dtype)))
                value = ctx.emit(op(value, scalar))
        self.dims[value] = (count,)
        return value

    def _range(self, ctx, label, attributes, start, limit, delta):
        values = [elements_of(v) for v in (start, limit, delta)]
        if any(v is None or v.ndim != 0 for v in values):
            raise refuse(label, "start, limit and delta must be scalars", self._symbols([start, limit, delta]))
        first, last, step = (v.item() for v in values)
        if is_symbolic(step) or int(step) <= 0:
            raise refuse(label, "the delta must be a positive constant", self._symbols([start, limit, delta]))
        dtype = limit.array.dtype if isinstance(limit, ConstantValue) else np.dtype(np.int64)
        count = ceil_div(last - first, int(step))
        if not is_symbolic(first):
            return self.iota(ctx, label, count, int(first), int(step), dtype)
        # A symbolic start (a cache's length): [0, step, ...] plus the start's run-time value.
        offsets = self.iota(ctx, label, count, 0, int(step), dtype)
        result = ctx.emit(graph.AddOp(offsets, self.size_value(ctx, label, first, dtype)))
        self.dims[result] = (count,)
        return result

    def size_value(self, ctx: NodeContext, label: str, size: Size, dtype: np.dtype) -> SSAValue:
        """A one-element tensor holding `size` at run time: the sum of ones broadcast to [size]."""
        one = ConstantValue(f"{ctx.node.output[0]}.size_one", np.ones(1, dtype))
        total = ctx.emit(graph.ReduceSumOp(self.broadcast_to(ctx, label, ctx.data(one), [size]), [0], True))
        self.dims[total] = (1,)
        return total

    def _slice(self, ctx, label, attributes, data, starts, ends, axes=None, steps=None):
        x = ctx.data(data)
        source = self.of(x)
        begin, end = elements_of(starts), elements_of(ends)
        axes_list = list(range(len(begin))) if axes is None else [int(a) % len(source) for a in elements_of(axes)]
        stride = [1] * len(axes_list) if steps is None else [int(s) for s in elements_of(steps)]
        first, step, dims = [0] * len(source), [1] * len(source), list(source)
        taken: list[tuple[int, Size, int]] = []
        for n, axis in enumerate(axes_list):
            extent, start, stop, by = source[axis], begin[n], end[n], stride[n]
            if is_symbolic(start) or by == 0:
                raise refuse(label, "a symbolic start or a zero step", self._symbols([data, starts]))
            if not is_symbolic(extent) and not is_symbolic(stop):
                index = slice(int(start), int(stop), by).indices(int(extent))
                first[axis], step[axis], dims[axis] = index[0], by, len(range(*index))
            elif by == 1 and start >= 0 and (stop == extent or (not is_symbolic(stop) and stop >= END)):
                first[axis], dims[axis] = int(start), extent - int(start)
            elif by == 1 and 0 <= start and is_symbolic(stop) and not is_symbolic(extent):
                taken.append((axis, stop - int(start), int(start)))  # a gather of [start, stop)
            else:
                raise refuse(
                    label, f"slices axis {axis} of size {extent} from {start} to {stop} by {by}, whose extent is "
                    "known only at run time", symbols_of([extent, stop]),
                )
        value = x
        if first != [0] * len(source) or step != [1] * len(source) or dims != list(source):
            value = ctx.emit(graph.SliceOp(x, first, step, type_shape(dims)))
            self.dims[value] = tuple(dims)
        for axis, count, start in taken:
            indices = self.iota(ctx, label, count, start, 1, np.dtype(np.int64))
            check_index_range(ctx, indices, [shape_of(value)[axis]], f"slice of axis {axis}")
            picked = ctx.emit(graph.TakeOp(value, indices, axis))
            self.dims[picked] = (*self.of(value)[:axis], count, *self.of(value)[axis + 1 :])
            value = picked
        return value


__all__ = ["Dim", "SymbolicImport"]
