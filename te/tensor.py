"""Tensors of the Python TE API: `te.placeholder` (a function argument) and `te.compute` (a tensor defined by an
expression of its indices), as in TVM:

    A = te.placeholder((4, 8), dtype="float32", name="A")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((4, 4), lambda i, j: te.sum(A[i, k] * A[j, k], axis=k), name="C")
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from minimlc.te.expr import Const, Expr, IterVar, Operand, Read, Reduce, TEError, check_dtype, children, lift, nodes

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(eq=False)
class Tensor:
    """A placeholder or a computed tensor; `T[i, j]` reads one element (an expression)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    axes: tuple[IterVar, ...] = ()
    """A compute's output indices (empty for a placeholder)."""
    body: Expr | None = field(default=None, repr=False)
    """A compute's element (None for a placeholder)."""

    @property
    def is_placeholder(self) -> bool:
        return self.body is None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def op(self) -> Tensor:
        """TVM's `tensor.op`; here the tensor itself (it carries its axes and body)."""
        return self

    @property
    def axis(self) -> tuple[IterVar, ...]:
        """The output indices of a compute (TVM's `C.op.axis`)."""
        return self.axes

    @property
    def reduce_axis(self) -> tuple[IterVar, ...]:
        """The reduction axes of a compute (TVM's `C.op.reduce_axis`)."""
        return self.body.axes if isinstance(self.body, Reduce) else ()

    def __getitem__(self, indices: Operand | tuple[Operand, ...]) -> Expr:
        items = indices if isinstance(indices, tuple) else (indices,)
        if len(items) != len(self.shape):
            raise TEError(f"tensor '{self.name}' has {len(self.shape)} dimensions, indexed with {len(items)}")
        lifted = tuple(lift(index, "index") for index in items)
        for position, index in enumerate(lifted):
            if index.dtype != "index":
                raise TEError(
                    f"tensor '{self.name}': index {position} is a {index.dtype} expression; indices are loop indices "
                    "and integer arithmetic on them"
                )
        return Read(self, lifted, self.dtype)

    def __call__(self, *indices: Operand) -> Expr:
        """`A(i, j)` is `A[i, j]`, as in TVM (`lambda *i: A(*i)`)."""
        return self[indices]

    def __hash__(self) -> int:
        return id(self)


def _check_name(name: str, what: str) -> str:
    if not _NAME.fullmatch(name):
        raise TEError(f"{what} name {name!r} must be an identifier (letters, digits, '_')")
    return name


def _check_shape(shape: Sequence[int] | int, name: str) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for dim in dims:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise TEError(f"tensor '{name}': shape {dims} must be positive integers (static shapes only)")
    return dims


def placeholder(shape: Sequence[int] | int, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of a function (TVM's `te.placeholder`)."""
    _check_name(name, "placeholder")
    check_dtype(dtype)
    if dtype == "index":
        raise TEError(f"placeholder '{name}': tensors hold float32, int32, int64 or bool, not index")
    return Tensor(name, _check_shape(shape, name), dtype)


def reduce_axis(dom: tuple[int, int], name: str = "rv") -> IterVar:
    """A reduction index over [dom[0], dom[1]) (TVM's `te.reduce_axis`), for `te.sum`/`te.max`/`te.min`."""
    _check_name(name, "reduce_axis")
    start, stop = dom
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in dom) or stop <= start:
        raise TEError(f"reduce_axis '{name}': domain {dom} must be two integers (start, stop) with start < stop")
    return IterVar(name, start, stop, reduce=True)


def compute(
    shape: Sequence[int] | int, fcompute: Callable[..., Operand], name: str = "compute", dtype: str | None = None
) -> Tensor:
    """A tensor of `shape` whose element at (i, j, ...) is `fcompute(i, j, ...)` (TVM's `te.compute`); the body is
    either free of reductions or one `te.sum`/`te.max`/`te.min`. The lambda's parameter names name the loops (`i0`,
`i1`, ... for `lambda *i`, which takes them all)."""
    _check_name(name, "compute")
    dims = _check_shape(shape, name)
    signature = inspect.signature(fcompute).parameters.values()
    if any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in signature):
        parameters = [f"i{position}" for position in range(len(dims))]  # `lambda *i`: TVM's i0, i1, ...
    else:
        parameters = [parameter.name for parameter in signature]
    if len(parameters) != len(dims):
        raise TEError(f"compute '{name}': the function takes {len(parameters)} indices for a {len(dims)}-d shape")
    axes = tuple(IterVar(parameter, 0, extent, reduce=False) for parameter, extent in zip(parameters, dims))
    body = lift(fcompute(*axes), dtype or "float32")
    if dtype is not None:
        check_dtype(dtype)
        body = body.astype(dtype)
    if body.dtype == "index":
        body = body.astype("int32")  # TVM's index dtype
    _check_body(name, body, axes)
    return Tensor(name, dims, body.dtype, axes, body)


def _check_body(name: str, body: Expr, axes: tuple[IterVar, ...]) -> None:
    """Reductions only at the top, and only this compute's axes and the reduction's own axes as indices."""
    allowed = {id(axis) for axis in axes}
    if isinstance(body, Reduce):
        allowed |= {id(axis) for axis in body.axes}
    for expr in nodes(*children(body)) if isinstance(body, Reduce) else nodes(body):
        if isinstance(expr, Reduce):
            raise TEError(f"compute '{name}': te.{expr.combiner} must be the whole body of a compute, as in TVM")
        if isinstance(expr, IterVar) and id(expr) not in allowed:
            kind = "reduction axis" if expr.reduce else "index"
            raise TEError(f"compute '{name}': {kind} '{expr.name}' does not belong to this compute")


def const(value: int | float | bool, dtype: str = "float32") -> Expr:
    """A literal (TVM's `te.const`)."""
    check_dtype(dtype)
    return Const(value, dtype) if dtype != "bool" else Const(bool(value), "bool")
