"""Measuring candidates: a task's standalone module scheduled with one config, compiled and timed on random buffers,
in a worker process, so that a candidate that crashes, hangs or fails to lower costs that candidate only.

`Measurer` keeps one worker (a `spawn`ed process: no fork of a tuner that may hold threads) and sends it one job
at a time; a job that does not answer within `timeout` seconds, or whose worker dies, is a failed measurement and
the worker is replaced. `measure_candidate` is the job itself, also callable in this process:

    with Measurer(threads=1, timeout=30) as measurer:
        result = measurer.measure(task, task.space.default())   # Result(latency=1.2e-05, error=None)
        result = measurer.measure(task, other, paired=True)      # Result(latency=1.1e-05, baseline=1.3e-05)

Paired: on a machine other processes load, latencies drift by more than most schedules differ (the same build of
light ResNet-50 timed 96 ms, then 147 ms, minutes apart), so a candidate timed alone may win by the luck of a quiet
moment. A paired job also times the task's default config in the same worker (compiled once per task and kept),
batch for batch in alternation, and returns both medians: their ratio is what the tuner compares.

Clock: on one thread, candidates are timed by the worker thread's CPU time (`time.thread_time`), not wall time: a
one-thread pool runs every task in the caller, and CPU time does not advance while other processes hold the core.
Timed by wall time on the loaded 2-core machine, one build of a 1x1 convolution measured 0.45 ms in one batch and
1.4 ms in the next, and the tuner recorded a 2.8x "win" over the default that the model did not show (1.05x); by
thread CPU time the same pairs agreed within 3%. Buffers are 64-byte aligned, as the runtime's are.

Cache: `Measurer(cache="cold")` flushes a candidate's weights (and packed copies) and its inputs and output larger
than the L2 from the caches before each timed call, as a model larger than the L2 finds them (`cache_flush.py`);
the calls are then timed one by one.
"""

from __future__ import annotations

import multiprocessing
import signal
import statistics
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any

import numpy as np

from minimlc.lowering.schedule.space import Config
from minimlc.runtime.compiled import aligned_empty

AFTER_SCHEDULE = [
    "loop-fuse-kernels",
    "loop-plan-memory",
    "loop-outline-parallel",
    "loop-to-scf",
    "cse",
    "convert-scf-to-cf",
    "convert-to-llvm",
    "reconcile-unrealized-casts",
]
"""What the standalone module goes through once scheduled: the rest of the O3 pipeline for one kernel (fused with
its epilogue kernel, when its task brings one: `loop_fuse_kernels.epilogue_call`)."""


@dataclass(frozen=True)
class Result:
    """A measurement: the median latency in seconds, or the reason there is none."""

    latency: float | None
    error: str | None = None
    baseline: float | None = None
    """Paired jobs: the default config's median, timed in alternation with the candidate."""


def measure_candidate(job: dict[str, Any]) -> Result:
    """Schedule `job["module"]`'s kernel with `job["config"]`, compile it and time it (see `Measurer.measure`); with
    `job["baseline"]` (a config), time that config's build too, in alternation."""
    candidate = _build(job, job["config"])
    clock = candidate_clock(job["threads"])
    if isinstance(candidate, Result):
        return candidate
    flusher = _cold_evictor() if job.get("cache") == "cold" else None
    timing = _Timing(job["min_seconds"], job["repeats"], clock, flusher)
    if job.get("baseline") is None:
        return Result(timing.time(candidate))
    key = (job["module"], repr(sorted(job["baseline"].items())), job["threads"])
    if key not in _BASELINES:
        _BASELINES.clear()  # one task's baseline at a time: the tuner measures a task's candidates in a row
        _BASELINES[key] = _build(job, job["baseline"])
    baseline = _BASELINES[key]
    if isinstance(baseline, Result):
        return Result(timing.time(candidate))
    latency, reference = timing.time_pair(candidate, baseline)
    return Result(latency, None, reference)


_BASELINES: dict[tuple[str, str, int], Any] = {}
"""The worker's compiled default config of the task it measures now (a call, or the Result saying why not)."""


