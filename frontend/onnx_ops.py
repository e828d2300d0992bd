"""ONNX op converters for `minimlc.frontend.onnx`, in `CONVERTERS`: the shared converter machinery, and the core ops
(linear algebra, elementwise arithmetic, comparison, logic and math, softmax, shapes, constants).

A converter is a function per ONNX op type, or an `Elementwise` row for an op that is one graph op. It takes a
`NodeContext`, the node's inputs in ONNX order (`None` for an omitted optional input) and the node's attributes
as keyword arguments with their ONNX defaults. It returns the value of the node's output (a tuple of them for
several outputs): an SSA value of the `graph` dialect, or a `ConstantValue` when the output is known at import
time. Converters check shapes and attributes and raise `NodeError`; the importer adds the node's name to the
message.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.builder import Builder
from xdsl.dialects.builtin import bf16, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import Shape, shape_of


class NodeError(Exception):
    """A node cannot be converted (bad attribute, operand or shape)."""


class UnsupportedNodeError(NodeError):
    """A valid node needs what minimlc lacks (data of an element type it does not compute on)."""


ELEMENT_TYPES: dict[np.dtype, Attribute] = {
    np.dtype(np.float32): f32,
    np.dtype(np.float64): f64,
    np.dtype(np.int8): i8,
    np.dtype(np.int16): i16,
    np.dtype(np.int32): i32,
    np.dtype(np.int64): i64,
    **{np.dtype(f"uint{element.width.data}"): element for element in graph.UNSIGNED},  # pyright: ignore
    np.dtype(np.bool_): i1,
    np.dtype(np.float16): f16,
    np.dtype(ml_dtypes.bfloat16): bf16,
    **{
        np.dtype(getattr(ml_dtypes, name)): element
        for name, element in zip(
            (*("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"), "int4", "uint4"),
            graph.STORAGE_ONLY,
        )
    },
    np.dtype(ml_dtypes.int2): graph.STORAGE_ONLY[7],
    np.dtype(ml_dtypes.uint2): graph.STORAGE_ONLY[8],
    np.dtype(ml_dtypes.float8_e8m0fnu): graph.STORAGE_ONLY[9],
}
"""The numpy dtypes of run-time tensors, and their graph element types (bool tensors are i1, one byte each; unsigned
integers `ui8`..`ui64`; float16 and bfloat16 are stored 16-bit and computed in float32; float8, float4 and 4- and
2-bit integers, one per byte as ml_dtypes stores them, are only cast and moved)."""


def dtype_of(element: Attribute) -> np.dtype:
    """The numpy dtype of a graph element type of `ELEMENT_TYPES`."""
    return next(dtype for dtype, known in ELEMENT_TYPES.items() if known == element)


@dataclass(frozen=True)
class ConstantValue:
    """A compile-time constant: an initializer or the output of a Constant node."""

    name: str
    array: np.ndarray


Value = SSAValue | ConstantValue


@dataclass(frozen=True)
class DataDependentValue:
    """An output whose extent along `axis` the data decides (NonZero, Compress, Unique): `bound` holds it at an
    upper bound, valid elements first, and `count` (a tensor<1xi64>) their number. Only a graph output may be one:
    the runtime trims it (`lowering/abi.py`); the importer refuses any node reading it."""

    bound: SSAValue
    count: SSAValue
    axis: int


@dataclass
class WeightStore:
    """Turns constants used as data operands into `graph.weight` handles, one per constant."""

    builder: Builder
    arrays: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray], init=False)
    _handles: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue], init=False)

    def handle(self, constant: ConstantValue, name_hint: str) -> SSAValue:
        """The `graph.weight` value of `constant`, created at its first use; under a name of its own if an earlier
        constant of other contents took its name (two converters naming their tables alike)."""
        name, array, copies = constant.name, constant.array, 1
        while name in self._handles:
            known = self.arrays[name]
            if known.shape == array.shape and known.dtype == array.dtype and _equal(known, array):
                return self._handles[name]
            copies, name = copies + 1, f"{constant.name}__{copies + 1}"
        if array.dtype not in ELEMENT_TYPES:
            allowed = ", ".join(map(str, ELEMENT_TYPES))
            raise UnsupportedNodeError(
                f"constant '{name}' has element type {array.dtype}, but data operands must be {allowed}"
            )
        op = graph.WeightOp(name, array.shape, ELEMENT_TYPES[array.dtype])
        op.result.name_hint = name_hint
        self.builder.insert(op)
        self.arrays[name] = np.asarray(array, order="C")
        self._handles[name] = op.result
        return op.result


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


@dataclass
class NodeContext:
    """What a converter may use: the node, its opset, and the builder of @main's body."""

    node: onnx.NodeProto
    opset: int
    builder: Builder
    weights: WeightStore
    index_checks: list[tuple[SSAValue, str]] = field(default_factory=list[tuple[SSAValue, str]])
    """Run-time index checks (`onnx_index_checks`): a `tensor<1xi64>` count of indices out of range, the range."""

    def data(self, value: Value) -> SSAValue:
        """`value` as a data operand: constants become weights."""
        if isinstance(value, SSAValue):
            return value
        return self.weights.handle(value, sanitise(value.name))

    def emit(self, op: Operation) -> SSAValue:
        """Insert `op` and return its single result."""
        return self.builder.insert(op).results[0]


