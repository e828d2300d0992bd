"""Place a function's intermediate buffers in one arena, reusing memory between buffers whose lifetimes are disjoint.

Runs at the loop level on every function with `loop.alloc "global"` buffers in its body (the model entry after
`te-to-loop`). A buffer lives from its allocation to its last use; buffers are placed largest first at the lowest
64-byte-aligned offset that overlaps no buffer alive at the same time (greedy best fit, as TVM's and ONNX
Runtime's planners do). The buffers become `memref.view`s of one `loop.alloc "global"` byte arena, and the function
records `minimlc.arena_bytes` and `minimlc.intermediate_bytes` (the sum of the buffers' sizes) for the runtime's
statistics; a function that already has them is left alone.

The pipelines run it after the schedules (which only touch kernels) and `loop-hoist-constants` (whose constants
leave the arena as precomputed buffers), and before `loop-outline-parallel`: afterwards a buffer that a parallel task
reads would travel through a context struct, hiding its last use from this liveness. Only top-level buffers of a
function are planned; `"local"` ones stay on the stack, and buffers with run-time sizes (`loop.alloc "global" [%n]`)
stay out of the arena, each its own `memref.alloc` per call (and out of `minimlc.intermediate_bytes`). The arena
itself is allocated once per call like any global buffer, so concurrent calls never share it.

    %a = loop.alloc "global" : memref<1x128xf32>
    %b = loop.alloc "global" : memref<1x128xf32>
    // becomes
    %arena = loop.alloc "global" : memref<512xi8>
    %a = memref.view %arena[%c0][] : memref<512xi8> to memref<1x128xf32>
    %b = memref.view %arena[%c0][] : memref<512xi8> to memref<1x128xf32>     // if %a is dead when %b is born
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import FixedBitwidthType, IndexType, IntegerAttr, MemRefType, ModuleOp, i8, i64
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.abi import ARENA_BYTES_ATTR, INTERMEDIATE_BYTES_ATTR

ALIGNMENT = 64


@dataclass(frozen=True)
class Lifetime:
    """A buffer of `size` bytes alive from op position `start` to `end` (inclusive) of its function body."""

    size: int
    start: int
    end: int


def plan_offsets(lifetimes: list[Lifetime]) -> tuple[list[int], int]:
    """Aligned byte offsets, one per lifetime, with no two overlapping buffers alive at once; and the arena size."""
    offsets = [0] * len(lifetimes)
    placed: list[int] = []
    order = sorted(range(len(lifetimes)), key=lambda index: (-lifetimes[index].size, lifetimes[index].start))
    for index in order:
        current = lifetimes[index]
        busy = sorted(
            (offsets[other], offsets[other] + lifetimes[other].size)
            for other in placed
            if lifetimes[other].start <= current.end and current.start <= lifetimes[other].end
        )
        offset = 0
        for begin, end in busy:
            if offset + current.size <= begin:
                break
            offset = max(offset, _align(end))
        offsets[index] = offset
        placed.append(index)
    arena = max((offsets[i] + lifetimes[i].size for i in range(len(lifetimes))), default=0)
    return offsets, _align(arena)


def _align(size: int) -> int:
    return -(-size // ALIGNMENT) * ALIGNMENT


def _byte_size(memref_type: MemRefType) -> int:
    element = memref_type.element_type
    width = element.bitwidth if isinstance(element, FixedBitwidthType) else 64
    return math.prod(memref_type.get_shape()) * max(1, width // 8)


def _lifetime(alloc: loop.AllocOp, body: Block, position: dict[Operation, int]) -> Lifetime:
    """From the first to the last op of `body` that uses the buffer (directly or inside a nested region)."""
    users = []
    for use in alloc.result.uses:
        user: Operation | None = use.operation
        while user is not None and user.parent_block() is not body:
            user = user.parent_op()
        users.append(position[user] if user is not None else len(position))
    start, end = (min(users), max(users)) if users else (position[alloc], position[alloc])
    assert isinstance(alloc.result.type, MemRefType)
    return Lifetime(_byte_size(alloc.result.type), start, end)


def _plan_function(function: func.FuncOp) -> None:
    if ARENA_BYTES_ATTR in function.attributes:
        return
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    allocs = [
        op for op in body.ops if isinstance(op, loop.AllocOp) and op.scope.data == "global" and not op.dynamic_sizes
    ]
    if not allocs:
        return
    lifetimes = [_lifetime(alloc, body, position) for alloc in allocs]
    offsets, arena_bytes = plan_offsets(lifetimes)

    arena = loop.AllocOp(MemRefType(i8, [arena_bytes]), "global")
    arena.result.name_hint = "arena"
    Rewriter.insert_op(arena, InsertPoint.at_start(body))
    for alloc, offset in zip(allocs, offsets):
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        view = memref.ViewOp(arena.result, shift.result, [], alloc.result.type)
        Rewriter.insert_op([shift, view], InsertPoint.before(alloc))
        alloc.result.replace_all_uses_with(view.result)
        view.result.name_hint = alloc.result.name_hint
        Rewriter.erase_op(alloc)
    function.attributes[ARENA_BYTES_ATTR] = IntegerAttr(arena_bytes, i64)
    function.attributes[INTERMEDIATE_BYTES_ATTR] = IntegerAttr(sum(item.size for item in lifetimes), i64)


@dataclass(frozen=True)
class LoopPlanMemoryPass(ModulePass):
    """Place intermediate buffers in one arena by liveness (greedy best fit, 64-byte aligned)."""

    name = "loop-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _plan_function(function)
