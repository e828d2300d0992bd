"""The extents of a buffer: each dimension as a static `int` or the `index` value that holds it at run time.

A `?` dimension's extent is an operand of the op that made the buffer (`loop.extents`, `loop.alloc`,
`memref.alloc`, `memref.view`), one per `?` in order:

    %x = loop.extents %arg[%n, %s] : memref<?x4x?xf32>
    extents_of(%x)   # [%n, 4, %s]
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop


def extents_of(buffer: SSAValue) -> list[int | SSAValue]:
    """The extent of each dimension of `buffer`: its size where the type has one, else the `index` operand that the
    op defining `buffer` gives that `?`. DiagnosticException if a `?` has no known extent (a parameter not passed
    through `loop.extents`, say)."""
    if not isinstance(buffer.type, MemRefType):
        raise DiagnosticException(f"extents_of: {buffer.type} is not a memref")
    shape = buffer.type.get_shape()
    if buffer.type.has_static_shape():
        return list(shape)
    sizes = _dynamic_sizes(buffer)
    extents: list[int | SSAValue] = []
    remaining = iter(sizes)
    for dim in shape:
        extents.append(next(remaining) if dim < 0 else dim)
    return extents


def _dynamic_sizes(buffer: SSAValue) -> Sequence[SSAValue]:
    owner = buffer.owner
    if isinstance(owner, loop.ExtentsOp | loop.AllocOp):
        return owner.sizes if isinstance(owner, loop.ExtentsOp) else owner.dynamic_sizes
    if isinstance(owner, memref.AllocOp):
        return owner.dynamic_sizes
    if isinstance(owner, memref.ViewOp):
        return owner.sizes
    origin = f"'{owner.name}'" if isinstance(owner, Operation) else "a block argument"
    raise DiagnosticException(
        f"extents_of: the run-time extents of a {buffer.type} defined by {origin} are unknown (a buffer with '?' "
        "dimensions must come from loop.extents, loop.alloc, memref.alloc or memref.view)"
    )


def needs_linear_index(buffer: SSAValue) -> bool:
    """Whether `buffer` has a `?` below its outermost dimension (its accesses need the extents to be addressed)."""
    return isinstance(buffer.type, MemRefType) and any(dim < 0 for dim in buffer.type.get_shape()[1:])
