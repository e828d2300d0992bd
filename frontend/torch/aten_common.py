"""What the ATen converters share: `AtenContext` (the builder, the values of the nodes converted so far, argument
binding by the op's schema, casts and scalars) and the errors a converter raises.

    def relu(ctx: AtenContext, node: fx.Node) -> SSAValue:
        return ctx.emit(graph.ReluOp, ctx.tensor(ctx.args(node)["self"], torch.float32))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import fx
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.graph_builder import GraphBuilder
from minimlc.frontend.onnx_errors import ModelImportError, UnsupportedFeatureError
from minimlc.frontend.onnx_ops import ELEMENT_TYPES
from minimlc.frontend.onnx_symbolic_dims import is_symbolic
from minimlc.frontend.torch.aten_symbolic import Dims, Size, SymbolicShapeError, SymbolicShapes, dims_of, type_shape

NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {
    torch.float32: np.dtype(np.float32),
    torch.float64: np.dtype(np.float64),
    torch.int8: np.dtype(np.int8),
    torch.int16: np.dtype(np.int16),
    torch.int32: np.dtype(np.int32),
    torch.int64: np.dtype(np.int64),
    torch.uint8: np.dtype(np.uint8),
    torch.bool: np.dtype(np.bool_),
}
"""The torch element types the importer takes, as numpy dtypes."""

Converted = SSAValue | tuple[SSAValue | None, ...]
"""What a converter gives: the node's value, or a tuple of them for an op of several results (None for a result the
importer does not compute, such as max pooling's indices)."""

Converter = Callable[["AtenContext", fx.Node], Converted]
SupportCheck = Callable[[fx.Node], str | None]
"""Says why a node of a converted op cannot be converted (a transposed convolution), or None."""


class AtenImportError(ModelImportError):
    """A node of the exported program cannot be converted (bad arguments, unsupported dtype, ...)."""


class UnsupportedAtenOpsError(UnsupportedFeatureError):
    """The program uses ATen ops the importer lacks; `.ops` maps each op to its nodes, as `name (file:line)`."""

    def __init__(self, ops: dict[str, list[str]]):
        self.ops = ops
        kinds = "op" if len(ops) == 1 else "ops"
        listing = "; ".join(f"{op}: {', '.join(nodes)}" for op, nodes in ops.items())
        super().__init__(f"exported program has {len(ops)} unsupported ATen {kinds}: {listing}")


def source_location(node: fx.Node) -> str | None:
    """The user's source line of `node` (the last frame of its stack trace) as `file:line`, or None."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


def bind(node: fx.Node) -> dict[str, Any]:
    """The node's arguments by the names of its op's schema, defaults filled in."""
    schema = node.target._schema  # type: ignore[union-attr]
    bound: dict[str, Any] = {}
    for index, argument in enumerate(schema.arguments):
        if index < len(node.args) and not argument.kwarg_only:
            bound[argument.name] = node.args[index]
        elif argument.name in node.kwargs:
            bound[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
    return bound


def meta(node: fx.Node) -> Any:
    """The node's example value (a FakeTensor, or a list of them)."""
    return node.meta["val"]


def static_shape(node: fx.Node) -> tuple[int, ...]:
    """The node's static shape from its example value; SymbolicShapeError where a size is symbolic."""
    shape = tuple(meta(node).shape)
    if not all(isinstance(size, int) for size in shape):
        raise SymbolicShapeError(f"needs the static shape of '{node.name}', which is {shape}")
    return shape  # type: ignore[return-value]


def float32_only(node: fx.Node) -> str | None:
    """A support check: the node's (first) result must be float32."""
    value = meta(node)
    dtype = (value[0] if isinstance(value, list | tuple) else value).dtype
    return None if dtype == torch.float32 else f"a {dtype} result (float32 only)"


def axis(dim: int, rank: int) -> int:
    """A torch dimension (maybe negative) as an axis in 0..rank-1 (a scalar's dim 0 or -1 as 0)."""
    return dim % max(rank, 1)


