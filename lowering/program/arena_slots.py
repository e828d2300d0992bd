"""The run-time part of `loop-plan-memory`'s arena: slots for the buffers with run-time sizes.

Buffers with `?` dimensions are grouped into slots by liveness alone (no sizes needed): the buffers of one slot have
pairwise disjoint lifetimes, so they may share its bytes. At run time a slot is as large as its largest buffer
(each buffer's bytes rounded up to 64), the slots follow the static part of the arena one after the other (prefix
sums), and the arena is one `loop.alloc "global"` of the total. Two buffers alive at the same time are in different
slots, so they never overlap, whatever the run-time sizes. A buffer's run-time size is `bytes * n0 * n1 ...`
(`bytes`: the element size times its static dimensions, `n0, n1, ...`: its size operands); a slot keeps, per tuple
of size operands, the largest `bytes`, so buffers of the same run-time extents need one `arith.maxui` less:

    // %a: memref<?x16xf32> [%n], %b: memref<?x32xf32> [%n] (disjoint lifetimes), a 128-byte static part:
    %static = arith.constant 128 : index
    %row = arith.constant 128 : index
    %slot0 = arith.muli %n, %row : index          // max(64, 128) bytes per %n: 128 x %n (a multiple of 64)
    %total = arith.addi %static, %slot0 : index
    %arena = loop.alloc "global" [%total] : memref<?xi8>
    %a = memref.view %arena[%static][%n] : memref<?xi8> to memref<?x16xf32>
    %b = memref.view %arena[%static][%n] : memref<?xi8> to memref<?x32xf32>
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

ALIGNMENT = 64


@dataclass(frozen=True)
class Lifetime:
    """A buffer of `size` bytes alive from op position `start` to `end` (inclusive) of its function body. For a
    buffer with run-time sizes, `size` is its bytes per unit of their product."""

    size: int
    start: int
    end: int


@dataclass
class Slot:
    """Buffers alive at pairwise disjoint times, sharing bytes: per tuple of run-time sizes (`key`), the largest
    bytes per unit of their product; `end`, the last position where one of them is alive."""

    end: int
    terms: dict[Hashable, int] = field(default_factory=dict)


def assign_slots(lifetimes: Sequence[Lifetime], keys: Sequence[Hashable]) -> tuple[list[int], list[Slot]]:
    """A slot per buffer (in order of first use), no two buffers of a slot alive at once; and the slots. A buffer
    joins a free slot that already holds its `key` (its run-time sizes), else the first free slot, else a new one:
    sharing never costs bytes, since max(a, b) <= a + b."""
    slots: list[Slot] = []
    assigned = [0] * len(lifetimes)
    for index in sorted(range(len(lifetimes)), key=lambda index: (lifetimes[index].start, lifetimes[index].end)):
        current, key = lifetimes[index], keys[index]
        free = [number for number, slot in enumerate(slots) if slot.end < current.start]
        same_key = [number for number in free if key in slots[number].terms]
        if same_key or free:
            number = (same_key or free)[0]
        else:
            number = len(slots)
            slots.append(Slot(current.end))
        slot = slots[number]
        slot.end = max(slot.end, current.end)
        slot.terms[key] = max(slot.terms.get(key, 0), current.size)
        assigned[index] = number
    return assigned, slots


def bytes_per_unit(memref_type: MemRefType, element_bytes: int) -> int:
    """The bytes of a buffer of `memref_type` per unit of the product of its run-time sizes."""
    return math.prod(dim for dim in memref_type.get_shape() if dim >= 0) * element_bytes


class SizeBuilder:
    """Emits the `index` arithmetic of the arena's run-time size into `ops`."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def constant(self, value: int) -> SSAValue:
        return self._add(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def slot_bytes(self, slot: Slot) -> SSAValue:
        """The largest of `slot`'s terms, each rounded up to the alignment."""
        size: SSAValue | None = None
        for sizes, unit in slot.terms.items():
            assert isinstance(sizes, tuple)
            term = self._aligned(self._product(unit, sizes), unit)
            size = term if size is None else self._add(arith.MaxUIOp(size, term))
        assert size is not None
        return size

    def add(self, left: SSAValue, right: SSAValue) -> SSAValue:
        return self._add(arith.AddiOp(left, right))

    def _product(self, unit: int, sizes: tuple[SSAValue, ...]) -> SSAValue:
        product = sizes[0]
        for size in sizes[1:]:
            product = self._add(arith.MuliOp(product, size))
        return product if unit == 1 else self._add(arith.MuliOp(product, self.constant(unit)))

    def _aligned(self, size: SSAValue, unit: int) -> SSAValue:
        """`size` rounded up to the alignment; unchanged when its bytes per unit are a multiple of it."""
        if unit % ALIGNMENT == 0:
            return size
        padded = self._add(arith.AddiOp(size, self.constant(ALIGNMENT - 1)))
        return self._add(arith.AndIOp(padded, self.constant(-ALIGNMENT)))

    def _add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]