def sanitise(name: str) -> str:
    """An SSA name hint derived from an ONNX name: [A-Za-z0-9_], not starting with a digit."""
    hint = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    return hint if hint and not hint[0].isdigit() else f"v{hint}"


def normalise_axis(axis: int, rank: int, *, inclusive: bool = False) -> int:
    """`axis` normalised to [0, rank) (or [0, rank] when `inclusive`)."""
    upper = rank + 1 if inclusive else rank
    if not -rank <= axis < upper:
        raise NodeError(f"axis {axis} is out of range for an input of rank {rank}")
    return axis + rank if axis < 0 else axis


def emit_reshape(ctx: NodeContext, value: SSAValue, shape: Shape) -> SSAValue:
    return ctx.emit(graph.ReshapeOp(value, shape))


def emit_binary(
    ctx: NodeContext, op: type[graph.ElementwiseBinaryOp], a: Value, b: Value
) -> SSAValue:
    lhs, rhs = ctx.data(a), ctx.data(b)
    if graph.element_type(lhs) != graph.element_type(rhs):  # invalid for most ops, valid for Pow
        raise UnsupportedNodeError(
            f"input element types {graph.element_type(lhs)} and {graph.element_type(rhs)} differ"
        )
    if graph.broadcast_shapes(shape_of(lhs), shape_of(rhs)) is None:
        raise NodeError(
            f"input shapes {shape_of(lhs)} and {shape_of(rhs)} are not broadcast-compatible"
        )
    return ctx.emit(op(lhs, rhs))


def as_text(value: str | bytes) -> str:
    """A string attribute as text (onnx gives bytes)."""
    return value.decode() if isinstance(value, bytes) else value


def scalar_parameter(value: Value | None, what: str) -> float | SSAValue | None:
    """A one-element parameter: a float when constant, else the runtime value (None when omitted)."""
    if value is None:
        return None
    if isinstance(value, ConstantValue):
        if value.array.size != 1:
            raise NodeError(f"{what} must hold one element, got shape {value.array.shape}")
        return float(value.array.reshape(()))
    if math.prod(shape_of(value)) != 1:
        raise NodeError(f"{what} must hold one element, got shape {shape_of(value)}")
    return value


