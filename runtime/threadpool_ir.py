"""The native thread pool as LLVM IR, built with `llvmlite.ir`; `runtime.threadpool` compiles it once per process.

C ABI (all functions external, `ptr` is an opaque `Pool *`):

    ptr  minimlc_pool_create(i32 num_threads)        starts num_threads - 1 workers (named `minimlc-pool`); the
                                                     caller is thread 0
    void minimlc_pool_destroy(ptr pool)              wakes and joins the workers, frees the pool (pool idle)
    i32  minimlc_pool_num_threads(ptr pool)          threads that run tasks, the caller included
    i64  minimlc_pool_tasks_run(ptr pool, i32 thread) tasks thread `thread` ran in the pool's jobs so far
    void minimlc_parallel_for(ptr pool, ptr body, ptr ctx, i64 n_tasks)
                                                     calls body(ctx, task) once for each task in [0, n_tasks)

Protocol. The caller takes the pool with a `busy` try-lock; if it is taken (a nested call from inside a task, or a
concurrent call from another thread) or the pool has one thread, the tasks run inline on the caller, serially. The owner
writes the job (body, ctx, `unfinished` = n_tasks), then gives each thread t of T (the caller is thread 0) the
contiguous range [t*n/T, (t+1)*n/T) of the tasks, one 64-bit word per thread (`end << 32 | begin`, each on its own cache
line, stored with release), then bumps `generation` and wakes sleeping workers. A thread claims a chunk of tasks (an
eighth of what is left of the range, at least one: `CHUNK_SHIFT`) from the front of its own range with a
compare-and-swap of that word, and when its range is empty steals chunks from the back of the others' ranges the same
way; only after a claim (acquire) does it read the job's body and ctx: the claim sees what the owner wrote before the
range, and the job cannot end, so its body and ctx cannot change, until the claimed tasks are finished. Contiguous
ranges keep the data of consecutive tasks on one core, and a thread takes the same share of every job, so a kernel's
consumer tends to find its input in the cache of the core that wrote it (interleaved claims from one shared counter cost
light ResNet-50 a third more CPU time at two threads than at one). A thread runs the chunk, and once the range is empty
adds the tasks it ran from it to its own `tasks_run` counter (a plain add: only that thread writes it, on the cache line
of its own range word) and subtracts them off `unfinished` in one atomic (release: publishes its writes). Chunks and
that one subtraction keep a job of thousands of tiny tasks (a GEMM's zeroing rows) from paying a contended atomic per
task: per task, ShuffleNet's grouped 1x1 convolutions ran three times slower at two threads than at one. The caller
claims and steals until every range is empty, then waits for `unfinished` to reach zero (acquire) before it releases
`busy`. So the caller waits only for tasks that some thread has claimed: a worker that wakes late (descheduled on a busy
machine) has its range emptied by the others and holds the caller up by at most the chunk it claimed; one that wakes
during a later job simply helps with that one.
Waiting spins `spin` times with a CPU pause, then sleeps on a futex; a waker calls `futex_wake` only when a waiter
counter says someone sleeps. Counter increment and word re-check are sequentially consistent on both sides, so a
wake-up cannot be lost, and the kernel re-checks the word inside `futex_wait`.

    module = build_pool_module(PoolOptions(spin=0))
    print(module)  # LLVM IR text for runtime.jit.JitModule
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from llvmlite import ir
from llvmlite.ir import instructions

from minimlc.runtime.alloc_guard_ir import add_alloc_guard

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()
BODY = ir.FunctionType(VOID, [PTR, I64]).as_pointer()
"""`void (*)(ptr ctx, i64 task)`; prints as `ptr`, but llvmlite needs the pointee type for indirect calls."""

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98, "riscv64": 98}
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129
_CACHE_LINE = 64
CHUNK_SHIFT = 3
"""A claim takes an eighth of the range's unclaimed tasks (at least one): few atomics for a range of many tiny
tasks, single tasks near its end, where the other threads may still steal."""
WORKER_THREAD_NAME = "minimlc-pool"  # what `top -H` and gdb show for the workers (at most 15 bytes)


class Field(IntEnum):
    """Pool members; the descriptor, the claim counter and the completion counter have a cache line each."""

    GENERATION = 0  # i32 futex word, bumped once per job and at shutdown
    SLEEPERS = 1  # i32 workers asleep on GENERATION
    SHUTDOWN = 2  # i32
    BUSY = 3  # i32 try-lock held by the thread running a parallel_for
    NUM_THREADS = 4  # i32 caller + workers
    BODY = 5  # ptr
    CTX = 6  # ptr
    WORKERS = 7  # ptr to num_threads - 1 WORKER records
    RANGES = 8  # ptr to num_threads RANGE records, the caller's first
    UNFINISHED = 10  # i32 futex word: tasks not yet finished
    CALLER_WAITING = 11  # i32 1 while the caller is asleep on UNFINISHED


POOL_SIZE = 2 * _CACHE_LINE
POOL = ir.LiteralStructType(
    [
        *(I32, I32, I32, I32, I32, PTR, PTR, PTR, PTR, ir.ArrayType(I8, 8)),
        *(I32, I32, ir.ArrayType(I8, 56)),
    ]
)
"""Two cache lines (`tests/runtime/test_threadpool.py` checks the layout against the host's data layout)."""
WORKER = ir.LiteralStructType([I64, PTR, I64, ir.ArrayType(I8, 40)])
"""One worker record per cache line: pthread id, pool, the worker's thread index (1..num_threads-1)."""
RANGE = ir.LiteralStructType([I64, I64, ir.ArrayType(I8, 48)])
"""One thread's unclaimed tasks of the current job, `end << 32 | begin`, and the tasks that thread ran (in the pool's
jobs, not inline), on a cache line of its own."""


@dataclass(frozen=True)
class PoolOptions:
    """How many pause iterations a waiter spins before it sleeps."""

    spin: int = 1 << 15
    """About 0.5 ms at the 16 ns a pause takes on the Xeon (Emerald Rapids) this was measured on: long enough that a
    worker stays awake across the serial gaps between one inference's parallel loops (2048, 34 us, let it fall
    asleep there and each wake-up cost a futex round trip), short enough to stop burning a core soon after a run."""

    def __post_init__(self) -> None:
        if self.spin < 0:
            raise ValueError(f"spin must be >= 0, got {self.spin}")


def _const(type: ir.IntType, value: int) -> ir.Constant:
    return ir.Constant(type, value)


def _store_atomic(b: ir.IRBuilder, value: ir.Value, pointer: ir.Value, ordering: str) -> None:
    # `IRBuilder.store_atomic` insists on a typed pointer, which opaque-pointer GEPs do not give.
    size = value.type.width // 8
    b._insert(instructions.StoreAtomicInstr(b.block, value, pointer, ordering, size))  # pyright: ignore[reportPrivateUsage]


class _PoolModule:
    """Builds the pool's functions into one `ir.Module`."""

    def __init__(self, options: PoolOptions, machine: str) -> None:
        self.options = options
        self.module = ir.Module(name="minimlc_threadpool")
        if machine not in _SYS_FUTEX:
            raise NotImplementedError(f"the minimlc thread pool has no futex syscall number for {machine}")
        self.sys_futex = _SYS_FUTEX[machine]
        declare = self._declare
        self.aligned_alloc = declare("aligned_alloc", PTR, [I64, I64])
        self.free = declare("free", VOID, [PTR])
        self.syscall = declare("syscall", I64, [I64], var_arg=True)
        self.pthread_create = declare("pthread_create", I32, [PTR, PTR, PTR, PTR])
        self.pthread_join = declare("pthread_join", I32, [I64, PTR])
        self.pthread_setname_np = declare("pthread_setname_np", I32, [I64, PTR])
        self.pause = declare("llvm.x86.sse2.pause", VOID, []) if machine == "x86_64" else None

    def _declare(self, name: str, ret: ir.Type, args: list[ir.Type], var_arg: bool = False) -> ir.Function:
        return ir.Function(self.module, ir.FunctionType(ret, args, var_arg=var_arg), name)

    def _define(self, name: str, ret: ir.Type, args: list[ir.Type], internal: bool = False):
        function = self._declare(name, ret, args)
        if internal:
            function.linkage = "internal"
        return function, ir.IRBuilder(function.append_basic_block("entry"))

    def thread_name(self) -> ir.Value:
        """`WORKER_THREAD_NAME` as a C string (what `top -H`, gdb and /proc/<pid>/task/*/comm show)."""
        text = bytearray(WORKER_THREAD_NAME.encode() + b"\0")
        name = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(text)), "worker_thread_name")
        name.global_constant, name.linkage = True, "internal"
        name.initializer = ir.Constant(name.value_type, text)
        return name

    @staticmethod
    def field(b: ir.IRBuilder, pool: ir.Value, member: Field) -> ir.Value:
        return b.gep(pool, [_const(I32, 0), _const(I32, member)], inbounds=True, source_etype=POOL)

    def futex(self, b: ir.IRBuilder, word: ir.Value, op: int, value: ir.Value) -> None:
        number, null = _const(I64, self.sys_futex), ir.Constant(PTR, None)
        b.call(self.syscall, [number, word, _const(I64, op), b.zext(value, I64), null, null, _const(I64, 0)])

    def build(self) -> ir.Module:
        self.serial = self._build_serial()
        self.await_change = self._build_await_change()
        self.notify = self._build_notify()
        self.drain = self._build_drain()
        self.run_tasks = self._build_run_tasks()
        self.worker_main = self._build_worker_main()
        self._build_create()
        self._build_destroy()
        self._build_num_threads()
        self._build_tasks_run()
        self._build_parallel_for()
        return self.module

    @staticmethod
    def count_up(b: ir.IRBuilder, begin: ir.Value, end: ir.Value, body: Callable[[ir.Value], None]) -> None:
        """Emit `for (i = begin; i < end; i++) body(i)` (signed); `b` continues after the loop."""
        function, before = b.function, b.block
        loop, done = function.append_basic_block("loop"), function.append_basic_block("done")
        b.cbranch(b.icmp_signed("<", begin, end), loop, done)
        b.position_at_end(loop)
        index = b.phi(begin.type, "i")
        index.add_incoming(begin, before)
        body(index)
        next_index = b.add(index, ir.Constant(begin.type, 1))
        index.add_incoming(next_index, b.block)
        b.cbranch(b.icmp_signed("<", next_index, end), loop, done)
        b.position_at_end(done)

    def _build_serial(self) -> ir.Function:
        """`serial(body, ctx, begin, end)`: body(ctx, t) for t in [begin, end), on this thread."""
        function, b = self._define("serial", VOID, [BODY, PTR, I64, I64], internal=True)
        body, ctx, begin, end = function.args
        self.count_up(b, begin, end, lambda task: b.call(body, [ctx, task]))
        b.ret_void()
        return function

    def _build_await_change(self) -> ir.Function:
        """`await_change(word, old, waiters) -> i32`: the first value of `*word` other than `old` (acquire)."""
        function, b = self._define("await_change", I32, [PTR, I32, PTR], internal=True)
        word, old, waiters = function.args
        check, pause = function.append_basic_block("check"), function.append_basic_block("pause")
        sleep, changed = function.append_basic_block("sleep"), function.append_basic_block("changed")
        spin_limit = _const(I32, self.options.spin)
        b.branch(check)
        b.position_at_end(check)
        spins = b.phi(I32, "spins")
        current = b.load_atomic(word, "acquire", 4, typ=I32)
        waiting = function.append_basic_block("waiting")
        b.cbranch(b.icmp_unsigned("!=", current, old), changed, waiting)
        b.position_at_end(waiting)
        b.cbranch(b.icmp_unsigned("<", spins, spin_limit), pause, sleep)
        b.position_at_end(pause)
        if self.pause is not None:
            b.call(self.pause, [])
        spun = b.add(spins, _const(I32, 1))
        b.branch(check)
        b.position_at_end(sleep)
        # Counted as a sleeper before the kernel re-checks `*word == old`: a waker that bumps `*word` (seq_cst)
        # and then reads `waiters` (seq_cst) either sees this increment or changed the word before the check.
        b.atomic_rmw("add", waiters, _const(I32, 1), "seq_cst")
        self.futex(b, word, _FUTEX_WAIT_PRIVATE, old)
        b.atomic_rmw("sub", waiters, _const(I32, 1), "seq_cst")
        b.branch(check)
        spins.add_incoming(_const(I32, 0), function.entry_basic_block)
        spins.add_incoming(spun, pause)
        spins.add_incoming(spin_limit, sleep)
        b.position_at_end(changed)
        b.ret(current)
        return function

    def _build_notify(self) -> ir.Function:
        """`notify(word, waiters, count)`: wake up to `count` threads sleeping on `word`, if any sleeps."""
        function, b = self._define("notify", VOID, [PTR, PTR, I32], internal=True)
        word, waiters, count = function.args
        asleep = b.load_atomic(waiters, "seq_cst", 4, typ=I32)
        with b.if_then(b.icmp_unsigned("!=", asleep, _const(I32, 0)), likely=False):
            self.futex(b, word, _FUTEX_WAKE_PRIVATE, count)
        b.ret_void()
        return function

    @staticmethod
    def range_word(b: ir.IRBuilder, pool: ir.Value, thread: ir.Value, member: int = 0) -> ir.Value:
        """The address of thread `thread`'s range word (member 0) or `tasks_run` counter (member 1)."""
        ranges = b.load(_PoolModule.field(b, pool, Field.RANGES), typ=PTR)
        return b.gep(ranges, [thread, _const(I32, member)], inbounds=True, source_etype=RANGE)

    def _build_drain(self) -> ir.Function:
        """`drain(pool, word, from_back, tasks_run)`: claim chunks of tasks from the range at `word` (from its front, or
        from its back when stealing) and run them until the range is empty; then add the tasks it ran to `*tasks_run`
        and take them off `unfinished` in one atomic subtraction."""
        function, b = self._define("drain", VOID, [PTR, PTR, I1, PTR], internal=True)
        pool, word, from_back, tasks_run = function.args
        unfinished = self.field(b, pool, Field.UNFINISHED)
        entry = b.block
        first = b.load_atomic(word, "monotonic", 8, typ=I64)
        check, claim, run = (function.append_basic_block(name) for name in ("check", "claim", "run"))
        done = function.append_basic_block("done")
        b.branch(check)
        b.position_at_end(check)
        current = b.phi(I64, "range")
        current.add_incoming(first, entry)
        ran = b.phi(I32, "ran")
        ran.add_incoming(_const(I32, 0), entry)
        begin, end = b.trunc(current, I32), b.trunc(b.lshr(current, _const(I64, 32)), I32)
        b.cbranch(b.icmp_unsigned("<", begin, end), claim, done)
        b.position_at_end(claim)
        chunk = b.lshr(b.sub(end, begin), _const(I32, CHUNK_SHIFT))
        chunk = b.select(b.icmp_unsigned("==", chunk, _const(I32, 0)), _const(I32, 1), chunk)
        start = b.select(from_back, b.sub(end, chunk), begin)
        wide = b.zext(chunk, I64)
        claimed = b.select(from_back, b.sub(current, b.shl(wide, _const(I64, 32))), b.add(current, wide))
        swapped = b.cmpxchg(word, current, claimed, "acquire", "monotonic")
        current.add_incoming(b.extract_value(swapped, 0), claim)
        ran.add_incoming(ran, claim)
        b.cbranch(b.extract_value(swapped, 1), run, check)
        b.position_at_end(run)
        body = b.load(self.field(b, pool, Field.BODY), typ=BODY)
        ctx = b.load(self.field(b, pool, Field.CTX), typ=PTR)
        b.call(self.serial, [body, ctx, b.zext(start, I64), b.zext(b.add(start, chunk), I64)])
        current.add_incoming(b.load_atomic(word, "monotonic", 8, typ=I64), b.block)
        ran.add_incoming(b.add(ran, chunk), b.block)
        b.branch(check)
        b.position_at_end(done)
        with b.if_then(b.icmp_unsigned("!=", ran, _const(I32, 0))):
            b.store(b.add(b.load(tasks_run, typ=I64), b.zext(ran, I64)), tasks_run)
            remaining = b.atomic_rmw("sub", unfinished, ran, "seq_cst")
            with b.if_then(b.icmp_unsigned("==", remaining, ran)):
                b.call(self.notify, [unfinished, self.field(b, pool, Field.CALLER_WAITING), _const(I32, 1)])
        b.ret_void()
        return function

    def _build_run_tasks(self) -> ir.Function:
        """`run_tasks(pool, thread)`: run the tasks of thread `thread`'s own range, then steal the others' until every
        range of the current job is empty."""
        function, b = self._define("run_tasks", VOID, [PTR, I64], internal=True)
        pool, thread = function.args
        tasks_run = self.range_word(b, pool, thread, member=1)
        b.call(self.drain, [pool, self.range_word(b, pool, thread), _const(I1, 0), tasks_run])
        threads = b.zext(b.load(self.field(b, pool, Field.NUM_THREADS), typ=I32), I64)

        def steal(offset: ir.Value) -> None:
            victim = b.urem(b.add(thread, offset), threads)
            b.call(self.drain, [pool, self.range_word(b, pool, victim), _const(I1, 1), tasks_run])

        self.count_up(b, _const(I64, 1), threads, steal)
        b.ret_void()
        return function

    def _build_worker_main(self) -> ir.Function:
        """`worker_main(record) -> null`: the pthread start routine; one job per generation until shutdown."""
        function, b = self._define("worker_main", PTR, [PTR], internal=True)
        record = function.args[0]
        zero = _const(I32, 0)
        pool = b.load(b.gep(record, [zero, _const(I32, 1)], source_etype=WORKER), typ=PTR)
        thread = b.load(b.gep(record, [zero, _const(I32, 2)], source_etype=WORKER), typ=I64)
        entry, wait = b.block, function.append_basic_block("wait")
        work, stop = function.append_basic_block("work"), function.append_basic_block("stop")
        b.branch(wait)
        b.position_at_end(wait)
        seen = b.phi(I32, "seen")
        generation_word, sleepers = self.field(b, pool, Field.GENERATION), self.field(b, pool, Field.SLEEPERS)
        generation = b.call(self.await_change, [generation_word, seen, sleepers])
        shutdown = b.load_atomic(self.field(b, pool, Field.SHUTDOWN), "monotonic", 4, typ=I32)
        b.cbranch(b.icmp_unsigned("!=", shutdown, zero), stop, work)
        b.position_at_end(work)
        b.call(self.run_tasks, [pool, thread])
        seen.add_incoming(zero, entry)
        seen.add_incoming(generation, b.block)
        b.branch(wait)
        b.position_at_end(stop)
        b.ret(ir.Constant(PTR, None))
        return function

    def _build_create(self) -> None:
        """`minimlc_pool_create(num_threads)`: a zeroed pool plus its workers; fewer if pthread_create fails."""
        function, b = self._define("minimlc_pool_create", PTR, [I32])
        requested = b.select(b.icmp_signed("<", function.args[0], _const(I32, 1)), _const(I32, 1), function.args[0])
        line = _const(I64, _CACHE_LINE)
        null = ir.Constant(PTR, None)
        pool = b.call(self.aligned_alloc, [line, _const(I64, POOL_SIZE)])
        with b.if_then(b.icmp_unsigned("==", pool, null), likely=False):
            b.ret(null)
        b.store(ir.Constant(POOL, None), pool)
        b.store(requested, self.field(b, pool, Field.NUM_THREADS))
        workers = b.call(self.aligned_alloc, [line, b.mul(line, b.zext(requested, I64))])
        with b.if_then(b.icmp_unsigned("==", workers, null), likely=False):
            b.call(self.free, [pool])
            b.ret(null)
        b.store(workers, self.field(b, pool, Field.WORKERS))
        ranges = b.call(self.aligned_alloc, [line, b.mul(line, b.zext(requested, I64))])
        with b.if_then(b.icmp_unsigned("==", ranges, null), likely=False):
            b.call(self.free, [workers])
            b.call(self.free, [pool])
            b.ret(null)
        b.store(ranges, self.field(b, pool, Field.RANGES))
        empty = ir.Constant(RANGE, None)
        self.count_up(
            b, _const(I32, 0), requested, lambda index: b.store(empty, b.gep(ranges, [index], source_etype=RANGE))
        )

        def spawn(index: ir.Value) -> None:
            zero = _const(I32, 0)
            record = b.gep(workers, [b.sub(index, _const(I32, 1))], source_etype=WORKER)
            b.store(pool, b.gep(record, [zero, _const(I32, 1)], source_etype=WORKER))
            b.store(b.zext(index, I64), b.gep(record, [zero, _const(I32, 2)], source_etype=WORKER))
            status = b.call(self.pthread_create, [record, null, self.worker_main, record])
            with b.if_then(b.icmp_signed("!=", status, zero), likely=False):
                b.store(index, self.field(b, pool, Field.NUM_THREADS))  # workers 1..index-1 and the caller
                b.ret(pool)
            thread_id = b.load(b.gep(record, [zero, zero], source_etype=WORKER), typ=I64)
            b.call(self.pthread_setname_np, [thread_id, name])  # before create returns: no unnamed moment

        name = self.thread_name()
        self.count_up(b, _const(I32, 1), requested, spawn)
        b.ret(pool)

    def _build_destroy(self) -> None:
        """`minimlc_pool_destroy(pool)`: stop and join the workers, free the pool; the pool must be idle."""
        function, b = self._define("minimlc_pool_destroy", VOID, [PTR])
        pool = function.args[0]
        _store_atomic(b, _const(I32, 1), self.field(b, pool, Field.SHUTDOWN), "monotonic")
        generation = self.field(b, pool, Field.GENERATION)
        b.atomic_rmw("add", generation, _const(I32, 1), "seq_cst")  # release: workers see SHUTDOWN with it
        b.call(self.notify, [generation, self.field(b, pool, Field.SLEEPERS), _const(I32, 0x7FFFFFFF)])
        threads = b.load(self.field(b, pool, Field.NUM_THREADS), typ=I32)
        workers = b.load(self.field(b, pool, Field.WORKERS), typ=PTR)

        def join(index: ir.Value) -> None:
            record = b.gep(workers, [b.sub(index, _const(I32, 1))], source_etype=WORKER)
            thread_id = b.load(b.gep(record, [_const(I32, 0), _const(I32, 0)], source_etype=WORKER), typ=I64)
            b.call(self.pthread_join, [thread_id, ir.Constant(PTR, None)])

        self.count_up(b, _const(I32, 1), threads, join)
        b.call(self.free, [b.load(self.field(b, pool, Field.RANGES), typ=PTR)])
        b.call(self.free, [workers])
        b.call(self.free, [pool])
        b.ret_void()

    def _build_num_threads(self) -> None:
        """`minimlc_pool_num_threads(pool)`: the threads that run tasks, the caller included."""
        function, b = self._define("minimlc_pool_num_threads", I32, [PTR])
        b.ret(b.load(self.field(b, function.args[0], Field.NUM_THREADS), typ=I32))

    def _build_tasks_run(self) -> None:
        """`minimlc_pool_tasks_run(pool, thread)`: the tasks thread `thread` ran in the pool's jobs so far."""
        function, b = self._define("minimlc_pool_tasks_run", I64, [PTR, I32])
        pool, thread = function.args
        b.ret(b.load(self.range_word(b, pool, thread, member=1), typ=I64))

    def _build_parallel_for(self) -> None:
        """`minimlc_parallel_for(pool, body, ctx, n_tasks)`: run the tasks on the pool, or inline when it is busy."""
        function, b = self._define("minimlc_parallel_for", VOID, [PTR, BODY, PTR, I64])
        pool, body, ctx, n_tasks = function.args
        inline, dispatch = function.append_basic_block("inline"), function.append_basic_block("dispatch")
        threads = b.load(self.field(b, pool, Field.NUM_THREADS), typ=I32)
        # One thread, one task, or more tasks than `unfinished` (32 bits) counts: run them here.
        few_or_many = b.icmp_unsigned(">", b.sub(n_tasks, _const(I64, 2)), _const(I64, 0x7FFFFFFF - 2))
        alone = b.or_(b.icmp_signed("==", threads, _const(I32, 1)), few_or_many)
        with b.if_then(alone):
            b.branch(inline)
        taken = b.cmpxchg(self.field(b, pool, Field.BUSY), _const(I32, 0), _const(I32, 1), "acquire", "monotonic")
        b.cbranch(b.extract_value(taken, 1), dispatch, inline)
        b.position_at_end(inline)
        b.call(self.serial, [body, ctx, _const(I64, 0), n_tasks])
        b.ret_void()

        b.position_at_end(dispatch)
        b.store(body, self.field(b, pool, Field.BODY))
        b.store(ctx, self.field(b, pool, Field.CTX))
        unfinished = self.field(b, pool, Field.UNFINISHED)
        _store_atomic(b, b.trunc(n_tasks, I32), unfinished, "monotonic")
        thread_count = b.zext(threads, I64)

        def give_range(thread: ir.Value) -> None:
            begin = b.udiv(b.mul(n_tasks, thread), thread_count)
            end = b.udiv(b.mul(n_tasks, b.add(thread, _const(I64, 1))), thread_count)
            word = b.or_(b.shl(end, _const(I64, 32)), begin)
            _store_atomic(b, word, self.range_word(b, pool, thread), "release")

        self.count_up(b, _const(I64, 0), thread_count, give_range)
        generation = self.field(b, pool, Field.GENERATION)
        b.atomic_rmw("add", generation, _const(I32, 1), "seq_cst")
        b.call(self.notify, [generation, self.field(b, pool, Field.SLEEPERS), _const(I32, 0x7FFFFFFF)])
        b.call(self.run_tasks, [pool, _const(I64, 0)])
        before_wait, wait = b.block, function.append_basic_block("wait")
        finish = function.append_basic_block("finish")
        first = b.load_atomic(unfinished, "acquire", 4, typ=I32)
        b.cbranch(b.icmp_unsigned("==", first, _const(I32, 0)), finish, wait)
        b.position_at_end(wait)
        left = b.phi(I32, "left")
        left.add_incoming(first, before_wait)
        now = b.call(self.await_change, [unfinished, left, self.field(b, pool, Field.CALLER_WAITING)])
        left.add_incoming(now, wait)
        b.cbranch(b.icmp_unsigned("==", now, _const(I32, 0)), finish, wait)
        b.position_at_end(finish)
        _store_atomic(b, _const(I32, 0), self.field(b, pool, Field.BUSY), "release")
        b.ret_void()


def build_pool_module(options: PoolOptions = PoolOptions(), machine: str | None = None) -> ir.Module:
    """The pool's LLVM module: the five `minimlc_pool_*`/`minimlc_parallel_for` functions and their helpers, and the
    allocation guard model code runs under (`runtime.alloc_guard_ir`); for CPU architecture `machine` (`x86_64`,
    `aarch64`, `riscv64`; default: the host's)."""
    module = _PoolModule(options, machine or platform.machine()).build()
    add_alloc_guard(module)
    return module
