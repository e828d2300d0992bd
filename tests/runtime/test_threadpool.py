"""The native thread pool: every task exactly once, real concurrency, inline paths, independent pools, shutdown."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from llvmlite import ir

from minimlc.runtime.jit import JitModule, target_machine
from minimlc.runtime.threadpool import ThreadPool, register_symbols, resolve_num_threads
from minimlc.runtime.threadpool_ir import POOL, POOL_SIZE, RANGE, WORKER, WORKER_THREAD_NAME, Field, PoolOptions

BODIES = """
declare void @minimlc_parallel_for(ptr, ptr, ptr, i64)
declare i64 @pthread_self()
declare i64 @time(ptr)
declare i32 @sched_yield()

; counts[task] += 1
define void @count(ptr %counts, i64 %task) {
  %slot = getelementptr inbounds i64, ptr %counts, i64 %task
  %old = atomicrmw add ptr %slot, i64 1 monotonic
  ret void
}

; threads[task] = pthread_self()
define void @record_thread(ptr %threads, i64 %task) {
  %slot = getelementptr inbounds i64, ptr %threads, i64 %task
  %self = call i64 @pthread_self()
  store i64 %self, ptr %slot
  ret void
}

; *counter += 1, then wait until *counter >= 2, yielding the core between checks, for at most 60 s of wall time;
; returns the count seen (1 if the other task never arrived)
define i64 @arrive_and_wait(ptr %counter) {
entry:
  %ignored = atomicrmw add ptr %counter, i64 1 seq_cst
  %now = call i64 @time(ptr null)
  %deadline = add i64 %now, 60
  br label %wait
wait:
  %arrived = load atomic i64, ptr %counter acquire, align 8
  %both = icmp sge i64 %arrived, 2
  br i1 %both, label %done, label %check_time
check_time:
  %time = call i64 @time(ptr null)
  %late = icmp sgt i64 %time, %deadline
  br i1 %late, label %done, label %yield
yield:
  %yielded = call i32 @sched_yield()
  br label %wait
done:
  ret i64 %arrived
}

; ctx = {i64 arrived, i64 threads[n]}: wait until two tasks have started, so that both threads of a two-thread
; pool take part; threads[task] = pthread_self(); then about 20 us of volatile loads
define void @record_thread_together(ptr %ctx, i64 %task) {
entry:
  %arrived = call i64 @arrive_and_wait(ptr %ctx)
  %index = add i64 %task, 1
  %slot = getelementptr inbounds i64, ptr %ctx, i64 %index
  %self = call i64 @pthread_self()
  store i64 %self, ptr %slot
  br label %busy
busy:
  %i = phi i64 [ 0, %entry ], [ %i.next, %busy ]
  %loaded = load volatile i64, ptr %slot
  %i.next = add i64 %i, 1
  %done = icmp sge i64 %i.next, 20000
  br i1 %done, label %exit, label %busy
exit:
  ret void
}

; ctx = {i64 arrived, i64 seen[2]}: arrive, then wait for the other task; seen[task] = arrivals seen
define void @rendezvous(ptr %ctx, i64 %task) {
  %arrived = call i64 @arrive_and_wait(ptr %ctx)
  %index = add i64 %task, 1
  %slot = getelementptr inbounds i64, ptr %ctx, i64 %index
  store i64 %arrived, ptr %slot
  ret void
}

; ctx = {ptr pool, ptr threads, i64 inner}: runs record_thread over row `task` (inner tasks) on the same pool
define void @nested(ptr %ctx, i64 %task) {
  %pool = load ptr, ptr %ctx
  %threads_slot = getelementptr inbounds ptr, ptr %ctx, i64 1
  %threads = load ptr, ptr %threads_slot
  %inner_slot = getelementptr inbounds ptr, ptr %ctx, i64 2
  %inner = load i64, ptr %inner_slot
  %offset = mul i64 %task, %inner
  %row = getelementptr inbounds i64, ptr %threads, i64 %offset
  call void @minimlc_parallel_for(ptr %pool, ptr @record_thread, ptr %row, i64 %inner)
  ret void
}
"""

OPTIONS = [PoolOptions(), PoolOptions(spin=0)]


@pytest.fixture(scope="module")
def bodies() -> JitModule:
    register_symbols()
    return JitModule(BODIES)


def pool_workers() -> set[str]:
    """The kernel's ids of this process's threads that carry the pool workers' name."""
    workers = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except FileNotFoundError:  # the thread exited after the listing
            continue
        if name == WORKER_THREAD_NAME:
            workers.add(tid)
    return workers