@dataclass(frozen=True)
class Elementwise:
    """A converter as a table row: an ONNX op that is one elementwise graph op of its inputs (broadcast as numpy
    when binary), its float attributes (name -> ONNX default) passed to the op's constructor in this order."""

    op: type[graph.ElementwiseUnaryOp] | type[graph.ElementwiseBinaryOp]
    attributes: Mapping[str, float] = field(default_factory=dict[str, float])

    @property
    def __signature__(self) -> inspect.Signature:
        """What the importer checks a node against, as for a converter function: inputs, then attributes."""
        arity = 2 if issubclass(self.op, graph.ElementwiseBinaryOp) else 1
        parameter = inspect.Parameter
        return inspect.Signature(
            [
                parameter("ctx", parameter.POSITIONAL_OR_KEYWORD),
                *(parameter(f"X{i}", parameter.POSITIONAL_OR_KEYWORD) for i in range(arity)),
                *(parameter(name, parameter.KEYWORD_ONLY, default=v) for name, v in self.attributes.items()),
            ]
        )

    def __call__(self, ctx: NodeContext, *inputs: Value, **attributes: float) -> Value:
        values = list(inputs)
        if issubclass(self.op, graph.ElementwiseBinaryOp):
            return emit_binary(ctx, self.op, *values)
        parameters = [attributes.get(name, default) for name, default in self.attributes.items()]
        return ctx.emit(self.op(ctx.data(values[0]), *parameters))  # pyright: ignore[reportCallIssue]


def emit_softmax(
    ctx: NodeContext, op: type[graph.SoftmaxOp | graph.LogSoftmaxOp], input: Value, axis: int | None
) -> Value:
    """Softmax or LogSoftmax along `axis`; before opset 13, on the input coerced to 2-D at `axis`."""
    x = ctx.data(input)
    if graph.element_type(x) not in graph.FLOATS:
        raise UnsupportedNodeError(f"{ctx.node.op_type} of {graph.element_type(x)} is not supported, only of floats")
    shape = shape_of(x)
    if ctx.opset >= 13:
        return ctx.emit(op(x, normalise_axis(-1 if axis is None else axis, len(shape))))
    split = normalise_axis(1 if axis is None else axis, len(shape))
    coerced = (math.prod(shape[:split]), math.prod(shape[split:]))
    if coerced == shape:
        return ctx.emit(op(x, 1))
    y = ctx.emit(op(emit_reshape(ctx, x, coerced), 1))
    return emit_reshape(ctx, y, shape)


# Linear algebra


def Gemm(
    ctx: NodeContext,
    A: Value,
    B: Value,
    C: Value | None = None,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    transA: int = 0,
    transB: int = 0,
) -> Value:
    """`alpha * op(A) @ op(B) + beta * C` -> graph.gemm."""
    a, b = ctx.data(A), ctx.data(B)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise NodeError(f"A and B must be 2-D, got shapes {a_shape} and {b_shape}")
    m, k = a_shape[::-1] if transA else a_shape
    kb, n = b_shape[::-1] if transB else b_shape
    if k != kb:
        raise NodeError(f"inner dimensions differ: op(A) is {(m, k)} and op(B) is {(kb, n)}")
    c = None if C is None else ctx.data(C)
    if c is not None and (
        len(shape_of(c)) > 2 or graph.broadcast_shapes(shape_of(c), (m, n)) != (m, n)
    ):
        raise NodeError(f"C of shape {shape_of(c)} does not broadcast to the result shape {(m, n)}")
    op = graph.GemmOp(a, b, c, alpha=alpha, beta=beta, trans_a=bool(transA), trans_b=bool(transB))
    return ctx.emit(op)


def MatMul(ctx: NodeContext, A: Value, B: Value) -> Value:
    """Numpy matmul -> graph.matmul."""
    a, b = ctx.data(A), ctx.data(B)
    if graph.matmul_shape(shape_of(a), shape_of(b)) is None:
        raise NodeError(f"input shapes {shape_of(a)} and {shape_of(b)} are not matmul-compatible")
    return ctx.emit(graph.MatMulOp(a, b))


# Elementwise variadic (numpy broadcasting over all inputs)


def _chain(ctx: NodeContext, op: type[graph.ElementwiseBinaryOp], inputs: Sequence[Value]) -> Value:
    """`op` folded left over `inputs`; one input is returned as it is."""
    result = inputs[0]
    for value in inputs[1:]:
        result = emit_binary(ctx, op, result, value)
    return result


