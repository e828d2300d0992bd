"""`loop-profile-calls`: time every kernel call of the entry (the profiler's instrumentation, opt-in).

Runs after the whole-program passes, before `loop-outline-parallel`. Each `func.call` of a kernel in the entry gets a
clock reading before and after it: libc's `clock_gettime(CLOCK_MONOTONIC, ts)` writing its 16-byte `timespec` into slot
`2 * call` (before) or `2 * call + 1` (after) of one byte buffer, a `loop.precompute` of an empty kernel, so the runtime
allocates it with the other precomputed buffers and reads it after a run (`runtime/profiler.py`). The entry records, per
call in order, the kernel, its floating-point operations (float arithmetic under its loops, by trip count; 0 where a
trip count is known only at run time), the bytes of the buffers it is called with (`call_bytes`; 0, unknown, where one
has a run-time extent), its schedule and its tuning keys (`minimlc.schedule`, `minimlc.task`, which
`default-schedule{annotate}` leaves) in `minimlc.profile`. Without this pass nothing is instrumented. Option `clock`:
`monotonic` (wall time, the default) or `thread-cpu` (`CLOCK_THREAD_CPUTIME_ID`: the calling thread's CPU time, which
another process preempting it does not advance; a kernel's whole cost only where it runs in the calling thread, i.e.
with a one-thread pool).

    func.call @relu_0(%x, %y) : (memref<64xf32>, memref<64xf32>) -> ()
    // becomes
    %t0 = memref.view %buffer[%c0][] : memref<32xi8> to memref<2xi64>
    %r0 = func.call @clock_gettime(%clock, %t0) : (i32, memref<2xi64>) -> i32
    func.call @relu_0(%x, %y) : (memref<64xf32>, memref<64xf32>) -> ()
    %t1 = memref.view %buffer[%c16][] : memref<32xi8> to memref<2xi64>
    %r1 = func.call @clock_gettime(%clock, %t1) : (i32, memref<2xi64>) -> i32
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    f32,
    i8,
    i32,
    i64,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import loop
from minimlc.dialects.llvm_ext import DotBF16Op
from minimlc.lowering.abi import ENTRY_FUNCTION, PROFILE_ATTR, SCHEDULE_ATTR, TASK_ATTR, buffer_dtype

BUFFER_KERNEL = "minimlc_profile_buffer"
"""The empty load-time kernel whose precomputed buffer holds the clock readings."""
CLOCK_FUNCTION = "clock_gettime"
CLOCKS = {"monotonic": 1, "thread-cpu": 3}
"""The `clock` option's values and their Linux clock ids (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID)."""
TIMESPEC_BYTES = 16

_FLOAT_OPS = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.DivfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.MaxnumfOp,
    math.FmaOp,
)


def kernel_flops(kernel: func.FuncOp) -> int:
    """Floating-point operations one call of `kernel` performs: each float add/sub/mul/div/max/min once per
    iteration of the loops around it (an FMA twice); 0 (not known, so the profile shows no GFLOP/s) where a loop's
    trip count is a run-time extent."""
    return _counted(kernel, lambda op: 2 if isinstance(op, math.FmaOp) else 1, _dot_bf16_flops)


def bf16_product_flops(kernel: func.FuncOp) -> int:
    """The share of `kernel_flops` that bfloat16 dot products do: 4 for each `llvmx.dot_bf16` a lane (its two
    products and their sums, with the add into the accumulator the te form writes outside it), which run at the
    rate of the target's bfloat16 instruction rather than its FMA's."""
    return _counted(kernel, lambda op: 0, lambda op: 4)


def _counted(kernel: func.FuncOp, float_op: Callable[[Operation], int], dot_bf16: Callable[[DotBF16Op], int]) -> int:
    """The sum over `kernel`'s float ops (`float_op`) and bfloat16 dot products (`dot_bf16`) of their count times
    the iterations of the loops around them; 0 where a loop's trip count is a run-time extent."""
    if any(isinstance(op, loop.ForOp) and op.is_dynamic for op in kernel.walk()):
        return 0

    def count(op: Operation, iterations: int) -> int:
        total = 0
        if isinstance(op, _FLOAT_OPS):
            total += iterations * float_op(op)
        elif isinstance(op, DotBF16Op):
            total += iterations * dot_bf16(op)
        inner = iterations * op.trip_count if isinstance(op, loop.ForOp) else iterations
        for region in op.regions:
            for block in region.blocks:
                total += sum(count(child, inner) for child in block.ops)
        return total

    return sum(count(op, 1) for op in kernel.body.block.ops)


