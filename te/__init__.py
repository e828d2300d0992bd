"""Tensor expressions in Python, TVM's `te` API: `from minimlc import te`.

    A = te.placeholder((128, 784), name="A")
    W = te.placeholder((784, 64), name="W")
    k = te.reduce_axis((0, 784), name="k")
    Y = te.compute((128, 64), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="matmul")
    f = te.create_function([A, W, Y], name="dense")   # a func.func of te.compute ops
    minimlc.build(f)(a, w, y)                         # writes y

Expressions (`minimlc.te.expr`), tensors (`minimlc.te.tensor`), functions (`minimlc.te.functions`) and the emitter
of the `te` dialect (`minimlc.te.emit`). It builds IR above the compiler; `minimlc.build` (`driver/build.py`)
compiles it.
"""

from minimlc.te.emit import create_function, create_prim_func
from minimlc.te.expr import Expr, IterVar, TEError
from minimlc.te.functions import (
    abs,
    all,
    any,
    equal,
    exp,
    if_then_else,
    log,
    max,
    min,
    sigmoid,
    sqrt,
    sum,
    tanh,
)
from minimlc.te.tensor import Tensor, compute, const, placeholder, reduce_axis

__all__ = [
    "Expr",
    "IterVar",
    "TEError",
    "Tensor",
    "abs",
    "all",
    "any",
    "compute",
    "const",
    "create_function",
    "create_prim_func",
    "equal",
    "exp",
    "if_then_else",
    "log",
    "max",
    "min",
    "placeholder",
    "reduce_axis",
    "sigmoid",
    "sqrt",
    "sum",
    "tanh",
]
