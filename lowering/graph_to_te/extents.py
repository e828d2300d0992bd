"""Run-time extents in graph-to-te (`docs/design/symbolic_shapes.md`): each dimension of a tensor as an `int` or the
`index` value holding it, and the index arithmetic that derives one extent from others.

A te.compute result's `?` extent is its size operand; a function argument's (or another value's) is a `te.dim`,
created once per (value, axis): at the start of the function for an argument, right after the defining op otherwise.
The index arithmetic an op's lowering needs (a product, a reshape's quotient, a concat's sum) goes right before the
op, so it precedes every compute of the op and a kernel group's stages stay consecutive:

    %n = te.dim %x[0] : tensor<?x8xf32>
    %y = te.compute "relu" (%i, %j) [%n] -> tensor<?x8xf32> { ... }

A `?` broadcast against another `?` is assumed equal to it (the runtime checks that inputs sharing a symbol agree).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from minimlc.dialects import te

Extent = int | SSAValue
"""A dimension: its static size or the `index` value holding it at run time."""


class RunTimeDimensionError(Exception):
    """A lowering written for run-time dimensions meets a case it cannot lower; the pass names the op."""


def has_run_time_dims(value: SSAValue) -> bool:
    """Whether `value` is a tensor with a `?` dimension."""
    return isinstance(value.type, TensorType) and DYNAMIC_INDEX in value.type.get_shape()


def static_shape(extents: Sequence[Extent]) -> tuple[int, ...]:
    """`extents` as a type's shape: `?` (DYNAMIC_INDEX) for each run-time extent."""
    return tuple(DYNAMIC_INDEX if isinstance(extent, SSAValue) else extent for extent in extents)


def as_index(extent: Extent) -> SSAValue:
    """`extent` as an `index` value (a constant for a static one), built where ops are being built."""
    if isinstance(extent, SSAValue):
        return extent
    return arith.ConstantOp(IntegerAttr(extent, IndexType())).result


def multiply(lhs: Extent, rhs: Extent) -> Extent:
    """`lhs * rhs`, folded when static or a factor is 1, built where ops are being built."""
    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs * rhs
    if lhs == 1 or rhs == 1:
        return rhs if lhs == 1 else lhs
    return arith.MuliOp(as_index(lhs), as_index(rhs)).result


def product(extents: Sequence[Extent]) -> Extent:
    """The product of `extents` (1 for none), static factors folded first."""
    static = 1
    dynamic: list[SSAValue] = []
    for extent in extents:
        if isinstance(extent, SSAValue):
            dynamic.append(extent)
        else:
            static *= extent
    total: Extent = static
    for extent in dynamic if static else ():  # a static 0 makes the product 0
        total = multiply(total, extent)
    return total


def float_count(count: Extent, element_type: Attribute) -> SSAValue:
    """A count as a float scalar of `element_type` (a constant, or `index_cast` and `sitofp` of a run-time one)."""
    if isinstance(count, int):
        return arith.ConstantOp(FloatAttr(float(count), element_type)).result
    return arith.SIToFPOp(arith.IndexCastOp(count, i64).result, element_type).result