def Sum(ctx: NodeContext, *data_0: Value) -> Value:
    """Elementwise sum of all inputs -> a chain of graph.add."""
    return _chain(ctx, graph.AddOp, data_0)


def Mean(ctx: NodeContext, *data_0: Value) -> Value:
    """Elementwise mean of all inputs -> a chain of graph.add, then graph.div by the count."""
    count = ConstantValue(f"{ctx.node.output[0]}.count", np.array(len(data_0), dtype=np.float32))
    return emit_binary(ctx, graph.DivOp, _chain(ctx, graph.AddOp, data_0), count)


def Max(ctx: NodeContext, *data_0: Value) -> Value:
    """Elementwise maximum of all inputs -> a chain of graph.max."""
    return _chain(ctx, graph.MaxOp, data_0)


def Min(ctx: NodeContext, *data_0: Value) -> Value:
    """Elementwise minimum of all inputs -> a chain of graph.min."""
    return _chain(ctx, graph.MinOp, data_0)


# Normalisation


def Softmax(ctx: NodeContext, input: Value, *, axis: int | None = None) -> Value:
    """Softmax -> graph.softmax; before opset 13, on the input coerced to 2-D at `axis`."""
    return emit_softmax(ctx, graph.SoftmaxOp, input, axis)


# Shape manipulation


def Flatten(ctx: NodeContext, input: Value, *, axis: int = 1) -> Value:
    """Flatten to 2-D at `axis` -> graph.reshape."""
    x = ctx.data(input)
    shape = shape_of(x)
    split = normalise_axis(axis, len(shape), inclusive=True)
    return emit_reshape(ctx, x, (math.prod(shape[:split]), math.prod(shape[split:])))


def Reshape(ctx: NodeContext, data: Value, shape: Value, *, allowzero: int = 0) -> Value:
    """Reshape to a compile-time constant shape -> graph.reshape."""
    if not isinstance(shape, ConstantValue):
        raise NodeError(
            "the shape input must be a compile-time constant (an initializer or a Constant output)"
        )
    x = ctx.data(data)
    return emit_reshape(
        ctx, x, _reshape_target(shape_of(x), shape.array, allowzero=bool(allowzero))
    )


def _reshape_target(source: Shape, requested: np.ndarray, *, allowzero: bool) -> Shape:
    """ONNX Reshape's output shape: 0 copies the input dim (unless allowzero), -1 is inferred."""
    if requested.ndim != 1 or not np.issubdtype(requested.dtype, np.integer):
        kind = f"{requested.dtype} of shape {requested.shape}"
        raise NodeError(f"shape must be a 1-D integer tensor, got {kind}")
    wanted = [int(d) for d in requested]
    if allowzero and 0 in wanted and -1 in wanted:
        raise NodeError(f"shape {wanted} has both 0 and -1, which allowzero=1 forbids")
    if wanted.count(-1) > 1 or any(d < -1 for d in wanted):
        raise NodeError(f"shape {wanted} may hold at most one -1 and no other negative value")
    copied = [i for i, d in enumerate(wanted) if d == 0 and not allowzero]
    if copied and copied[-1] >= len(source):
        raise NodeError(
            f"shape {wanted} copies dimension {copied[-1]}, but the input has rank {len(source)}"
        )
    dims = [source[i] if i in copied else d for i, d in enumerate(wanted)]
    total = math.prod(source)
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or total % known:
            raise NodeError(f"cannot infer the -1 in shape {wanted} for an input of shape {source}")
        dims[dims.index(-1)] = total // known
    if math.prod(dims) != total:
        raise NodeError(
            f"cannot reshape an input of shape {source} ({total} elements) to {tuple(dims)}"
        )
    return tuple(dims)


def Transpose(ctx: NodeContext, data: Value, *, perm: Sequence[int] | None = None) -> Value:
    """Permute dimensions (default: reverse them) -> graph.transpose."""
    x = ctx.data(data)
    rank = len(shape_of(x))
    order = list(range(rank))[::-1] if perm is None else list(perm)
    if sorted(order) != list(range(rank)):
        raise NodeError(f"perm {order} is not a permutation of 0..{rank - 1}")
    return ctx.emit(graph.TransposeOp(x, order))