def _build(job: dict[str, Any], config: Config) -> _Call | Result:
    """A call running `job`'s kernel scheduled with `config` once on random buffers, or a failed Result."""
    from minimlc.driver.compiler import compile_model

    rng = np.random.default_rng(0)
    scheduled = scheduled_model(job, config, rng)
    if isinstance(scheduled, Result):
        return scheduled
    imported, target = scheduled
    compiled = compile_model(imported, AFTER_SCHEDULE, target=target, jobs=1)
    return _bound_call(compiled, imported.inputs, imported.outputs, job["threads"], rng)


def scheduled_model(job: dict[str, Any], config: Config, rng: np.random.Generator) -> tuple[Any, Any] | Result:
    """`job`'s standalone module with its kernel scheduled with `config` (and its epilogue with the default), as an
    imported model with weights drawn from `rng` (`random_weights`), and its target; or a failed Result."""
    from xdsl.parser import Parser

    from minimlc.frontend.onnx import ImportedModel
    from minimlc.frontend.signature import TensorInfo
    from minimlc.lowering.pipeline import make_context
    from minimlc.lowering.schedule.default_schedule import kernel_space, schedule_kernel
    from minimlc.lowering.schedule.kernel_analysis import kernels_of
    from minimlc.lowering.target import target_of

    ctx = make_context()
    module = Parser(ctx, job["module"]).parse_module()
    target = target_of(module)
    kernel, *epilogue = kernels_of(module)  # the task's kernel, then the elementwise one fused after it (if any)
    space = kernel_space(module, kernel, target)
    assert space is not None
    if schedule_kernel(ctx, module, space, config, strict=True) is None:
        return Result(None, "the schedule does not lower")
    for other in epilogue:
        other_space = kernel_space(module, other, target)
        if other_space is not None:
            schedule_kernel(ctx, module, other_space, other_space.space.default())
    inputs = [TensorInfo(f"in{i}", tuple(shape), np.dtype(dtype)) for i, (shape, dtype) in enumerate(job["inputs"])]
    shape, dtype = job["output"]
    output = TensorInfo("out", tuple(shape), np.dtype(dtype))
    return ImportedModel(module, random_weights(rng, job["weights"]), inputs, [output]), target


def random_weights(rng: np.random.Generator, buffers: Any) -> dict[str, np.ndarray]:
    """Random weights for a task (`w0`, `w1`, ...: shapes and dtypes), aligned as the runtime aligns them: normals
    for floats; for int32 (a bfloat16 build's words) words of two normals in bfloat16; for other integers (int8
    weights) values across the type's range."""
    weights = (_random_weight(rng, tuple(shape), np.dtype(kind)) for shape, kind in buffers)
    return {f"w{i}": _aligned(weight) for i, weight in enumerate(weights)}


