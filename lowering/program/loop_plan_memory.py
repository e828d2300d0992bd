"""Place a function's intermediate buffers in one arena, reusing memory between buffers whose lifetimes are disjoint.

Runs at the loop level on every function with `loop.alloc "global"` buffers in its body (the model entry after
`te-to-loop`). A buffer lives from its first to its last use, its `loop.view`s' uses included. Static buffers are
placed largest first at the lowest 64-byte-aligned offset that overlaps no buffer alive at the same time (greedy
best fit, as TVM's and ONNX Runtime's planners do). The buffers become `memref.view`s of one `loop.alloc "global"`
byte arena, and the function records `minimlc.arena_bytes` and `minimlc.intermediate_bytes` (the sum of the buffers'
sizes) for the runtime's statistics; a function that already has them is left alone.

    %a = loop.alloc "global" : memref<1x128xf32>
    %b = loop.alloc "global" : memref<1x128xf32>
    // becomes
    %arena = loop.alloc "global" : memref<512xi8>
    %a = memref.view %arena[%c0][] : memref<512xi8> to memref<1x128xf32>
    %b = memref.view %arena[%c0][] : memref<512xi8> to memref<1x128xf32>     // if %a is dead when %b is born

Buffers with run-time sizes (`loop.alloc "global" [%n]`) go into the same arena, after its static part, in slots
that the same liveness assigns (`arena_slots.py`): the arena's size is then computed at the start of the function
from the sizes, and the ops computing them (`arith`, loads of an argument the function only reads, such as the
entry's extents) move there first. Its attributes count the static part only (`arena_bytes`: the static part's
bytes, `intermediate_bytes`: the static buffers' sizes), the bytes known at compile time; the compiler knows no
bounds of the run-time sizes (`input_bounds` stay in the runtime), so the arena's total is a run-time value:

    %n = arith.index_cast %e : i64 to index
    %t = loop.alloc "global" : memref<16xf32>
    %d = loop.alloc "global" [%n] : memref<?x16xf32>
    // becomes
    %n = arith.index_cast %e : i64 to index
    %static = arith.constant 64 : index
    %row = arith.constant 64 : index
    %slot = arith.muli %n, %row : index
    %total = arith.addi %static, %slot : index
    %arena = loop.alloc "global" [%total] : memref<?xi8>        // arena_bytes = 64, intermediate_bytes = 64
    %t = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
    %d = memref.view %arena[%static][%n] : memref<?xi8> to memref<?x16xf32>

The pipelines run it after the schedules (which only touch kernels) and `loop-hoist-constants` (whose constants
leave the arena as precomputed buffers), and before `loop-outline-parallel`: afterwards a buffer that a parallel task
reads would travel through a context struct, hiding its last use from this liveness. Only top-level buffers of a
function are planned; `"local"` ones stay on the stack. The arena is allocated once per call like any global buffer
(and freed at every return), so concurrent calls never share it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FixedBitwidthType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i8,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.abi import ARENA_BYTES_ATTR, INTERMEDIATE_BYTES_ATTR
from minimlc.lowering.program.arena_slots import ALIGNMENT, Lifetime, SizeBuilder, assign_slots, bytes_per_unit


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


def _lifetime(alloc: loop.AllocOp, body: Block, position: dict[Operation, int]) -> Lifetime:
    """From the first to the last op of `body` that uses the buffer (directly or inside a nested region); its size
    in bytes (per unit of the product of its run-time sizes, if it has any)."""
    users = []
    for use in _uses_through_views(alloc.result):
        user: Operation | None = use.operation
        while user is not None and user.parent_block() is not body:
            user = user.parent_op()
        users.append(position[user] if user is not None else len(position))
    start, end = (min(users), max(users)) if users else (position[alloc], position[alloc])
    memref_type = alloc.result.type
    assert isinstance(memref_type, MemRefType)
    element = memref_type.element_type
    width = element.bitwidth if isinstance(element, FixedBitwidthType) else 64
    return Lifetime(bytes_per_unit(memref_type, max(1, width // 8)), start, end)


def _uses_through_views(buffer: SSAValue) -> list[Use]:
    """The uses of `buffer` and of the `loop.view`s of it (the same memory), the views' own uses excluded."""
    uses: list[Use] = []
    for use in buffer.uses:
        if isinstance(use.operation, loop.ViewOp):
            uses.extend(_uses_through_views(use.operation.result))
        else:
            uses.append(use)
    return uses