def Identity(ctx: NodeContext, input: Value) -> Value:
    """No op: the output names the input value."""
    return input


# Constants


def Constant(
    ctx: NodeContext,
    *,
    value: onnx.TensorProto | None = None,
    value_float: float | None = None,
    value_floats: Sequence[float] | None = None,
    value_int: int | None = None,
    value_ints: Sequence[int] | None = None,
) -> Value:
    """A compile-time constant; it becomes a graph.weight only where it is used as data."""
    given = [v for v in (value, value_float, value_floats, value_int, value_ints) if v is not None]
    if len(given) != 1:
        names = "value, value_float, value_floats, value_int, value_ints"
        raise NodeError(f"exactly one of the attributes {names} is required")
    if value is not None:
        array = numpy_helper.to_array(value)
    elif value_float is not None or value_floats is not None:
        array = np.array(value_float if value_floats is None else value_floats, dtype=np.float32)
    else:
        array = np.array(value_int if value_ints is None else value_ints, dtype=np.int64)
    return ConstantValue(ctx.node.output[0], array)


Converter = Callable[..., Value | tuple[Value, ...]]

CONVERTERS: dict[str, Converter] = {
    # linear algebra
    "Gemm": Gemm,
    "MatMul": MatMul,
    # elementwise binary
    "Add": Elementwise(graph.AddOp),
    "Sub": Elementwise(graph.SubOp),
    "Mul": Elementwise(graph.MulOp),
    "Div": Elementwise(graph.DivOp),
    # elementwise variadic
    "Sum": Sum,
    "Mean": Mean,
    "Max": Max,
    "Min": Min,
    # comparison and logic
    "Equal": Elementwise(graph.EqualOp),
    "Less": Elementwise(graph.LessOp),
    "LessOrEqual": Elementwise(graph.LessOrEqualOp),
    "Greater": Elementwise(graph.GreaterOp),
    "GreaterOrEqual": Elementwise(graph.GreaterOrEqualOp),
    "And": Elementwise(graph.AndOp),
    "Or": Elementwise(graph.OrOp),
    "Xor": Elementwise(graph.XorOp),
    "Not": Elementwise(graph.NotOp),
    # elementwise unary math
    "Tanh": Elementwise(graph.TanhOp),
    "Exp": Elementwise(graph.ExpOp),
    "Neg": Elementwise(graph.NegOp),
    "Abs": Elementwise(graph.AbsOp),
    "Sqrt": Elementwise(graph.SqrtOp),
    "Reciprocal": Elementwise(graph.ReciprocalOp),
    "Log": Elementwise(graph.LogOp),
    "Floor": Elementwise(graph.FloorOp),
    "Ceil": Elementwise(graph.CeilOp),
    "Round": Elementwise(graph.RoundOp),
    "Sign": Elementwise(graph.SignOp),
    "Erf": Elementwise(graph.ErfOp),
    "Sin": Elementwise(graph.SinOp),
    "Cos": Elementwise(graph.CosOp),
    "Tan": Elementwise(graph.TanOp),
    "Asin": Elementwise(graph.AsinOp),
    "Acos": Elementwise(graph.AcosOp),
    "Atan": Elementwise(graph.AtanOp),
    "Sinh": Elementwise(graph.SinhOp),
    "Cosh": Elementwise(graph.CoshOp),
    "Asinh": Elementwise(graph.AsinhOp),
    "Acosh": Elementwise(graph.AcoshOp),
    "Atanh": Elementwise(graph.AtanhOp),
    # normalisation
    "Softmax": Softmax,
    # shape manipulation
    "Flatten": Flatten,
    "Reshape": Reshape,
    "Transpose": Transpose,
    "Identity": Identity,
    # constants
    "Constant": Constant,
}
"""ONNX op type (default domain) -> converter: a function, or an `Elementwise` row."""
