"""Symbolic shape inference for `import_model(model, symbolic=True)`: each run-time value's dimensions as exact
expressions (`onnx_symbolic_dims.Dim`), and shape tensors whose elements are symbolic (`ShapeValue`).

    x [batch, sequence, 768] -> Shape, Slice 0:2 -> [batch, sequence] (a ShapeValue)
        -> Concat with [12, 64] -> [batch, sequence, 12, 64]
        -> Reshape of x: graph.reshape %x {shape = array<i64: 0, 0, 12, 64>}
           : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>

A ShapeValue is evaluated through the ops that compute shapes (`SHAPE_OPS`: Gather, Slice, Concat, Unsqueeze,
Squeeze, Cast, Abs, Add, Sub, Mul, Div, Equal, Where, ...); one that ends up all integers is a plain constant. Its
consumers (Reshape, Expand, ConstantOfShape, Range, Slice, Tile) are rewritten into static graph forms by
`onnx_symbolic_rewrites`: Reshape targets with 0 (copy) and -1 (the rest), broadcasts to an input's dimensions,
slices to the end. Every other node is converted as usual and its result types checked against the dimensions
inferred here (`infer_dims`): a `?` exactly where a dimension is symbolic. What cannot be expressed raises
`ModelImportError` naming the node, the op and the symbol; the runtime then compiles per input shapes instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from minimlc.dialects.graph import DYNAMIC, GraphOp, shape_of
from minimlc.frontend.onnx_errors import ModelImportError
from minimlc.frontend.onnx_ops import ConstantValue
from minimlc.frontend.onnx_symbolic_dims import Dim, ceil_div, floor_div, is_symbolic

Size = int | Dim
Dims = tuple[Size, ...]


@dataclass(frozen=True)
class ShapeValue:
    """An integer tensor computed from shapes, some elements symbolic: `elements` is an object array of ints and
    Dims (a Shape's output, or a value computed from one)."""

    name: str
    elements: np.ndarray

    @property
    def symbols(self) -> list[str]:
        return list(dict.fromkeys(s for e in self.elements.flat if is_symbolic(e) for s in e.symbols))


class SymbolicRefusal(ModelImportError):
    """A node that the symbolic import cannot express; the message names the node, op and symbol."""


def refuse(label: str, reason: str, symbols: Sequence[str] = ()) -> SymbolicRefusal:
    """The error for `label` (`node 'x' (Reshape)`), naming the symbols involved."""
    named = f" (symbols {', '.join(repr(s) for s in dict.fromkeys(symbols))})" if symbols else ""
    return SymbolicRefusal(f"{label}: cannot be imported with symbolic dimensions{named}: {reason}")


def symbols_of(values: Sequence[Size]) -> list[str]:
    return list(dict.fromkeys(s for v in values if isinstance(v, Dim) for s in v.symbols))


def type_shape(dims: Dims) -> tuple[int, ...]:
    """The graph type's shape of `dims`: `?` (DYNAMIC) for each symbolic one."""
    return tuple(DYNAMIC if is_symbolic(d) else int(d) for d in dims)


def elements_of(value: ShapeValue | ConstantValue | None) -> np.ndarray | None:
    """A shape computation's operand as an object array of ints and Dims (None for an omitted input)."""
    if value is None:
        return None
    if isinstance(value, ShapeValue):
        return value.elements
    if value.array.dtype.kind not in "iub":
        raise TypeError(f"a {value.array.dtype} constant in a shape computation")
    return value.array.astype(np.int64).astype(object)


def shape_result(name: str, elements: np.ndarray) -> ShapeValue | ConstantValue:
    """A ShapeValue, or a plain int64 constant when no element is symbolic."""
    elements = np.asarray(elements, dtype=object)
    if any(is_symbolic(e) for e in elements.flat):
        return ShapeValue(name, elements)
    return ConstantValue(name, elements.astype(np.int64))


# --- Shape computations -----------------------------------------------------------------------------------------


def _axes(node: onnx.NodeProto, attributes: dict[str, Any], given: np.ndarray | None) -> list[int] | None:
    if given is not None:
        return [int(a) for a in given.flat]
    return list(attributes["axes"]) if "axes" in attributes else None


def _normalised(axes: Sequence[int], rank: int) -> list[int]:
    return sorted(a + rank if a < 0 else a for a in axes)


def _gather(node, attrs, data, indices):
    axis = attrs.get("axis", 0)
    picked = np.asarray(indices.astype(np.int64))
    extent = data.shape[axis]
    return np.take(data, np.where(picked < 0, picked + extent, picked), axis=axis)


def _slice(node, attrs, data, starts, ends, axes=None, steps=None):
    if any(is_symbolic(e) for e in (*starts.flat, *ends.flat)):
        raise TypeError("symbolic bounds of a slice of a shape")
    axes_list = list(range(len(starts))) if axes is None else [int(a) % data.ndim for a in axes.flat]
    index = [slice(None)] * data.ndim
    for n, axis in enumerate(axes_list):
        step = 1 if steps is None else int(steps.flat[n])
        index[axis] = slice(int(starts.flat[n]), int(ends.flat[n]), step)
    return data[tuple(index)]


def _unsqueeze(node, attrs, data, axes=None):
    listed = _axes(node, attrs, axes)
    result = data
    for axis in _normalised(listed or [], data.ndim + len(listed or [])):
        result = np.expand_dims(result, axis)
    return result


def _squeeze(node, attrs, data, axes=None):
    listed = _axes(node, attrs, axes)
    if listed is None:
        return data.reshape([d for d in data.shape if d != 1])
    return np.squeeze(data, axis=tuple(_normalised(listed, data.ndim)))


def _cast(node, attrs, data):
    if not np.issubdtype(helper.tensor_dtype_to_np_dtype(attrs["to"]), np.integer):
        raise TypeError(f"a cast of a shape to {onnx.TensorProto.DataType.Name(attrs['to'])}")
    return data


def _divide(a: Size, b: Size) -> Size:
    if isinstance(a, int) and isinstance(b, int):
        return int(a / b) if b else 0  # ONNX's integer division truncates (shapes are non-negative)
    return floor_div(a, b)


def _equal(a: Size, b: Size) -> bool:
    if a == b:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return False
    constant = a if isinstance(a, int) else b if isinstance(b, int) else None
    if constant is not None and constant < 0:
        return False  # a dimension is never negative
    raise TypeError(f"whether {a} equals {b} is known only at run time")


def _absolute(node, attrs, data):
    return np.asarray(np.frompyfunc(lambda d: d if is_symbolic(d) else abs(d), 1, 1)(data), dtype=object)


def _where(node, attrs, condition, x, y):
    return np.where(condition.astype(bool), x, y)


def _reshape(node, attrs, data, shape):
    wanted = [int(d) for d in shape.flat]
    return data.reshape([data.shape[i] if d == 0 else d for i, d in enumerate(wanted)])


def _elementwise(function: Callable[[Size, Size], Any]) -> Callable[..., np.ndarray]:
    vectorised = np.frompyfunc(function, 2, 1)
    return lambda node, attrs, a, b: np.asarray(vectorised(a, b), dtype=object)


SHAPE_OPS: dict[str, Callable[..., np.ndarray]] = {
    "Gather": _gather,
    "Slice": _slice,
    "Concat": lambda node, attrs, *parts: np.concatenate(parts, axis=attrs.get("axis", 0)),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Cast": _cast,
    "Identity": lambda node, attrs, data: data,
    "Abs": _absolute,  # torchlib's expand: Abs turns expand(batch, -1, -1)'s -1s into ONNX's 1s; sizes are >= 0
    "Add": _elementwise(lambda a, b: a + b),
    "Sub": _elementwise(lambda a, b: a - b),
    "Mul": _elementwise(lambda a, b: a * b),
    "Div": _elementwise(_divide),
    "Equal": _elementwise(_equal),
    "Where": _where,
    "Reshape": _reshape,
}
"""Ops evaluated on shape values: (node, attributes, *inputs as object arrays) -> the output's elements."""


def evaluate_shape_op(node: onnx.NodeProto, label: str, inputs: Sequence[ShapeValue | ConstantValue | None]):
    """The output of a `SHAPE_OPS` node over shape values and constants."""
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    symbols = [s for value in inputs if isinstance(value, ShapeValue) for s in value.symbols]
    try:
        elements = SHAPE_OPS[node.op_type](node, attributes, *(elements_of(value) for value in inputs))
    except (TypeError, ValueError, IndexError, ZeroDivisionError) as error:
        raise refuse(label, f"cannot compute the shape values ({error})", symbols) from error
    return shape_result(node.output[0], elements)


def shape_of_dims(node: onnx.NodeProto, dims: Dims) -> ShapeValue | ConstantValue:
    """ONNX Shape (with `start`, `end`) or Size of a value of `dims`."""
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Size":
        total: Size = 1
        for d in dims:
            total = total * d
        return shape_result(node.output[0], np.array(total, dtype=object))
    start, end = attributes.get("start", 0), attributes.get("end", len(dims))
    selected = list(dims)[slice(start, end)]
    return shape_result(node.output[0], np.array([*selected, 0], dtype=object)[:-1])


# --- Inference of converted nodes' result dimensions ---------------------------------------------------------------


def broadcast_dims(*shapes: Dims) -> Dims | None:
    """Numpy broadcasting of symbolic shapes: 1 gives way, equal expressions agree; None if a symbol meets another
    size (its agreement is not known statically)."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[Size] = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _matmul(a: Dims, b: Dims) -> Dims | None:
    left = (1, *a) if len(a) == 1 else a
    right = (*b, 1) if len(b) == 1 else b
    batch = broadcast_dims(left[:-2], right[:-2])
    if batch is None:
        return None
    dims = (*batch, left[-2], right[-1])
    if len(a) == 1:
        dims = dims[:-2] + dims[-1:]
    return dims[:-1] if len(b) == 1 else dims


def _reduced(dims: Dims, attributes: dict[str, Any], axes: np.ndarray | None, keep_default: int = 1) -> Dims:
    keep = attributes.get("keepdims", keep_default)
    listed = _axes_value(attributes, axes)
    chosen = set(range(len(dims))) if listed is None else set(_normalised(listed, len(dims)))
    return tuple(1 if i in chosen else d for i, d in enumerate(dims) if keep or i not in chosen)


def _split(node: onnx.NodeProto, dims: Dims, sizes: Any, attributes: dict[str, Any]) -> list[Dims | None]:
    """Split of a static axis: each output the input's dimensions with that axis cut to its size."""
    axis = attributes.get("axis", 0) % len(dims)
    extent = dims[axis]
    if is_symbolic(extent):
        return [None] * len(node.output)
    if isinstance(sizes, np.ndarray):
        parts = [int(n) for n in sizes.flat]
    elif "split" in attributes:
        parts = list(attributes["split"])
    else:
        step = -(-int(extent) // len(node.output))
        parts = [min(step, int(extent) - step * n) for n in range(len(node.output))]
    return [(*dims[:axis], part, *dims[axis + 1 :]) for part in parts]


def _axes_value(attributes: dict[str, Any], axes: np.ndarray | None) -> list[int] | None:
    if axes is not None:
        return [int(a) for a in axes.flat] or None
    return list(attributes["axes"]) if "axes" in attributes else None


def infer_dims(
    node: onnx.NodeProto, inputs: Sequence[Dims | np.ndarray | None], attributes: dict[str, Any]
) -> list[Dims | None]:
    """The dimensions of the outputs of a converted `node` given its inputs' (a tuple for a run-time value, the
    array for a constant); None where no rule knows (then the types must be static)."""
    shapes: list[Dims | None] = [
        value if isinstance(value, tuple) else (tuple(value.shape) if isinstance(value, np.ndarray) else None)
        for value in inputs
    ]
    op = node.op_type
    present = [s for s in shapes if s is not None]
    if op == "MatMul" and len(present) == 2:
        return [_matmul(shapes[0], shapes[1])]  # type: ignore[arg-type]
    if op == "MatMulNBits" and shapes[0] is not None:  # com.microsoft: A [..., K] -> [..., N]
        return [(*shapes[0][:-1], attributes["N"])]
    if op == "Gemm":
        a, b = shapes[0], shapes[1]
        m = a[1] if attributes.get("transA") else a[0]  # type: ignore[index]
        n = b[0] if attributes.get("transB") else b[1]  # type: ignore[index]
        return [(m, n)]
    if op == "Transpose":
        perm = attributes.get("perm") or list(reversed(range(len(shapes[0]))))  # type: ignore[arg-type]
        return [tuple(shapes[0][p] for p in perm)]  # type: ignore[index]
    if op == "Gather" and shapes[0] is not None and shapes[1] is not None:
        axis = attributes.get("axis", 0) % len(shapes[0])
        return [(*shapes[0][:axis], *shapes[1], *shapes[0][axis + 1 :])]
    if op.startswith("Reduce") or op in ("ArgMax", "ArgMin"):
        axes_input = inputs[1] if len(inputs) > 1 and isinstance(inputs[1], np.ndarray) else None
        if op in ("ArgMax", "ArgMin"):
            attributes = {"axes": [attributes.get("axis", 0)], "keepdims": attributes.get("keepdims", 1)}
        return [_reduced(shapes[0], attributes, axes_input)]  # type: ignore[arg-type]
    if op == "Concat":
        axis = attributes["axis"] % len(present[0])
        total: Size = 0
        for s in present:
            total = total + s[axis]
        others = broadcast_dims(*((*s[:axis], 1, *s[axis + 1 :]) for s in present))
        return [None if others is None else (*others[:axis], total, *others[axis + 1 :])]
    if op == "Split" and shapes[0] is not None:
        return _split(node, shapes[0], inputs[1] if len(inputs) > 1 else None, attributes)
    if op in LEADING_BATCH_OPS:
        return [LEADING]  # the batch (axis 0) of the first input, the rest static
    return [broadcast_dims(*present)] if present else [None]


LEADING_BATCH_OPS = frozenset(
    {
        "Conv",
        "ConvTranspose",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "LpPool",
        "BatchNormalization",
        "Pad",
    }
)
LEADING: Dims = ("leading",)  # type: ignore[assignment]
"""The marker of an output whose axis 0 is the first input's axis 0 and whose other axes are static."""


def check_result_dims(label: str, value: SSAValue, dims: Dims | None, first_input: Dims | None) -> Dims:
    """The dimensions of a converted node's result `value`, checked against its type: `dims` as inferred (None:
    none inferred, the type must be static). Raises `SymbolicRefusal` where the type disagrees."""
    shape = shape_of(value)
    if dims == LEADING and first_input:
        dims = (first_input[0], *shape[1:])
    if dims is None or dims == LEADING:
        if DYNAMIC in shape:
            reason = f"no symbolic shape rule gives its result {_spelled(shape)}"
            raise refuse(label, reason, symbols_of(first_input or ()))
        return tuple(shape)
    if len(dims) == len(shape) and all(
        (d == DYNAMIC) == is_symbolic(s) and (d == DYNAMIC or d == s) for d, s in zip(shape, dims)
    ):
        return dims
    raise refuse(
        label, f"its result type {_spelled(shape)} does not match the inferred shape {list(map(str, dims))}",
        symbols_of(dims),
    )


def refuse_static_only(label: str, built: Iterable[Operation]) -> None:
    """Refuse node `label` if an op its converter `built` has a `?` in its types but takes only static shapes
    (`graph.GraphOp.RUN_TIME_DIMS`): Hardmax of a [batch, 8] input builds a graph.one_hot, which has none."""
    for op in built:
        if isinstance(op, GraphOp) and not op.RUN_TIME_DIMS:
            shapes = [shape_of(v) for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
            if any(DYNAMIC in shape for shape in shapes):
                raise refuse(label, f"'{op.name}' takes only static shapes")


def _spelled(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


__all__ = [
    "Dim",
    "ShapeValue",
    "SymbolicRefusal",
    "broadcast_dims",
    "ceil_div",
    "check_result_dims",
    "evaluate_shape_op",
    "infer_dims",
    "shape_of_dims",
]