def assert_threads_exit(workers: set[str]) -> None:
    """Assert the joined `workers` left the process: a joined thread can stay listed in /proc for a moment after
    pthread_join returns (the kernel wakes the joiner before it reaps the thread), so poll for a few seconds."""
    deadline = time.monotonic() + 5.0
    while workers & pool_workers() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert not workers & pool_workers(), f"worker threads {sorted(workers & pool_workers())} are still running"


def run(pool: ThreadPool, bodies: JitModule, name: str, ctx: np.ndarray, n_tasks: int) -> None:
    pool.run_tasks(bodies.function_address(name), ctx.ctypes.data, n_tasks)


def caller_thread() -> int:
    pthread_self = ctypes.CDLL(None).pthread_self
    pthread_self.restype = ctypes.c_ulong
    return pthread_self()


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
@pytest.mark.parametrize("num_threads", [1, 2, 3])
@pytest.mark.parametrize("n_tasks", [0, 1, 2, 5, 1000])
def test_every_task_runs_exactly_once(bodies: JitModule, options: PoolOptions, num_threads: int, n_tasks: int) -> None:
    counts = np.zeros(max(n_tasks, 1) + 1, np.int64)
    with ThreadPool(num_threads, options) as pool:
        assert pool.num_threads == num_threads
        for _ in range(50):
            run(pool, bodies, "count", counts, n_tasks)
        dispatched = num_threads > 1 and n_tasks > 1  # else the caller runs the tasks inline, uncounted
        assert sum(pool.task_counts()) == (50 * n_tasks if dispatched else 0)
    np.testing.assert_array_equal(counts[:n_tasks], 50)
    assert counts[n_tasks:].sum() == 0, "a task index outside [0, n_tasks) ran"


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
def test_two_threads_run_tasks_concurrently(bodies: JitModule, options: PoolOptions) -> None:
    ctx = np.zeros(3, np.int64)
    with ThreadPool(2, options) as pool:
        run(pool, bodies, "rendezvous", ctx, 2)
        assert pool.task_counts() == [1, 1]
    np.testing.assert_array_equal(ctx, [2, 2, 2], "each task should have seen the other arrive")


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
def test_two_threads_take_contiguous_ranges(bodies: JitModule, options: PoolOptions) -> None:
    """Each thread runs the front of its own half and steals from the back of the other's: along the task indices
    the running thread changes at most twice (with one shared countdown the two threads interleave)."""
    with ThreadPool(2, options) as pool:
        for _ in range(5):
            ctx = np.zeros(1 + 200, np.uint64)
            run(pool, bodies, "record_thread_together", ctx, 200)
            threads = ctx[1:]
            assert len(set(threads.tolist())) == 2
            changes = int(np.count_nonzero(threads[1:] != threads[:-1]))
            assert changes <= 2, f"the running thread changed {changes} times along the tasks"
        counts = pool.task_counts()
        assert sum(counts) == 5 * 200
        assert min(counts) > 0, counts


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
@pytest.mark.parametrize("num_threads", [2, 3])
def test_task_counts_add_up_and_every_thread_takes_part(
    bodies: JitModule, options: PoolOptions, num_threads: int
) -> None:
    """Each job's tasks are counted once, by the thread that ran them; with each task waiting (bounded) for a second
    one to start, no job runs on the caller alone."""
    with ThreadPool(num_threads, options) as pool:
        assert pool.task_counts() == [0] * num_threads
        counts = np.zeros(1001, np.int64)
        for _ in range(20):
            run(pool, bodies, "count", counts, 1000)
        assert sum(pool.task_counts()) == 20 * 1000
        before = pool.task_counts()
        ctx = np.zeros(1 + 2 * num_threads, np.uint64)
        run(pool, bodies, "record_thread_together", ctx, 2 * num_threads)
        ran = [after - earlier for after, earlier in zip(pool.task_counts(), before)]
    np.testing.assert_array_equal(counts[:1000], 20)
    assert sum(ran) == 2 * num_threads
    assert len(set(ctx[1:].tolist())) == sum(1 for tasks in ran if tasks > 0) >= 2, ran


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
def test_more_threads_than_cores_with_late_workers(bodies: JitModule, options: PoolOptions) -> None:
    """Workers that wake after their job was finished by others (or during a later one) run no task twice, skip none."""
    counts = np.zeros(7, np.int64)
    with ThreadPool(4 * (os.cpu_count() or 1), options) as pool:
        for _ in range(5_000):
            run(pool, bodies, "count", counts, 7)
    np.testing.assert_array_equal(counts, 5_000)