def _plan_function(function: func.FuncOp) -> None:
    if ARENA_BYTES_ATTR in function.attributes:
        return
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    allocs = [op for op in body.ops if isinstance(op, loop.AllocOp) and op.scope.data == "global"]
    if not allocs:
        return
    lifetimes = {alloc: _lifetime(alloc, body, position) for alloc in allocs}
    static = [alloc for alloc in allocs if not alloc.dynamic_sizes]
    dynamic = [alloc for alloc in allocs if alloc.dynamic_sizes]
    offsets, static_bytes = plan_offsets([lifetimes[alloc] for alloc in static])

    if dynamic:
        arena, slot_offsets = _run_time_arena(function, position, dynamic, lifetimes, static_bytes)
    else:
        arena, slot_offsets = loop.AllocOp(MemRefType(i8, [static_bytes]), "global"), {}
        Rewriter.insert_op(arena, InsertPoint.at_start(body))
    arena.result.name_hint = "arena"
    for alloc, offset in zip(static, offsets):
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        Rewriter.insert_op(shift, InsertPoint.before(alloc))
        _replace_by_view(alloc, arena, shift.result)
    for alloc in dynamic:
        _replace_by_view(alloc, arena, slot_offsets[alloc])
    function.attributes[ARENA_BYTES_ATTR] = IntegerAttr(static_bytes, i64)
    function.attributes[INTERMEDIATE_BYTES_ATTR] = IntegerAttr(sum(lifetimes[alloc].size for alloc in static), i64)


def _replace_by_view(alloc: loop.AllocOp, arena: loop.AllocOp, offset: SSAValue) -> None:
    assert isinstance(alloc.result.type, MemRefType)
    view = memref.ViewOp(arena.result, offset, list(alloc.dynamic_sizes), alloc.result.type)
    Rewriter.insert_op(view, InsertPoint.before(alloc))
    alloc.result.replace_all_uses_with(view.result)
    view.result.name_hint = alloc.result.name_hint
    Rewriter.erase_op(alloc)


def _run_time_arena(
    function: func.FuncOp,
    position: dict[Operation, int],
    dynamic: list[loop.AllocOp],
    lifetimes: dict[loop.AllocOp, Lifetime],
    static_bytes: int,
) -> tuple[loop.AllocOp, dict[loop.AllocOp, SSAValue]]:
    """The arena of `static_bytes` then one slot after another for the `dynamic` buffers, sized at the start of
    `function`; and each buffer's offset in it (its slot's)."""
    body = function.body.block
    last_moved = _move_sizes_to_start(function, position, dynamic)
    numbers, slots = assign_slots([lifetimes[alloc] for alloc in dynamic], [tuple(a.dynamic_sizes) for a in dynamic])
    sizes = SizeBuilder()
    offset = sizes.constant(static_bytes)
    slot_offsets: list[SSAValue] = []
    for slot in slots:
        slot_offsets.append(offset)
        offset = sizes.add(offset, sizes.slot_bytes(slot))
    arena = loop.AllocOp(MemRefType(i8, [DYNAMIC_INDEX]), "global", [offset])
    at = InsertPoint.after(last_moved) if last_moved is not None else InsertPoint.at_start(body)
    Rewriter.insert_op([*sizes.ops, arena], at)
    return arena, {alloc: slot_offsets[number] for alloc, number in zip(dynamic, numbers)}


def _move_sizes_to_start(
    function: func.FuncOp, position: dict[Operation, int], allocs: list[loop.AllocOp]
) -> Operation | None:
    """Move the ops that compute the run-time sizes of `allocs` to the start of `function`, in their order, so that
    they dominate the arena; the last one moved. DiagnosticException for an op that cannot move."""
    body = function.body.block
    moved: set[Operation] = set()
    pending = [size for alloc in allocs for size in alloc.dynamic_sizes]
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner in moved:
            continue
        if not _movable(owner, body):
            raise DiagnosticException(
                f"loop-plan-memory: @{function.sym_name.data}: a run-time buffer size comes from '{owner.name}', "
                "which cannot move to the start of the function to size the arena (only arith ops and loads of an "
                "argument the function only reads can)"
            )
        moved.add(owner)
        pending.extend(owner.operands)
    ordered = sorted(moved, key=position.__getitem__)
    for op in ordered:
        op.detach()
    Rewriter.insert_op(ordered, InsertPoint.at_start(body))
    return ordered[-1] if ordered else None


def _movable(op: Operation, body: Block) -> bool:
    """Whether `op`, a top-level op of `body`, computes the same value at the start of `body`: an `arith` op, or a
    `memref.load` of an argument that nothing but loads uses."""
    if op.parent_block() is not body:
        return False
    if op.name.startswith("arith."):
        return True
    if not isinstance(op, memref.LoadOp) or not isinstance(op.memref, BlockArgument) or op.memref.block is not body:
        return False
    return all(isinstance(use.operation, memref.LoadOp) for use in op.memref.uses)


@dataclass(frozen=True)
class LoopPlanMemoryPass(ModulePass):
    """Place intermediate buffers in one arena by liveness (greedy best fit, 64-byte aligned)."""

    name = "loop-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _plan_function(function)
