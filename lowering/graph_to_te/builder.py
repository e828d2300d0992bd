"""Helpers for building `te.compute`s from graph ops: scalar constants, reads, broadcast and reshape indexing.

Used by every graph-to-te pattern module, and by the te passes that build computes of their own (im2col,
Winograd, layout copies). Bodies are built with xDSL's `ImplicitBuilder`: the ops a body function
creates land in the compute's block.

    build_compute("relu", (4,), lambda idx: arith.MaximumfOp(read(x, idx), f32_constant(0.0)).result)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import te
from minimlc.dialects.graph import tensor_type
from minimlc.lowering.generic import built_ops
from minimlc.lowering.graph_to_te.extents import (
    Extent,
    RunTimeDimensionError,
    as_index,
    multiply,
    product,
    static_shape,
)

Shape = tuple[int, ...]
Indices = Sequence[SSAValue]


def build_compute(
    tag: str,
    shape: Sequence[Extent],
    body: Callable[[Indices], SSAValue],
    reduce_extents: Sequence[Extent] = (),
    combiner: str | None = None,
    element_type: Attribute | None = None,
) -> te.ComputeOp:
    """A `te.compute` over `shape` (then `reduce_extents`) yielding `body(indices)`, of the yielded value's type
    unless `element_type` is given; the ops that `body` creates land in the compute's body. A run-time extent (an
    `index` value) becomes a `?` and a size operand (`extents.py`)."""
    static = static_shape(shape)
    reductions = tuple(te.DYNAMIC_EXTENT if isinstance(extent, SSAValue) else extent for extent in reduce_extents)
    assert all(extent >= 0 for extent in static if extent != DYNAMIC_INDEX), f"'{tag}': bad extents {static}"
    sizes = [extent for extent in (*shape, *reduce_extents) if isinstance(extent, SSAValue)]
    block = te.ComputeOp.block_for(static, reductions)
    with ImplicitBuilder(block) as indices:
        value = body(indices)
        te.YieldOp(value)
    result_type = tensor_type(static, element_type or value.type)
    return te.ComputeOp(tag, result_type, block, reductions, combiner, sizes)


def f32_constant(value: float) -> SSAValue:
    return built_ops.constant(_f32_attr(value, math.copysign(1.0, value))).result


def index_constant(value: int) -> SSAValue:
    return built_ops.constant(_index_attr(value)).result


@functools.lru_cache(maxsize=1024, typed=True)
def _f32_attr(value: float, sign: float) -> builtin.FloatAttr:
    """The attribute of an f32 constant, made once per value (keyed by its sign too: 0.0 == -0.0); constants share
    it (an attribute is immutable)."""
    return builtin.FloatAttr(value, builtin.f32)


@functools.lru_cache(maxsize=1024, typed=True)
def _index_attr(value: int) -> builtin.IntegerAttr:
    """The attribute of an index constant, made once per value; constants share it."""
    return builtin.IntegerAttr(value, builtin.IndexType())


def i64_constant(value: int) -> SSAValue:
    return arith.ConstantOp(builtin.IntegerAttr(value, builtin.i64)).result


def constant(value: int | float, element_type: Attribute) -> SSAValue:
    """`value` as a scalar of `element_type` (a float, or an integer type: i1 takes 0 or 1). An unsigned one is a
    signless constant of the same bits and a bitcast (`arith.constant` takes signless integers only)."""
    if isinstance(element_type, builtin.IntegerType):
        width = element_type.width.data
        if element_type.signedness.data == builtin.Signedness.UNSIGNED:
            bits = int(value) % (1 << width)
            signed = bits - (1 << width) if bits >= 1 << (width - 1) else bits
            signless = arith.ConstantOp(builtin.IntegerAttr(signed, builtin.IntegerType(width))).result
            return arith.BitcastOp(signless, element_type).result
        return arith.ConstantOp(builtin.IntegerAttr(int(value), element_type)).result
    return arith.ConstantOp(builtin.FloatAttr(float(value), element_type)).result


def read(tensor: SSAValue, indices: Indices) -> SSAValue:
    return te.ReadOp(tensor, indices).result


def scaled(value: SSAValue, factor: float) -> SSAValue:
    return value if factor == 1.0 else arith.MulfOp(value, f32_constant(factor)).result


def broadcast_indices(source: Sequence[Extent], target: Sequence[Extent], indices: Indices) -> list[SSAValue]:
    """Indices into a `source`-shaped operand numpy-broadcast to `target`, at `indices` of it. A `?` against a `?` is
    assumed equal to it (the runtime checks inputs sharing a symbol), a static size against a `?` too (the `?` must be
    it); a `?` against a static n > 1 is n or 1, read at `min(index, extent - 1)` (its run-time extent, from
    `Extents.operand`)."""
    offset = len(target) - len(source)
    zero = functools.cache(lambda: index_constant(0))
    picked: list[SSAValue] = []
    for axis, (extent, into) in enumerate(zip(static_shape(source), static_shape(target[offset:]))):
        index = indices[offset + axis]
        if extent == into or (extent == DYNAMIC_INDEX and into == 1) or (extent != 1 and into == DYNAMIC_INDEX):
            picked.append(index)
        elif isinstance(run_time := source[axis], SSAValue):
            last = arith.SubiOp(run_time, index_constant(1)).result
            picked.append(arith.MinUIOp(index, last).result)
        elif extent == DYNAMIC_INDEX:
            raise RunTimeDimensionError(f"broadcasts a run-time dimension against the static extent {into}")
        else:
            picked.append(zero())
    return picked


def _shared_prefix(lhs: Sequence[Extent], rhs: Sequence[Extent]) -> int:
    return next((n for n, (a, b) in enumerate(zip(lhs, rhs)) if a != b), min(len(lhs), len(rhs)))


def linear_index(indices: Indices, extents: Sequence[Extent]) -> SSAValue:
    """Row-major linear index (an index value) of `indices` in `extents`."""
    if all(extent == 1 for extent in extents):
        return index_constant(0)
    return _linearise(indices, extents)


def _linearise(indices: Indices, extents: Sequence[Extent]) -> SSAValue:
    """Row-major linear index of `indices` in `extents`; needs at least one extent other than 1."""
    terms: list[SSAValue] = []
    stride: Extent = 1
    for position, (index, extent) in enumerate(zip(reversed(indices), reversed(extents))):
        if extent != 1:
            terms.append(index if stride == 1 else arith.MuliOp(index, as_index(stride)).result)
        if position + 1 < len(extents):
            stride = multiply(stride, extent)
    linear = terms[0]
    for term in terms[1:]:
        linear = arith.AddiOp(linear, term).result
    return linear


def split_index(index: SSAValue, extents: tuple[int, ...]) -> list[SSAValue]:
    """The row-major coordinates of the linear `index` (known to be below the product of `extents`)."""
    coordinates: list[SSAValue] = []
    for axis, extent in enumerate(extents):
        if extent == 1:
            coordinates.append(index_constant(0))
            continue
        stride = prod(extents[axis + 1 :])
        quotient = index if stride == 1 else arith.DivUIOp(index, index_constant(stride)).result
        outermost = prod(extents[:axis]) == 1
        coordinates.append(quotient if outermost else arith.RemUIOp(quotient, index_constant(extent)).result)
    return coordinates


def reshape_indices(indices: Indices, target: Sequence[Extent], source: Sequence[Extent]) -> list[SSAValue]:
    """Indices into `source` of the element at `indices` of `target` (same elements, row-major).

    Dims of a shared prefix or suffix (equal sizes, or the same run-time extent) map one to one; only the middle goes
    through a linear index.
    """
    prefix = _shared_prefix(source, target)
    suffix = _shared_prefix(source[prefix:][::-1], target[prefix:][::-1])
    source_middle = source[prefix : len(source) - suffix]
    end = len(target) - suffix
    zero = functools.cache(lambda: index_constant(0))
    linear = functools.cache(lambda: _linearise(indices[prefix:end], target[prefix:end]))
    middle: list[SSAValue] = []
    for axis, extent in enumerate(source_middle):
        stride = product(source_middle[axis + 1 :])
        if extent == 1:
            middle.append(zero())
            continue
        quotient = linear() if stride == 1 else arith.DivUIOp(linear(), as_index(stride)).result
        outermost = all(outer == 1 for outer in source_middle[:axis])
        middle.append(quotient if outermost else arith.RemUIOp(quotient, as_index(extent)).result)
    return [*indices[:prefix], *middle, *indices[end:]]


@dataclass
class KernelGroups:
    """Numbers the multi-stage kernels (`te.KERNEL_GROUP`) of one graph-to-te run, from `first`."""

    first: int = 0

    def join(self, computes: Sequence[te.ComputeOp]) -> list[te.ComputeOp]:
        """Mark `computes` (consecutive, in order) as the stages of one new kernel."""
        for compute in computes:
            compute.attributes[te.KERNEL_GROUP] = builtin.IntegerAttr(self.first, builtin.i64)
        self.first += 1
        return list(computes)