def test_one_thread_runs_inline_on_the_caller(bodies: JitModule) -> None:
    threads = np.zeros(64, np.uint64)
    before = pool_workers()
    with ThreadPool(1) as pool:
        assert not pool_workers() - before, "a 1-thread pool starts no worker"
        run(pool, bodies, "record_thread", threads, 64)
        assert pool.task_counts() == [0], "inline tasks are not counted"
    assert set(threads) == {caller_thread()}


def test_nested_parallel_for_runs_inline_in_its_task(bodies: JitModule) -> None:
    outer, inner = 6, 50
    threads = np.zeros((outer, inner), np.uint64)
    with ThreadPool(2) as pool:
        ctx = np.array([pool.address, threads.ctypes.data, inner], np.uint64)
        run(pool, bodies, "nested", ctx, outer)
    assert all(len(set(row)) == 1 for row in threads), "each row should run on its outer task's thread"
    assert np.all(threads != 0)


def test_workers_start_once_and_are_joined_on_close(bodies: JitModule) -> None:
    counts = np.zeros(8, np.int64)
    before = pool_workers()
    pool = ThreadPool(3)
    workers = pool_workers() - before
    assert len(workers) == 2
    for _ in range(200):
        run(pool, bodies, "count", counts, 8)
    assert pool_workers() - before == workers, "parallel_for must not create threads"
    pool.close()
    assert_threads_exit(workers)
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        run(pool, bodies, "count", counts, 8)


def test_garbage_collected_pool_joins_its_workers() -> None:
    before = pool_workers()
    pool = ThreadPool(2)
    workers = pool_workers() - before
    assert len(workers) == 1
    del pool
    assert_threads_exit(workers)


def test_two_pools_work_at_once_from_two_threads(bodies: JitModule) -> None:
    counts = [np.zeros(100, np.int64) for _ in range(2)]
    with ThreadPool(2) as first, ThreadPool(2) as second:
        assert first.address != second.address
        workers = [
            threading.Thread(target=lambda p=p, c=c: [run(p, bodies, "count", c, 100) for _ in range(500)])
            for p, c in ((first, counts[0]), (second, counts[1]))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    for c in counts:
        np.testing.assert_array_equal(c, 500)


def test_concurrent_calls_on_one_pool_all_complete(bodies: JitModule) -> None:
    counts = np.zeros(64, np.int64)
    with ThreadPool(2) as pool:
        callers = [
            threading.Thread(target=lambda: [run(pool, bodies, "count", counts, 64) for _ in range(1000)])
            for _ in range(3)
        ]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
    np.testing.assert_array_equal(counts, 3000)


@pytest.mark.parametrize("options", OPTIONS, ids=["spin", "no-spin"])
def test_many_rapid_calls(bodies: JitModule, options: PoolOptions) -> None:
    counts = np.zeros(2, np.int64)
    with ThreadPool(2, options) as pool:
        for _ in range(10_000):
            run(pool, bodies, "count", counts, 2)
    np.testing.assert_array_equal(counts, 10_000)


def test_num_threads_defaults_to_the_core_count() -> None:
    assert resolve_num_threads(None) == os.cpu_count()
    assert resolve_num_threads(3) == 3


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "2"])
def test_num_threads_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="num_threads"):
        ThreadPool(bad)  # type: ignore[arg-type]


def test_pool_layout_keeps_hot_counters_on_their_own_cache_lines() -> None:
    data = target_machine().target_data
    prefix = lambda field: ir.LiteralStructType(POOL.elements[:field]).get_abi_size(data)  # noqa: E731
    assert POOL.get_abi_size(data) == POOL_SIZE == 128
    assert prefix(Field.UNFINISHED) == 64
    assert WORKER.get_abi_size(data) == RANGE.get_abi_size(data) == 64
