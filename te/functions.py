"""Functions of the Python TE API: reducers (`te.sum`, `te.max`, `te.min`), elementwise `te.max(a, b)`/`te.min(a, b)`,
math (`te.exp`, `te.log`, `te.sqrt`, `te.tanh`, `te.sigmoid`, `te.abs`) and conditions (`te.if_then_else`,
`te.equal`, `te.all`, `te.any`), with TVM's names and semantics:

    te.sum(A[i, k] * B[k, j], axis=k)      # a reduction over k
    te.max(A[i, j], 0.0)                   # elementwise: ReLU
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce as fold

from minimlc.te.expr import Call, Expr, IterVar, Operand, TEError, binary, compare, lift, reduce, select

Axis = IterVar | Sequence[IterVar]


def _reducer(combiner: str, elementwise: str | None):
    def call(lhs: Operand, rhs: Operand | Axis | None = None, axis: Axis | None = None) -> Expr:
        if axis is None and isinstance(rhs, IterVar | list | tuple):
            rhs, axis = None, rhs
        if axis is not None:
            if rhs is not None:
                raise TEError(f"te.{combiner}: give either a second operand or axis=, not both")
            return reduce(combiner, lhs, axis)
        if elementwise is None or rhs is None:
            raise TEError(f"te.{combiner} needs axis= (a te.reduce_axis or a list of them)")
        return binary(elementwise, lhs, rhs)

    call.__name__ = combiner
    call.__doc__ = (
        f"te.{combiner}(expr, axis=k): the {combiner} of `expr` over the reduction axes `k` (a whole compute body)"
        + (f"; te.{combiner}(a, b): the elementwise {combiner}." if elementwise else ".")
    )
    return call


sum = _reducer("sum", None)  # noqa: A001 -- TVM's name
max = _reducer("max", "max")  # noqa: A001
min = _reducer("min", "min")  # noqa: A001


def _math(function: str):
    def call(x: Operand) -> Expr:
        operand = lift(x, "float32")
        if operand.dtype != "float32":
            raise TEError(f"te.{function} of a {operand.dtype} expression (float32 only)")
        return Call(function, operand, "float32")

    call.__name__ = function
    call.__doc__ = f"te.{function}(x), elementwise on a float32 expression."
    return call


exp = _math("exp")
log = _math("log")
sqrt = _math("sqrt")
tanh = _math("tanh")
sigmoid = _math("sigmoid")
abs = _math("abs")  # noqa: A001


def if_then_else(condition: Operand, then: Operand, otherwise: Operand) -> Expr:
    """`then` where `condition` holds, else `otherwise` (both are computed; reads stay in bounds)."""
    return select(condition, then, otherwise)


def equal(lhs: Operand, rhs: Operand) -> Expr:
    """`lhs == rhs` as a bool expression (Python's `==` compares expression objects)."""
    return compare("eq", lhs, rhs)


def all(*conditions: Operand) -> Expr:  # noqa: A001 -- TVM's tir.all
    """The conjunction of bool expressions."""
    return fold(lambda a, b: binary("and", a, b), conditions)


def any(*conditions: Operand) -> Expr:  # noqa: A001 -- TVM's tir.any
    """The disjunction of bool expressions."""
    return fold(lambda a, b: binary("or", a, b), conditions)