def _random_weight(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.int32:
        halves = rng.standard_normal((*shape, 2)).astype(np.float32).view(np.uint32) >> 16
        return (halves[..., 0] | halves[..., 1] << 16).astype(np.uint32).view(np.int32)
    limits = np.iinfo(dtype)
    return rng.integers(limits.min, limits.max, shape, dtype=dtype, endpoint=True)


def _bound_call(compiled: Any, inputs: list[Any], outputs: list[Any], threads: int, rng: np.random.Generator) -> _Call:
    """`compiled` bound to random inputs, zeroed outputs and (if it runs parallel loops) a pool of `threads`."""
    from minimlc.runtime.threadpool import ThreadPool

    buffers = [_aligned(random_input(rng, info)) for info in inputs]
    buffers += [_aligned(np.zeros(info.shape, info.dtype)) for info in outputs]
    addresses = [buffer.ctypes.data for buffer in buffers]
    pool = None
    if compiled.pool_slot is not None:
        pool = ThreadPool(threads)
        addresses.insert(compiled.pool_slot, pool.address)
    args = np.array([*addresses, *compiled.weight_addresses], dtype=np.uintp)
    return _Call(compiled, buffers, pool, args)


def measure_builds(job: dict[str, Any]) -> Result:
    """Time `job["model"]` (serialized ONNX, for `job["input_shapes"]`) built with each of `job["builds"]` (two pass
    lists), in alternating batches: the first build's latency, the second's as the baseline (`tuner/algorithms.py`)."""
    from minimlc.driver.compiler import compile_model
    from minimlc.frontend.onnx import import_model

    calls = []
    for passes in job["builds"]:
        imported = import_model(job["model"], job.get("input_shapes"))
        compiled = compile_model(imported, passes, target=job["target"], jobs=1)
        calls.append(_bound_call(compiled, imported.inputs, imported.outputs, job["threads"], np.random.default_rng(0)))
    timing = _Timing(job["min_seconds"], job["repeats"], candidate_clock(job["threads"]))
    first, second = timing.time_pair(*calls)
    return Result(first, None, second)


class _Call:
    """One compiled candidate bound to its buffers (kept alive as long as it), called with `call()`."""

    def __init__(self, compiled: Any, buffers: list[np.ndarray], pool: Any, args: np.ndarray) -> None:
        self._compiled, self._buffers, self._pool, self._args = compiled, buffers, pool, args
        l2_bytes = compiled.jit.target.cache_bytes[1]
        self.touched = [
            *(buffer for buffer in buffers if buffer.nbytes > l2_bytes),
            *compiled.weights.values(),
            *compiled.precomputed,
        ]
        """What a cold call finds out of cache (`cache_flush`): the weights and their packed copies, read once per
        inference, and the inputs and output larger than the L2, which cannot have stayed in the core's caches
        since their producer ran."""

    def __call__(self) -> None:
        self._compiled.entry(self._args.ctypes.data)


_COLD: list[Any] = []


def _cold_evictor() -> Any:
    """The worker's cold `CacheEvictor` (JIT-compiled on first use)."""
    from minimlc.tuner.cache_flush import CacheEvictor

    if not _COLD:
        _COLD.append(CacheEvictor("cold"))
    return _COLD[0]


def _aligned(array: np.ndarray) -> np.ndarray:
    """A copy of `array` aligned as the runtime aligns the buffers it passes to native code."""
    copy = aligned_empty(array.shape, array.dtype)
    copy[...] = array
    return copy


def random_input(rng: np.random.Generator, info: Any) -> np.ndarray:
    """Normals for a float tensor (`info`: shape and dtype), zeros for an integer one."""
    if np.issubdtype(info.dtype, np.floating):
        return rng.standard_normal(info.shape).astype(info.dtype)
    return np.zeros(info.shape, info.dtype)  # integer buffers hold indices: zero is always in range


def candidate_clock(threads: int) -> Callable[[], float]:
    """The clock candidates are timed with: on one thread, the calling thread's CPU time (a one-thread pool runs
    every task in the caller), which a process preempting the worker does not advance; on more threads, wall time."""
    return time.thread_time if threads == 1 else time.perf_counter


@dataclass(frozen=True)
class _Timing:
    """How calls are timed: medians over `repeats` batches of calls lasting at least `min_seconds` each, by `clock`;
    with an `evictor`, the buffers a model would not find in cache (`_Call.touched`) are flushed before each call,
    and only the calls are timed."""

    min_seconds: float
    repeats: int
    clock: Callable[[], float]
    evictor: Any = None

    def time(self, call: _Call) -> float:
        """Median seconds per call of `call`."""
        number = self._calls_per_batch(call)
        return statistics.median(self._batch(call, number) for _ in range(self.repeats))

    def time_pair(self, first: _Call, second: _Call) -> tuple[float, float]:
        """Median seconds per call of `first` and `second`, batches taken in alternation (the order flipping every
        batch), so that the machine's load hits both alike."""
        calls = (first, second)
        numbers = [self._calls_per_batch(call) for call in calls]
        batches: tuple[list[float], list[float]] = ([], [])
        for index in range(2 * self.repeats):
            for which in (0, 1) if index % 2 == 0 else (1, 0):
                batches[which].append(self._batch(calls[which], numbers[which]))
        return statistics.median(batches[0]), statistics.median(batches[1])

    def _calls_per_batch(self, call: _Call) -> int:
        call()  # warm-up: pool start, page faults
        return max(1, int(self.min_seconds / max(self._batch(call, 1), 1e-7)))

    def _batch(self, call: _Call, number: int) -> float:
        """Seconds per call over `number` calls."""
        if self.evictor is None:
            start = self.clock()
            for _ in range(number):
                call()
            return (self.clock() - start) / number
        total = 0.0
        for _ in range(number):
            self.evictor.evict(call.touched)
            start = self.clock()
            call()
            total += self.clock() - start
        return total / number


def _worker(connection: Connection) -> None:
    """A measuring process: answers each (function, job) with `function(job)`, a Result, until the parent closes the
    pipe (then it leaves quietly, even with an answer the parent no longer waits for). Ctrl-C is the parent's to
    handle: the worker ignores SIGINT (and starts with it ignored, `_start_without_sigint`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            function, job = connection.recv()
        except (EOFError, OSError):
            return
        try:
            result = function(job)
        except Exception as error:
            lines = traceback.format_exception_only(type(error), error)
            result = Result(None, f"failed to build: {lines[-1].strip()}")
        try:
            connection.send(result)
        except OSError:  # BrokenPipeError: the parent timed the job out, or stopped
            return


class Measurer:
    """Times candidates in a worker process with a timeout (see the module docstring)."""

    def __init__(
        self,
        threads: int = 1,
        timeout: float = 60.0,
        min_seconds: float = 0.01,
        repeats: int = 5,
        cache: str = "warm",
    ):
        self.threads, self.timeout, self.min_seconds, self.repeats = threads, timeout, min_seconds, repeats
        self.cache = cache
        """Where each candidate's weights are when a timed call starts (`cache_flush.CACHE_MODES`)."""
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._connection: Connection | None = None

    def measure(self, task: Any, config: Config, paired: bool = False, cache: str | None = None) -> Result:
        """The latency of `task`'s kernel scheduled with `config`, or the reason it has none; `paired`: and the
        default config's, timed in alternation with it (see the module docstring); `cache`: this call's cache state
        instead of the measurer's."""
        return self.run(measure_candidate, self.job(task, config, paired, cache))

    def job(self, task: Any, config: Config, paired: bool = False, cache: str | None = None) -> dict[str, Any]:
        """What `measure` sends the worker: the task's module and buffers, the config and how to time it."""
        return {
            "module": task.module,
            "config": config,
            "inputs": task.inputs,
            "weights": task.weights,
            "output": task.output,
            "threads": self.threads,
            "min_seconds": self.min_seconds,
            "repeats": self.repeats,
            "baseline": task.space.default() if paired else None,
            "cache": cache or self.cache,
        }

    def run(self, function: Callable[[dict[str, Any]], Result], job: dict[str, Any]) -> Result:
        """`function(job)` in the worker (a module-level function, picklable by name), within the timeout."""
        connection = self._worker_connection()
        connection.send((function, job))
        if not connection.poll(self.timeout):
            self.close(wait=0.0)  # it may be hung: no answer is awaited
            return Result(None, f"timed out after {self.timeout:g} s")
        try:
            return connection.recv()
        except EOFError:
            code = self._process.exitcode if self._process is not None else None
            self.close()
            return Result(None, f"the worker died (exit code {code})")

    def _worker_connection(self) -> Connection:
        if self._process is None or not self._process.is_alive():
            self.close()
            parent, child = self._context.Pipe()
            self._process = self._context.Process(target=_worker, args=(child,), daemon=True)
            _start_without_sigint(self._process)
            child.close()
            self._connection = parent
        assert self._connection is not None
        return self._connection

    def close(self, wait: float = 1.0) -> None:
        """Stop the worker, killing it if it has not left `wait` seconds after its pipe closed (a later `measure`
        starts a new one)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            self._process.join(timeout=wait)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def __enter__(self) -> Measurer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _start_without_sigint(process: Any) -> None:
    """Start `process` with SIGINT ignored from its first instruction (a Ctrl-C at the terminal reaches the whole
    process group: the parent stops the tuning, the worker would print a KeyboardInterrupt traceback while it
    starts); only the main thread can change a signal's handler, elsewhere the worker ignores it once running."""
    if threading.current_thread() is not threading.main_thread():
        process.start()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        process.start()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)  # None: set outside Python