class Extents:
    """The extents a lowering of `op` reads and derives: index ops it needs are built right before `op`."""

    def __init__(self, op: Operation):
        self.op = op

    @contextmanager
    def _before_op(self) -> Iterator[None]:
        with ImplicitBuilder(Builder(InsertPoint.before(self.op))):
            yield

    def of(self, value: SSAValue) -> list[Extent]:
        """Every dimension of the tensor `value`."""
        assert isinstance(value.type, TensorType)
        return [self.at(value, axis) for axis in range(value.type.get_num_dims())]

    def at(self, value: SSAValue, axis: int) -> Extent:
        """Dimension `axis` of the tensor `value`: its size, or the `index` value of a `?`."""
        assert isinstance(value.type, TensorType)
        size = value.type.get_shape()[axis]
        if size != DYNAMIC_INDEX:
            return size
        if isinstance(value.owner, te.ComputeOp):
            extent = value.owner.output_extents()[axis]
            assert isinstance(extent, SSAValue)
            return extent
        for use in value.uses:
            if isinstance(use.operation, te.DimOp) and use.operation.axis.value.data == axis:
                return use.operation.result
        return self._new_dim(value, axis)

    def _new_dim(self, value: SSAValue, axis: int) -> SSAValue:
        """A `te.dim` of `value` at `axis`: an argument's after the `te.dim`s leading its block, else after the op."""
        if isinstance(value, BlockArgument):
            last, following = None, value.block.first_op
            while isinstance(following, te.DimOp):
                last, following = following, following.next_op
            at = InsertPoint.at_start(value.block) if last is None else InsertPoint.after(last)
        else:
            assert isinstance(value.owner, Operation)
            at = InsertPoint.after(value.owner)
        with ImplicitBuilder(Builder(at)):
            return te.DimOp(value, axis).result

    def operand(self, value: SSAValue, target: Sequence[Extent]) -> list[Extent]:
        """The shape of `value`, an operand broadcast to `target`, for `broadcast_indices`: a `?` facing a static
        extent above 1 (it is that extent or 1 at run time) is its run-time extent, the rest the type's sizes."""
        assert isinstance(value.type, TensorType)
        shape = value.type.get_shape()
        offset = len(target) - len(shape)
        return [
            self.at(value, axis)
            if size == DYNAMIC_INDEX and isinstance(target[offset + axis], int) and target[offset + axis] > 1
            else size
            for axis, size in enumerate(shape)
        ]

    def product(self, extents: Sequence[Extent]) -> Extent:
        """The product of `extents`."""
        with self._before_op():
            return product(extents)

    def quotient(self, dividend: Extent, divisor: Extent) -> Extent:
        """`dividend / divisor`, an exact division (the extent a reshape's -1 takes)."""
        if isinstance(dividend, int) and isinstance(divisor, int):
            return dividend // divisor
        if divisor == 1:
            return dividend
        with self._before_op():
            return arith.DivUIOp(as_index(dividend), as_index(divisor)).result

    def reshape_rest(self, source: Sequence[Extent], known: Sequence[Extent]) -> Extent:
        """The extent a reshape's -1 takes: the element count of `source` over the product of the target's `known`
        extents, with each run-time extent the two share (the same value) cancelled first and the static factors
        divided where they divide. `[?b, 2, 2, ?n, 8]` to `[?b, 4, -1, 8]` gives `?n` itself, not
        `(32 * b * n) / (32 * b)`, so the reshape's lowering sees `?n` on both sides and merges only `2 x 2 -> 4`."""
        remaining = list(source)
        unshared: list[Extent] = []
        for extent in known:
            if isinstance(extent, SSAValue) and extent in remaining:
                remaining.remove(extent)
            else:
                unshared.append(extent)
        static = math.prod(extent for extent in remaining if isinstance(extent, int))
        if all(isinstance(extent, int) for extent in unshared) and (divisor := math.prod(unshared)):
            if static % divisor == 0:
                dynamic = [extent for extent in remaining if isinstance(extent, SSAValue)]
                return self.product([*dynamic, static // divisor])
        return self.quotient(self.product(remaining), self.product(unshared))

    def total(self, extents: Sequence[Extent]) -> Extent:
        """The sum of `extents` (a concatenation's extent along its axis)."""
        static = sum(extent for extent in extents if isinstance(extent, int))
        dynamic = [extent for extent in extents if isinstance(extent, SSAValue)]
        if not dynamic:
            return static
        with self._before_op():
            result = dynamic[0]
            for extent in [*dynamic[1:], *([static] if static else [])]:
                result = arith.AddiOp(result, as_index(extent)).result
            return result

    def strided_count(self, extent: Extent, start: int, step: int) -> Extent:
        """How many of `start, start + step, ...` (step > 0) are below `extent`: `max(0, extent - start + step - 1) /
        step` (a slice to the end of a run-time axis, empty where the run's extent is at most `start`)."""
        if isinstance(extent, int):
            return max(0, (extent - start + step - 1) // step)
        with self._before_op():
            past = extent
            if start:
                past = arith.MaxSIOp(arith.SubiOp(extent, as_index(start)).result, as_index(0)).result
            if step == 1:
                return past
            rounded = arith.AddiOp(past, as_index(step - 1)).result
            return arith.DivUIOp(rounded, as_index(step)).result

    def broadcast(self, shape: Sequence[int], operands: Sequence[SSAValue], trailing: int = 0) -> list[Extent]:
        """The extents of a `shape` that numpy-broadcasts `operands` (less their last `trailing` dims, a matmul's
        matrices): each `?` is the extent of the first operand whose dimension (right-aligned) is `?` there."""
        extents: list[Extent] = []
        for axis, size in enumerate(shape):
            if size != DYNAMIC_INDEX:
                extents.append(size)
                continue
            source = next(
                (
                    (operand, at)
                    for operand in operands
                    if isinstance(operand.type, TensorType)
                    and (at := axis - len(shape) + operand.type.get_num_dims() - trailing) >= 0
                    and operand.type.get_shape()[at] == DYNAMIC_INDEX
                ),
                None,
            )
            if source is None:
                raise RunTimeDimensionError(f"has a run-time result dimension {axis} that no operand gives")
            extents.append(self.at(*source))
        return extents
