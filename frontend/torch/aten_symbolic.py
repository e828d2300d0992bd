"""Dynamic shapes of an exported program (`torch.export.Dim`): each size as an exact expression
(`onnx_symbolic_dims.Dim`, named after the program's Dims) and the graph forms that need no run-time sizes.

    ep = torch.export.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch", max=64)},))
    x: FakeTensor [s77, 16]            -> dims (batch, 16), graph type tensor<?x16xf32>
    view of [s77, 4, 8] to [4*s77, 8]  -> graph.reshape {shape = [-1, 8]}
    expand of [8, 8] to [s77, 8, 8]    -> graph.where of a carrier of batch (a one-wide slice of x, as bools)
    arange(s27)                        -> a running sum of ones broadcast to [sequence]

`SymbolicShapes` records every run-time value's dims and builds reshapes (`onnx_symbolic_reshape`), broadcasts and
ranges over them. A size it cannot express raises `SymbolicShapeError` naming the symbols.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy
import torch
from torch import fx
from torch.utils._sympy.functions import FloorDiv
from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import DYNAMIC, shape_of
from minimlc.frontend.graph_builder import GraphBuilder
from minimlc.frontend.onnx_errors import UnsupportedFeatureError
from minimlc.frontend.onnx_symbolic_dims import Dim, floor_div, is_symbolic
from minimlc.frontend.onnx_symbolic_reshape import reshape_spec, reshape_steps

Size = int | Dim
Dims = tuple[Size, ...]


class SymbolicShapeError(UnsupportedFeatureError):
    """A node whose symbolic sizes minimlc cannot express; the message names the node and the symbols."""


def symbols_note(sizes: Sequence[Any]) -> str:
    """The symbols `sizes` use, as ` (symbols 'batch', 'sequence')`, or nothing."""
    names = list(dict.fromkeys(name for size in sizes if is_symbolic(size) for name in size.symbols))
    return f" (symbols {', '.join(map(repr, names))})" if names else ""


def spelled(dims: Sequence[Size]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def symbol_names(nodes: Sequence[fx.Node]) -> dict[sympy.Symbol, str]:
    """Each size symbol of the placeholders' example values, by the name of its `torch.export.Dim` where torch
    recorded it (`batch`), else `s0`, `s1`, ... in order of appearance."""
    names: dict[sympy.Symbol, str] = {}
    for node in nodes:
        value = node.meta.get("val")
        if node.op != "placeholder" or not isinstance(value, torch.Tensor):
            continue
        for size in value.shape:
            if isinstance(size, torch.SymInt):
                for symbol in sorted(size.node.expr.free_symbols, key=str):
                    names.setdefault(symbol, _dim_name(size, symbol) or f"s{len(names)}")
    if len(set(names.values())) != len(names):  # two Dims of one name: torch's own symbols keep them apart
        return {symbol: str(symbol) for symbol in names}
    return names


def _dim_name(size: torch.SymInt, symbol: sympy.Symbol) -> str | None:
    shape_env = size.node.shape_env
    for source in shape_env.var_to_sources.get(symbol, []):
        name = shape_env.source_name_to_debug_name.get(source.name)
        if name is not None and name.isidentifier():
            return name
    return None


def dim_of(size: Any, names: Mapping[sympy.Symbol, str]) -> Size:
    """A torch size (an int, or a SymInt of a sympy expression) as an int or `Dim`: sums, products, integer powers
    and floor divisions of the symbols; SymbolicShapeError for anything else."""
    if isinstance(size, int):
        return size
    expression = size.node.expr if isinstance(size, torch.SymInt) else size
    return _converted(expression, names, expression)


def _converted(expression: Any, names: Mapping[sympy.Symbol, str], whole: Any) -> Size:
    if isinstance(expression, sympy.Integer):
        return int(expression)
    if isinstance(expression, sympy.Symbol) and expression in names:
        return Dim.symbol(names[expression])
    parts = [_converted(arg, names, whole) for arg in expression.args]
    if isinstance(expression, sympy.Add):
        return sum(parts[1:], parts[0])
    if isinstance(expression, sympy.Mul):
        return math.prod(parts[1:], start=parts[0])
    if isinstance(expression, sympy.Pow) and isinstance(parts[1], int) and parts[1] > 0:
        return math.prod([parts[0]] * parts[1])
    if isinstance(expression, FloorDiv):
        return floor_div(parts[0], parts[1])
    raise SymbolicShapeError(
        f"the size {whole} ({type(expression).__name__}) cannot be expressed as a symbolic dimension "
        "(sums, products and floor divisions of the program's Dims only)"
    )


def dims_of(value: torch.Tensor, names: Mapping[sympy.Symbol, str]) -> Dims:
    return tuple(dim_of(size, names) for size in value.shape)


def type_shape(dims: Sequence[Size]) -> tuple[int, ...]:
    """The graph type's shape of `dims`: `?` (DYNAMIC) for each symbolic one."""
    return tuple(DYNAMIC if is_symbolic(size) else int(size) for size in dims)