class AtenContext:
    """The state converters share: the builder and every node's converted value."""

    def __init__(self, builder: GraphBuilder, constants: dict[fx.Node, Any], names: dict[Any, str]):
        self.builder = builder
        self.values: dict[fx.Node, Converted] = {}
        self.constants = constants
        """Nodes evaluated at import time (creation ops and what only they feed), as real tensors."""
        self.names = names
        """The name of each size symbol of the program (a sympy symbol) as its `torch.export.Dim`."""
        self.sizes: dict[fx.Node, Size] = {}
        """Nodes that compute a size (`sym_size`, arithmetic on them), as the size: used only as sizes."""
        self.shapes = SymbolicShapes(builder)
        self.scalars = 0
        """How many scalar weights `filled` has made (for their names)."""

    def args(self, node: fx.Node) -> dict[str, Any]:
        return bind(node)

    def emit(self, op: type[IRDLOperation], *operands: Any, **attributes: Any) -> SSAValue:
        return self.builder.emit(op, *operands, **attributes)

    def value(self, arg: Any) -> SSAValue:
        """The graph value of a node (a constant one becomes a weight on first use)."""
        if not isinstance(arg, fx.Node):
            raise AtenImportError(f"expected a tensor, got {arg!r}")
        if arg in self.sizes:
            raise SymbolicShapeError(
                f"uses the size '{arg.name}' = {self.sizes[arg]} as a tensor: symbolic sizes are supported as "
                "shapes only"
            )
        if arg not in self.values and arg in self.constants:
            self.values[arg] = self.builder.weight(f"constant.{arg.name}", numpy_of(self.constants[arg]))
        value = self.values[arg]
        if not isinstance(value, SSAValue):
            raise AtenImportError(f"node '{arg.name}' has several results; expected one")
        return value

    def tensor(self, arg: Any, dtype: torch.dtype) -> SSAValue:
        """A node's value or a Python number, as a tensor of `dtype` (cast where it differs)."""
        if isinstance(arg, fx.Node):
            return self.cast(self.value(arg), dtype)
        return self.filled(arg, (), dtype)

    def cast(self, value: SSAValue, dtype: torch.dtype) -> SSAValue:
        element = element_of(dtype)
        if graph.element_type(value) == element:
            return value
        cast = self.emit(graph.CastOp, value, element)
        if value in self.shapes.dims:
            self.shapes.dims[cast] = self.shapes.dims[value]
        return cast

    def dims(self, node: fx.Node) -> Dims:
        """The node's shape from its example value: sizes, and expressions of the program's Dims."""
        return dims_of(meta(node), self.names)

    def filled(self, number: float | bool, shape: Sequence[Size], dtype: torch.dtype) -> SSAValue:
        """A tensor of `shape` (symbolic sizes broadcast to) and `dtype` whose every element is `number`."""
        if any(is_symbolic(size) for size in shape):
            return self.shapes.broadcast(self.filled(number, (), dtype), shape)
        if dtype == torch.float32:
            return self.emit(graph.ConstantOp, float(number), tuple(shape))
        scalar = np.array(number, dtype=numpy_dtype(dtype))
        self.scalars += 1
        handle = self.builder.weight(f"scalar{self.scalars}", scalar)
        return handle if not shape else self.emit(graph.ExpandOp, handle, tuple(shape))

    def reshape(self, value: SSAValue, shape: Sequence[Size]) -> SSAValue:
        """`value` reshaped to `shape` (with symbolic sizes: `SymbolicShapes.reshape`)."""
        if graph.DYNAMIC in shape_of(value) or any(is_symbolic(size) for size in shape):
            return self.shapes.reshape(value, shape)
        return value if shape_of(value) == tuple(shape) else self.emit(graph.ReshapeOp, value, tuple(shape))

    def record(self, value: SSAValue, dims: Dims) -> None:
        """Record the dims of a converted node's value of symbolic shape, checked against its example value's."""
        if graph.DYNAMIC not in shape_of(value) and not any(is_symbolic(size) for size in dims):
            return
        if shape_of(value) != type_shape(dims):
            raise AtenImportError(f"converted to shape {shape_of(value)}, the program's is {list(map(str, dims))}")
        self.shapes.dims[value] = dims


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    if dtype not in NUMPY_DTYPES:
        raise AtenImportError(f"element type {dtype} is not supported")
    return NUMPY_DTYPES[dtype]


def element_of(dtype: torch.dtype) -> Any:
    return ELEMENT_TYPES[numpy_dtype(dtype)]


def numpy_of(tensor: torch.Tensor) -> np.ndarray:
    """A tensor's data as a numpy array, sharing its memory where it is contiguous (an element type minimlc lacks
    is refused)."""
    numpy_dtype(tensor.dtype)
    return tensor.detach().contiguous().numpy()


def promoted(lhs: Any, rhs: Any) -> torch.dtype:
    """The dtype torch computes `lhs` and `rhs` (nodes with example tensors, Python numbers) in, by its promotion
    rules (a 0-d tensor or a number gives way to a tensor's kind; a size node counts as an integer)."""
    probes = [
        torch.empty((1,) * meta(a).dim(), dtype=meta(a).dtype) if _is_tensor(a) else 0 if isinstance(a, fx.Node) else a
        for a in (lhs, rhs)
    ]
    return torch.result_type(*probes)


def _is_tensor(arg: Any) -> bool:
    return isinstance(arg, fx.Node) and isinstance(meta(arg), torch.Tensor)
