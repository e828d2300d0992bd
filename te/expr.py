"""Scalar expressions of the Python TE API (TVM's `PrimExpr`): trees that `minimlc.te.emit` turns into te bodies.

An expression has a dtype: `float32`, `int32`, `int64`, `bool`, or `index` (loop indices and the arithmetic on them).
Python operators build nodes; a Python number next to an expression takes its dtype:

    A[i, k] * B[k, j] + 1.0        # Binary(add, Binary(mul, Read, Read), Const(1.0, float32))
    te.if_then_else(i < 4, A[i], 0.0)

Nodes are compared by identity (a node used twice is computed once in the body); `==` is Python's, so use
`te.equal(a, b)` for an equality test.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from minimlc.te.tensor import Tensor

DTYPES = ("float32", "int32", "int64", "bool", "index")
"""Element types an expression may have (`index`: loop indices; tensors hold the others)."""

Operand = Union["Expr", int, float, bool]


class TEError(ValueError):
    """A tensor expression that minimlc cannot build: a wrong dtype, shape, index count or axis."""


class Expr:
    """A scalar expression (TVM's `PrimExpr`); build it with operators, tensor reads and `minimlc.te` functions."""

    dtype: str

    def __add__(self, other: Operand) -> Expr:
        return binary("add", self, other)

    def __radd__(self, other: Operand) -> Expr:
        return binary("add", other, self)

    def __sub__(self, other: Operand) -> Expr:
        return binary("sub", self, other)

    def __rsub__(self, other: Operand) -> Expr:
        return binary("sub", other, self)

    def __mul__(self, other: Operand) -> Expr:
        return binary("mul", self, other)

    def __rmul__(self, other: Operand) -> Expr:
        return binary("mul", other, self)

    def __truediv__(self, other: Operand) -> Expr:
        return binary("div", self, other)

    def __rtruediv__(self, other: Operand) -> Expr:
        return binary("div", other, self)

    def __floordiv__(self, other: Operand) -> Expr:
        return binary("floordiv", self, other)

    def __rfloordiv__(self, other: Operand) -> Expr:
        return binary("floordiv", other, self)

    def __mod__(self, other: Operand) -> Expr:
        return binary("floormod", self, other)

    def __rmod__(self, other: Operand) -> Expr:
        return binary("floormod", other, self)

    def __neg__(self) -> Expr:
        return binary("sub", 0, self)

    def __lt__(self, other: Operand) -> Expr:
        return compare("lt", self, other)

    def __le__(self, other: Operand) -> Expr:
        return compare("le", self, other)

    def __gt__(self, other: Operand) -> Expr:
        return compare("gt", self, other)

    def __ge__(self, other: Operand) -> Expr:
        return compare("ge", self, other)

    def __and__(self, other: Operand) -> Expr:
        return binary("and", self, other)

    def __or__(self, other: Operand) -> Expr:
        return binary("or", self, other)

    def __bool__(self) -> bool:
        raise TEError("a tensor expression has no truth value; use te.if_then_else(cond, a, b) instead of if/and/or")

    def astype(self, dtype: str) -> Expr:
        """This expression converted to `dtype` (`i.astype("float32")`)."""
        check_dtype(dtype)
        return self if dtype == self.dtype else Cast(dtype, self)


@dataclass(eq=False)
class IterVar(Expr):
    """A loop index: a compute's axis (`lambda i, j`) or a reduction axis (`te.reduce_axis((0, 784), name="k")`)
    over [start, stop)."""

    name: str
    start: int
    stop: int
    reduce: bool
    dtype: str = field(default="index", init=False)

    @property
    def extent(self) -> int:
        return self.stop - self.start

    @property
    def dom(self) -> tuple[int, int]:
        """(start, extent), as TVM's `IterVar.dom` gives min and extent."""
        return self.start, self.extent


@dataclass(eq=False)
class Const(Expr):
    """A literal of `dtype` (`te.const(1.0)`)."""

    value: int | float | bool
    dtype: str


@dataclass(eq=False)
class Read(Expr):
    """`tensor[indices]`: one element of a placeholder or of a compute."""

    tensor: Tensor
    indices: tuple[Expr, ...]
    dtype: str


@dataclass(eq=False)
class Binary(Expr):
    """`lhs op rhs` with op one of add, sub, mul, div, floordiv, floormod, max, min, and, or; both of `dtype`."""

    op: str
    lhs: Expr
    rhs: Expr
    dtype: str


@dataclass(eq=False)
class Compare(Expr):
    """`lhs op rhs` with op one of lt, le, gt, ge, eq, ne: a bool."""

    op: str
    lhs: Expr
    rhs: Expr
    dtype: str = field(default="bool", init=False)


@dataclass(eq=False)
class Call(Expr):
    """A math function of a float: exp, log, sqrt, tanh, sigmoid, abs."""

    function: str
    operand: Expr
    dtype: str


@dataclass(eq=False)
class Select(Expr):
    """`te.if_then_else(condition, then, otherwise)`."""

    condition: Expr
    then: Expr
    otherwise: Expr
    dtype: str


@dataclass(eq=False)
class Cast(Expr):
    """`operand.astype(dtype)`."""

    dtype: str
    operand: Expr


@dataclass(eq=False)
class Reduce(Expr):
    """`te.sum(source, axis=[k, ...])` (or max, min): the whole body of a reducing compute, as in TVM."""

    combiner: str
    source: Expr
    axes: tuple[IterVar, ...]
    dtype: str


ARITHMETIC = ("add", "sub", "mul", "max", "min")
INTEGER_ONLY = ("floordiv", "floormod")
BOOL_ONLY = ("and", "or")


def check_dtype(dtype: str) -> None:
    if dtype not in DTYPES:
        raise TEError(f"unsupported dtype '{dtype}' (supported: {', '.join(DTYPES)})")


def lift(value: Operand, dtype: str) -> Expr:
    """`value` as an expression; a Python number becomes a constant of `dtype` (the other operand's)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or dtype == "bool":
        return Const(bool(value), "bool")
    if isinstance(value, int | float):
        if dtype in ("index", "int32", "int64") and not float(value).is_integer():
            raise TEError(f"the float {value} cannot be used as an {dtype} expression; cast one side with astype")
        return Const(value if dtype == "float32" else int(value), dtype)
    raise TEError(f"{value!r} (a {type(value).__name__}) is not a tensor expression or a number")


def _operands(lhs: Operand, rhs: Operand, op: str) -> tuple[Expr, Expr]:
    dtype = lhs.dtype if isinstance(lhs, Expr) else rhs.dtype if isinstance(rhs, Expr) else "float32"
    if not isinstance(lhs, Expr) and not isinstance(rhs, Expr) and isinstance(lhs, int) and isinstance(rhs, int):
        dtype = "index"
    left, right = lift(lhs, dtype), lift(rhs, dtype)
    if left.dtype != right.dtype:
        raise TEError(
            f"'{op}' of a {left.dtype} and a {right.dtype} expression; convert one with .astype('{right.dtype}')"
        )
    return left, right


def binary(op: str, lhs: Operand, rhs: Operand) -> Expr:
    left, right = _operands(lhs, rhs, op)
    dtype = left.dtype
    if op in BOOL_ONLY and dtype != "bool":
        raise TEError(f"'{op}' needs bool operands, got {dtype}")
    if op not in BOOL_ONLY and dtype == "bool":
        raise TEError(f"'{op}' of bool expressions; use & and | on conditions")
    if op in INTEGER_ONLY and dtype == "float32":
        raise TEError(f"'{op}' of float32 expressions; use / for float division")
    if op == "div" and dtype != "float32":
        raise TEError(f"'/' of {dtype} expressions; use // (floor division) for integers")
    if op in INTEGER_ONLY and isinstance(right, Const) and right.value == 0:
        raise TEError(f"'{op}' by the constant 0")
    return Binary(op, left, right, dtype)


def compare(op: str, lhs: Operand, rhs: Operand) -> Expr:
    left, right = _operands(lhs, rhs, op)
    if left.dtype == "bool":
        raise TEError(f"'{op}' of bool expressions")
    return Compare(op, left, right)


def select(condition: Operand, then: Operand, otherwise: Operand) -> Expr:
    """`then` where `condition` holds, else `otherwise` (TVM's `te.if_then_else`); both branches must have one
    dtype (a Python number takes the other branch's)."""
    cond = lift(condition, "bool")
    if cond.dtype != "bool":
        raise TEError(f"te.if_then_else: the condition is a {cond.dtype} expression, not a bool (compare it)")
    left, right = _operands(then, otherwise, "if_then_else")
    return Select(cond, left, right, left.dtype)


def reduce(combiner: str, source: Operand, axis: IterVar | Sequence[IterVar]) -> Expr:
    axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
    if not axes:
        raise TEError(f"te.{combiner}: no reduction axis given")
    for candidate in axes:
        if not isinstance(candidate, IterVar) or not candidate.reduce:
            raise TEError(f"te.{combiner}: axis {candidate!r} is not a te.reduce_axis")
    if len(set(map(id, axes))) != len(axes):
        raise TEError(f"te.{combiner}: an axis is given twice")
    value = lift(source, "float32")
    if value.dtype in ("bool", "index"):
        raise TEError(f"te.{combiner} of a {value.dtype} expression")
    return Reduce(combiner, value, axes, value.dtype)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The operands of a node (none for an index, a constant)."""
    if isinstance(expr, Read):
        return expr.indices
    if isinstance(expr, Binary | Compare):
        return (expr.lhs, expr.rhs)
    if isinstance(expr, Call | Cast):
        return (expr.operand,)
    if isinstance(expr, Select):
        return (expr.condition, expr.then, expr.otherwise)
    if isinstance(expr, Reduce):
        return (expr.source,)
    return ()


def nodes(*roots: Expr) -> Iterator[Expr]:
    """Every node under `roots`, each once (a shared subexpression is one node), roots included:
    `[e.name for e in nodes(a[i] + a[i]) if isinstance(e, IterVar)] == ["i"]`."""
    stack = list(roots)
    seen: set[int] = set()
    while stack:
        expr = stack.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        yield expr
        stack.extend(children(expr))


def index_range(expr: Expr) -> tuple[int, int] | None:
    """The smallest and largest value an index expression can take, or None if unknown (reads are clamped then)."""
    if isinstance(expr, IterVar):
        return expr.start, expr.stop - 1
    if isinstance(expr, Const) and expr.dtype == "index":
        return int(expr.value), int(expr.value)
    if isinstance(expr, Binary) and expr.op in ("add", "sub", "mul", "max", "min"):
        lhs, rhs = index_range(expr.lhs), index_range(expr.rhs)
        if lhs is None or rhs is None:
            return None
        if expr.op == "add":
            return lhs[0] + rhs[0], lhs[1] + rhs[1]
        if expr.op == "sub":
            return lhs[0] - rhs[1], lhs[1] - rhs[0]
        if expr.op == "max":
            return max(lhs[0], rhs[0]), max(lhs[1], rhs[1])
        if expr.op == "min":
            return min(lhs[0], rhs[0]), min(lhs[1], rhs[1])
        products = [a * b for a in lhs for b in rhs]
        return min(products), max(products)
    if isinstance(expr, Binary) and expr.op in INTEGER_ONLY and isinstance(expr.rhs, Const):
        lhs, divisor = index_range(expr.lhs), int(expr.rhs.value)
        if lhs is None or divisor <= 0:
            return None
        return (lhs[0] // divisor, lhs[1] // divisor) if expr.op == "floordiv" else (0, divisor - 1)
    return None