class SymbolicShapes:
    """The dims of every run-time value built so far, and the graph forms of reshapes, broadcasts and ranges to
    symbolic dims."""

    def __init__(self, builder: GraphBuilder):
        self.builder = builder
        self.dims: dict[SSAValue, Dims] = {}
        self.flattened: dict[SSAValue, SSAValue] = {}
        """A [lead0*lead1*..., m, k] value -> the [lead0, lead1, ..., m, k] value whose leading sizes it merges: the
        way back, which one reshape cannot take where they are symbolic, and the operand of products that keep the
        leading sizes apart (`aten_nn.linear_of_flattened`, `aten_nn.bmm`)."""
        self.broadcasts: dict[SSAValue, SSAValue] = {}
        """A value broadcast to symbolic sizes by carriers -> the value before (size 1 there), which a product's
        own broadcasting takes instead (`aten_nn.bmm`)."""
        self.constants = 0
        """How many constants `iota` has made (for their weights' names)."""

    def of(self, value: SSAValue) -> Dims:
        """A value's dims: recorded, or its static type's shape."""
        if value in self.dims:
            return self.dims[value]
        shape = shape_of(value)
        if DYNAMIC in shape:
            raise SymbolicShapeError(f"internal error: no dims recorded for a value of run-time shape {shape}")
        return shape

    def emit(self, dims: Sequence[Size], op: Any, *operands: Any, **attributes: Any) -> SSAValue:
        """A graph op whose result has `dims`, recorded where they are symbolic."""
        value = self.builder.emit(op, *operands, **attributes)
        if DYNAMIC in shape_of(value):
            self.dims[value] = tuple(dims)
        return value

    def reshape(self, value: SSAValue, dims: Sequence[Size]) -> SSAValue:
        """`value` reshaped to `dims`: one graph.reshape, or a chain of them with a transpose of size-1 axes
        (`onnx_symbolic_reshape`)."""
        source, dims = self.of(value), tuple(dims)
        if source == dims:
            return value
        if value in self.flattened and self.of(self.flattened[value]) == dims:
            return self.flattened[value]
        if math.prod(source) != math.prod(dims):
            raise SymbolicShapeError(f"reshapes {spelled(source)} to {spelled(dims)}, sizes that differ")
        steps = reshape_steps(source, dims)
        if steps is None:
            raise SymbolicShapeError(
                f"cannot reshape {spelled(source)} to {spelled(dims)}{symbols_note(dims)}: the target has "
                "more than one symbolic size the input lacks"
            )
        origin = value
        for step in steps:
            if step.perm is not None:
                value = self.emit(step.shape, graph.TransposeOp, value, list(step.perm))
                continue
            shape = type_shape(step.shape)
            target = reshape_spec(self.of(value), step.shape) if DYNAMIC in shape else None
            value = self.emit(step.shape, graph.ReshapeOp, value, shape, target)
        merged = len(source) - len(dims) + 1
        if merged > 1 and dims[1:] == source[merged:]:
            self.flattened[value] = origin
        return value

    def broadcast(self, value: SSAValue, dims: Sequence[Size]) -> SSAValue:
        """`value` numpy-broadcast to `dims`: graph.expand for its static growth, then graph.where with a carrier
        of each symbolic dim it lacks."""
        dims = tuple(dims)
        source = (1,) * (len(dims) - len(self.of(value))) + self.of(value)
        if len(source) > len(dims):
            raise SymbolicShapeError(f"cannot broadcast {spelled(source)} to {spelled(dims)}")
        staged: list[Size] = []
        carried: list[int] = []
        for axis, (have, want) in enumerate(zip(source, dims)):
            if have == want:
                staged.append(have)
            elif have != 1:
                raise SymbolicShapeError(
                    f"broadcasts {have} to {want}, sizes that agree only at run time{symbols_note([have, want])}"
                )
            elif is_symbolic(want):
                staged.append(1)
                carried.append(axis)
            else:
                staged.append(want)
        if tuple(staged) != self.of(value):
            value = self.emit(staged, graph.ExpandOp, value, type_shape(staged))
        if not carried:
            return value
        condition: SSAValue | None = None
        condition_dims: list[Size] = [1] * len(dims)
        for axis in carried:
            line = self.carrier(dims[axis], axis, len(dims))
            condition_dims[axis] = dims[axis]
            condition = line if condition is None else self.emit(condition_dims, graph.AndOp, condition, line)
        broadcast = self.emit(dims, graph.WhereOp, condition, value, value)
        self.broadcasts[broadcast] = value
        return broadcast

    def carrier(self, size: Dim, axis: int, rank: int) -> SSAValue:
        """A bool tensor of `rank` dims, all 1 but `axis`, which is `size`: a one-wide slice of a value that has
        that dim (an input, or a value computed from one)."""
        found = next(((v, k) for v, dims in self.dims.items() for k, d in enumerate(dims) if d == size), None)
        if found is None:
            raise SymbolicShapeError(f"no value has the size {size} to broadcast to{symbols_note([size])}")
        value, k = found
        rank_of = len(shape_of(value))
        picked_dims = [size if index == k else 1 for index in range(rank_of)]
        counts = type_shape(picked_dims)
        picked = self.emit(picked_dims, graph.SliceOp, value, [0] * rank_of, [1] * rank_of, counts)
        line = self.reshape(picked, [size if index == axis else 1 for index in range(rank)])
        return self.emit(self.of(line), graph.CastOp, line, i1)

    def iota(self, count: Size, start: int, step: int, element: np.dtype) -> SSAValue:
        """[start, start + step, ...] of `count` elements: a running sum of ones broadcast to `count`."""
        one = self._constant(1, element)
        value = self.emit((count,), graph.CumSumOp, self.broadcast(one, (count,)), 0, exclusive=True)
        for operand, op in ((step, graph.MulOp), (start, graph.AddOp)):
            if operand != (1 if op is graph.MulOp else 0):
                value = self.emit((count,), op, value, self._constant(operand, element))
        return value

    def _constant(self, number: int, element: np.dtype) -> SSAValue:
        self.constants += 1
        return self.builder.weight(f"iota.constant{self.constants}", np.array([number], element))
