"""What the built-in FX converters share: `FxContext` (the graph builder, the weights already added, scalars and
arrays as graph values) and shape helpers written like PyTorch's argument rules.

    ctx = FxContext(GraphBuilder())
    w = ctx.weight("linear0.weight", module.weight)       # added once however often it is used
    y = ctx.binary("add", x, 1.0)                          # a scalar operand becomes a graph.constant
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import Shape, shape_of
from minimlc.frontend.graph_builder import GraphBuilder
from minimlc.frontend.onnx_errors import ModelImportError
from minimlc.frontend.onnx_ops import dtype_of

_PYTHON_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "pow": operator.pow,
}


class TorchImportError(ModelImportError):
    """A traced model that cannot be imported as it is: a bad argument, a layer in training mode, a shape error."""


class FxContext:
    """The graph builder of one import and the weights it holds, by qualified name."""

    def __init__(self, bb: GraphBuilder) -> None:
        self.bb = bb
        self._weights: dict[str, SSAValue] = {}

    def weight(self, name: str, tensor: Any) -> SSAValue:
        """The `graph.weight` of a torch tensor (a parameter or buffer) or numpy array named `name`, added once."""
        if name not in self._weights:
            array = tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else np.asarray(tensor)
            self._weights[name] = self.bb.weight(name, array)
        return self._weights[name]

    def tensor(self, value: Any, like: SSAValue | None = None) -> SSAValue:
        """`value` as a graph value: a value as it is, an array or tensor as a weight, a Python number as a scalar of
        `like`'s element type (float32 without `like`)."""
        if isinstance(value, SSAValue):
            return value
        if isinstance(value, np.ndarray) or hasattr(value, "detach"):
            return self.weight(self._unused_name(), value)
        if isinstance(value, bool | int | float):
            element = graph.element_type(like) if like is not None else f32
            if element == f32:
                return self.bb.emit("constant", float(value), ())
            dtype = dtype_of(element)
            if np.issubdtype(dtype, np.integer) and not float(value).is_integer():
                raise TorchImportError(f"the scalar {value} cannot combine with a {dtype} tensor")
            return self.weight(self._unused_name(), np.array(value, dtype))
        raise TorchImportError(f"{value!r} (a {type(value).__name__}) is not a tensor or a number")

    def emit(self, op: str, *operands: Any, **attributes: Any) -> SSAValue:
        return self.bb.emit(op, *operands, **attributes)

    def binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        """Elementwise `op` (add, sub, mul, div, pow) broadcast as in PyTorch; of two Python numbers, their result."""
        if not isinstance(lhs, SSAValue) and not isinstance(rhs, SSAValue):
            return _PYTHON_BINARY[op](lhs, rhs)
        like = lhs if isinstance(lhs, SSAValue) else rhs
        left, right = self.tensor(lhs, like), self.tensor(rhs, like)
        if graph.element_type(left) != graph.element_type(right):
            raise TorchImportError(
                f"operands of {graph.element_type(left)} and {graph.element_type(right)} differ in element type"
            )
        if graph.broadcast_shapes(shape_of(left), shape_of(right)) is None:
            raise TorchImportError(f"shapes {shape_of(left)} and {shape_of(right)} do not broadcast")
        return self.emit(op, left, right)

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        return value if tuple(shape) == shape_of(value) else self.emit("reshape", value, tuple(shape))

    def _unused_name(self) -> str:
        index = len(self._weights)
        while f"constant{index}" in self._weights:
            index += 1
        return f"constant{index}"


def tensor_value(value: Any, what: str = "input") -> SSAValue:
    """`value`, which must be a tensor of the graph."""
    if not isinstance(value, SSAValue):
        raise TorchImportError(f"{what} must be a tensor, got {value!r}")
    return value


def normalise_dim(dim: int, rank: int) -> int:
    """A PyTorch dimension (negative from the end) in [0, rank)."""
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise TorchImportError(f"dimension {dim} is out of range for a tensor of rank {rank}")
    return dim % rank if rank else 0


def normalise_dims(dims: int | Sequence[int] | None, rank: int) -> list[int]:
    """Reduction dimensions: one, several, or every one (None or empty)."""
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return list(range(rank))
    listed = [dims] if isinstance(dims, int) else list(dims)
    return sorted({normalise_dim(dim, rank) for dim in listed})


def sizes(args: Sequence[Any]) -> list[int]:
    """A shape given as several ints (`view(2, -1)`) or one sequence (`view((2, -1))`)."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def resolved_shape(source: Shape, shape: Sequence[int]) -> tuple[int, ...]:
    """`shape` of `view`/`reshape` with its -1 resolved against the `source` shape's element count."""
    target = [int(size) for size in shape]
    count = math.prod(source)
    if target.count(-1) > 1 or any(size < -1 for size in target):
        raise TorchImportError(f"shape {target} may hold one -1 and otherwise sizes")
    if -1 in target:
        known = math.prod(size for size in target if size != -1)
        if known == 0 or count % known:
            raise TorchImportError(f"shape {target} is invalid for an input of shape {source}")
        target[target.index(-1)] = count // known
    if math.prod(target) != count:
        raise TorchImportError(f"shape {target} is invalid for an input of shape {source}")
    return tuple(target)


def pair(value: int | Sequence[int], count: int) -> list[int]:
    """An int or a sequence of `count` ints (PyTorch's `_pair`, `_single`) as a list."""
    values = [value] * count if isinstance(value, int) else list(value)
    if len(values) != count:
        raise TorchImportError(f"expected {count} values, got {value!r}")
    return values