def _dot_bf16_flops(op: DotBF16Op) -> int:
    """A word's two products and their sum, and the sum into the accumulator unless it is the constant 0.0 the te
    form passes (`acc + dot_bf16(0.0, a, b)`: the outer add is counted): 2 MACs a word, as a GEMM's 2*M*N*K counts."""
    zero = isinstance(op.acc.owner, arith.ConstantOp) and op.acc.owner.value == FloatAttr(0.0, f32)
    return 3 if zero else 4


def call_bytes(call: func.CallOp) -> int:
    """The summed sizes of the memref operands of `call` (each buffer read or written once: the least traffic the call
    can have); `@k(%a, %b, %pool)` with `memref<4x8xf32>, memref<16xi8>, !llvm.ptr` passes 144. 0 (not known) where
    a buffer has a run-time extent or an element type with no runtime buffer (i4)."""
    total = 0
    for operand in call.arguments:
        if not isinstance(buffer := operand.type, MemRefType):
            continue
        if any(size < 0 for size in buffer.get_shape()):
            return 0
        try:
            itemsize = buffer_dtype(buffer.element_type).itemsize
        except (ValueError, TypeError):  # numpy has no int4
            return 0
        total += prod(buffer.get_shape()) * itemsize
    return total


@dataclass(frozen=True)
class LoopProfileCallsPass(ModulePass):
    """Read a clock into a profile buffer around every kernel call of the entry."""

    name = "loop-profile-calls"

    clock: str = "monotonic"
    """`monotonic` (wall time) or `thread-cpu` (the calling thread's CPU time)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.clock not in CLOCKS:
            raise PassFailedException(f"{self.name}: clock must be one of {', '.join(CLOCKS)}, got '{self.clock}'")
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        entry = functions.get(ENTRY_FUNCTION)
        if entry is None or not entry.body.blocks or PROFILE_ATTR in entry.attributes:
            return
        kernels = {name: f for name, f in functions.items() if f.body.blocks and name != ENTRY_FUNCTION}
        calls = [c for c in entry.body.block.ops if isinstance(c, func.CallOp) and c.callee.string_value() in kernels]
        if not calls:
            return
        buffer_type = MemRefType(i8, [2 * TIMESPEC_BYTES * len(calls)])
        timespec = MemRefType(i64, [2])
        first = entry.body.block.first_op
        assert first is not None
        buffer = loop.PrecomputeOp(BUFFER_KERNEL, [], buffer_type)
        clock = arith.ConstantOp(IntegerAttr(CLOCKS[self.clock], i32))
        Rewriter.insert_op([buffer, clock], InsertPoint.before(first))

        def read_clock(slot: int) -> list[Operation]:
            offset = arith.ConstantOp(IntegerAttr(slot * TIMESPEC_BYTES, IndexType()))
            view = memref.ViewOp(buffer.result, offset.result, [], timespec)
            call = func.CallOp(CLOCK_FUNCTION, [clock.result, view.results[0]], [i32])
            return [offset, view, call]

        described: list[DictionaryAttr] = []
        for index, call in enumerate(calls):
            Rewriter.insert_op(read_clock(2 * index), InsertPoint.before(call))
            Rewriter.insert_op(read_clock(2 * index + 1), InsertPoint.after(call))
            kernel = kernels[call.callee.string_value()]
            schedule = kernel.attributes.get(SCHEDULE_ATTR, StringAttr(""))
            tasks = kernel.attributes.get(TASK_ATTR, StringAttr(""))
            described.append(
                DictionaryAttr(
                    {
                        "kernel": StringAttr(kernel.sym_name.data),
                        "flops": IntegerAttr(kernel_flops(kernel), i64),
                        "bf16_flops": IntegerAttr(bf16_product_flops(kernel), i64),
                        "bytes": IntegerAttr(call_bytes(call), i64),
                        "schedule": schedule,
                        "tasks": tasks,
                    }
                )
            )
        entry.attributes[PROFILE_ATTR] = ArrayAttr(described)
        body = func.FuncOp(BUFFER_KERNEL, ([buffer_type], []), visibility="private")
        body.body.block.add_op(func.ReturnOp())
        declaration = func.FuncOp.external(CLOCK_FUNCTION, [i32, timespec], [i32])
        declaration.sym_visibility = StringAttr("private")
        op.body.block.add_ops([body, declaration])
