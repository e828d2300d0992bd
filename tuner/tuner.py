"""The tuner: measure candidate schedules of a model's tasks within a trial budget and remember them in a database.

Every measured candidate is appended to the JSON-lines database at once, so a tuning run can stop at any time and a
later run continues from it: each task starts from the records of its key (from this model, an earlier run, or
another model sharing the kernel: printed as reused) and never measures a config twice. Each round, the task with
the most weighted room gets a batch of proposals from its `Search`: calls x (best latency - its float work at the
machine's peak), damped by the trials it already had; tasks with no measurement first. A kernel that already runs
near the FMA peak (`runtime.machine_peak`, measured at the start; a bfloat16 build's products near the peak of the
bfloat16 dot product loop, measured too) has little left to gain, whatever its share of the time. (Its room counts
at least `ROOM_FLOOR` of its latency: the peak and the timings are measurements.) The default config is every task's
first candidate, measured alone, so that every task's room is known before the rest of the budget goes by it.

Every other candidate is timed paired with the default (`Measurer.measure(..., paired=True)`: both in one worker, in
alternating batches) and recorded as the default's first latency times their ratio, so that a busy moment of the
machine moves both and cancels; a candidate that beats the default is timed so a second time and keeps the worse
of its two ratios (the best of many noisy draws is otherwise biased towards luck: on the loaded 2-core machine, 200
unpaired trials of light ResNet-50 gave a database whose build ran 1.07x slower than the default).

Cache: in a model, each kernel reads its weights once per inference, often from memory, not from the core's caches
as repeated calls do; so candidates are timed with their weights flushed from the caches before each call where the
model's weights exceed the L2 and the model's own kernel times agree (`cache="auto"`, the default: `calibrate.py`;
`"warm"` or `"cold"` force either; `cache_flush.py`); records say which.

Before the schedules, the convolution algorithms: each stride-1 3x3 convolution shape Winograd could take is timed
both ways in a standalone block (`algorithms.py`), and the tasks are then the kernels of the model as the faster
algorithms build it (the Winograd GEMMs where Winograd won). `precision="bf16"` tunes the model's bfloat16 build
(`InferenceSession(precision="bf16")`'s kernels, whose convolutions take the bfloat16 form, not Winograd: no
algorithm is timed).

Last, the chosen configs are checked in the model itself (`verify.py`): the model built with the default schedules
and with the database's best records, run in alternation with the profiler on; a config whose kernels take longer in
the model than the default's gets a failed record, which keeps it from being applied (a kernel timed alone is not
the kernel in the model: fused with its neighbours, it meets their data in the caches).

    result = tune("model.onnx", "tuning.jsonl", trials=64)
    InferenceSession("model.onnx", tuning_db="tuning.jsonl")
    tune("bert.onnx", "tuning.jsonl", trials=64, input_shapes={"ids": [1, 128]})   # symbolic dimensions fixed
    tune("model.onnx", "tuning.jsonl", trials=64, precision="bf16")   # then InferenceSession(..., precision="bf16")
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

import onnx

from minimlc.frontend.onnx import ImportedModel, import_model
from minimlc.lowering.strategy.tuning_db import CACHE_MODES, Record, TuningDatabase, config_id, target_key
from minimlc.lowering.target import target_from_name
from minimlc.runtime.machine_peak import fma_peak_gflops, host_dot_bf16_peak_gflops, seconds_at_peaks
from minimlc.tuner.algorithms import check_in_model, tune_algorithms
from minimlc.tuner.cache_flush import cache_mode_for, can_flush
from minimlc.tuner.calibrate import calibrated_cache_modes
from minimlc.tuner.measure import Measurer
from minimlc.tuner.runner import LocalRunner, Runner, measure_configs
from minimlc.tuner.search import Search
from minimlc.tuner.tasks import Task, extract_tasks
from minimlc.tuner.verify import verify_in_model

ROOM_FLOOR = 0.05
"""The least share of a task's best latency that its priority counts as room left."""
MODEL_CHECK_TIMEOUT = 600.0
"""Seconds the in-model check of the algorithm choices may take (two builds of the whole model, then timing)."""


@dataclass
class TaskState:
    """A task during tuning: its search, the trials this run gave it, and how many records it started with."""

    task: Task
    search: Search
    mode: str
    """The cache state its candidates are timed in (`CACHE_MODES`)."""
    at_peak: float
    """Seconds its float work takes at the peak of the threads it is timed on."""
    trials: int = 0
    reused: int = 0
    default_latency: float | None = None

    @property
    def best_latency(self) -> float | None:
        best = self.search.best()
        return best[1] if best is not None else None


@dataclass
class TuningResult:
    """The tasks as tuning left them, and the tuning curve: (trials so far, total weighted latency in seconds)."""

    tasks: list[TaskState]
    curve: list[tuple[int, float]] = field(default_factory=list)
    task_curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    """Per task (`task N (kernel)`, as the table numbers them): (its trials so far, its best latency in seconds)
    after each of its trials that left it one."""


def tune(
    model: str | os.PathLike[str] | ImportedModel,
    database: str | os.PathLike[str],
    *,
    trials: int,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    trials_per_task: int | None = None,
    threads: int = 1,
    timeout: float = 60.0,
    batch: int = 4,
    opt_level: int = 3,
    target: str = "host",
    seed: int = 0,
    cache: str = "auto",
    verify: bool = True,
    peak_gflops: float | None = None,
    runner: str = "local",
    ray_address: str | None = None,
    ray_target_key: str | None = None,
    parallel: int | None = None,
    precision: str = "fp32",
    out: TextIO = sys.stdout,
) -> TuningResult:
    """Measure up to `trials` candidates of `model`'s tasks (at most `trials_per_task` each; `input_shapes` fixes
    its symbolic dimensions, as `InferenceSession`'s does), timed on `threads` threads, each within `timeout`
    seconds, appending every record to `database`; prints the task table and a progress line to `out`; `cache`: how
    candidates find their weights; `verify`: check the chosen configs in the model (see the module docstring);
    `peak_gflops`: one core's peak (default: measured, `fma_peak_gflops`); `runner="ray"`: candidates are timed by
    up to `parallel` workers of the Ray cluster at `ray_address` that offer `ray_target_key` (default: the target's
    CPU, which the key names when `target` is the host; `ray_runner.py`); `precision`: `fp32` or `bf16`, the build
    whose kernels are tuned (see the module docstring). Raises `TuningDatabaseError` for a database line that is
    not a record, `RunnerError` for a cluster that cannot time candidates, ValueError for a precision it does not
    tune or a target without a bfloat16 dot product."""
    extra_passes = precision_passes(precision, target)
    db = TuningDatabase(database)
    chosen = target_from_name(target)
    if runner == "ray" and ray_target_key is not None and ray_target_key != target_key(chosen):
        if target != "host":
            raise ValueError(f"the target key '{ray_target_key}' is not the target's CPU '{target_key(chosen)}'")
        chosen = target_from_name(ray_target_key)  # candidates are built for the workers' CPU
    name = os.path.basename(model) if isinstance(model, str | os.PathLike) else "model"
    imported = model if isinstance(model, ImportedModel) else import_model(model, input_shapes)
    calibrate = cache == "auto" and not isinstance(model, ImportedModel)
    mode = cache_mode(cache, imported, out, calibrate)
    algorithms = {}
    if extra_passes is None:
        with Measurer(threads=threads, timeout=timeout) as measurer:
            algorithms = tune_algorithms(imported, db, chosen, measurer, name, opt_level, out)
    if verify and algorithms and not isinstance(model, ImportedModel):
        with Measurer(threads=threads, timeout=max(timeout, MODEL_CHECK_TIMEOUT)) as measurer:
            serialized = onnx.load(model).SerializeToString()
            check_in_model(serialized, algorithms, db, chosen, measurer, name, opt_level, out, input_shapes)
    tasks = extract_tasks(imported, chosen, opt_level, tuning_db=str(database), extra_passes=extra_passes)
    modes = {task.key: mode for task in tasks}
    if calibrate and mode == "cold":
        modes = calibrated_cache_modes(
            model,
            tasks,
            threads=threads,
            opt_level=opt_level,
            target=target,
            out=out,
            input_shapes=input_shapes,
            precision=precision,
        )
    core_peak = peak_gflops or fma_peak_gflops()
    peak = core_peak * threads
    bf16_work = peak_gflops is None and any(task.bf16_flops for task in tasks)  # a given peak stands for all
    bf16_core_peak = host_dot_bf16_peak_gflops() if bf16_work else None
    bf16_peak = bf16_core_peak * threads if bf16_core_peak else None
    dot_loop = f", {bf16_core_peak:.1f} (bfloat16 dot product loop)" if bf16_core_peak else ""
    print(f"peak {core_peak:.1f} GFLOP/s per core (FMA loop){dot_loop} x {threads} threads", file=out)
    states = [_start(task, db, target_key(chosen), seed, modes[task.key], peak, bf16_peak) for task in tasks]
    per_task = trials_per_task if trials_per_task is not None else trials
    for number, state in enumerate(states):
        if state.reused:
            best = state.best_latency
            shown = f"best {best * 1e3:.5f} ms" if best is not None else "none succeeded"
            print(f"task {number} ({state.task.kernel}): reused {state.reused} records, {shown}", file=out)
    result = TuningResult(states)
    start, done, workers = time.perf_counter(), 0, dict[str, int]()
    with _runner(runner, threads, timeout, ray_address, target_key(chosen), parallel, out) as measuring:
        batch = max(batch, 2 * measuring.slots) if measuring.slots > 1 else batch  # a batch keeps every worker busy
        while done < trials:
            eligible = [s for s in states if s.trials < per_task and not s.search.exhausted()]
            if not eligible:
                break
            state = max(eligible, key=_priority)
            first = state.best_latency is None  # its default alone, so that every task's room is known early
            configs = state.search.propose(min(1 if first else batch, trials - done, per_task - state.trials))
            if not configs:
                state.trials = per_task  # nothing left to propose
                continue
            for config, measured, worker in measure_configs(
                measuring, state.task, configs, state.default_latency, state.mode
            ):
                workers[worker] = workers.get(worker, 0) + 1
                task = state.task
                db.add(
                    Record(task.key, target_key(chosen), task.rule, task.kernel, task.flops, config,
                           measured.latency, measured.error, name, state.mode)
                )  # fmt: skip
                _sync(db.path)
                state.search.add(config, measured.latency)
                if config_id(config) == config_id(task.space.default()):
                    state.default_latency = measured.latency
                state.trials += 1
                done += 1
                result.curve.append((done, total_latency(states)))
                if (best := state.best_latency) is not None:
                    label = f"task {states.index(state)} ({state.task.kernel})"
                    result.task_curves.setdefault(label, []).append((state.trials, best))
            elapsed = time.perf_counter() - start
            print(task_table(states), file=out)
            print(_progress(done, trials, elapsed, states, workers), file=out, flush=True)
    print(headroom_line(states, peak, bf16_peak), file=out)
    if verify and isinstance(model, ImportedModel):
        print("not checked in the model: tune() was given an imported model, not an ONNX one", file=out)
    elif verify:
        verify_in_model(
            model,
            str(database),
            tasks,
            threads=threads,
            opt_level=opt_level,
            target=target,
            name=name,
            out=out,
            input_shapes=input_shapes,
            precision=precision,
        )
    return result


def precision_passes(precision: str, target: str) -> dict[str, str | Sequence[str]] | None:
    """The extra passes of the build `precision` names (None for fp32); a ValueError for one `tune` does not take
    (int8: tune the quantized model file) or a target without a bfloat16 dot product, before any work."""
    from minimlc.driver.calibration import bf16_passes

    if precision == "fp32":
        return None
    if precision != "bf16":
        raise ValueError(
            f"precision must be 'fp32' or 'bf16', got {precision!r} (for int8, tune the model `minimlc quantize` wrote)"
        )
    return bf16_passes(target, None)


def _runner(
    kind: str, threads: int, timeout: float, address: str | None, key: str, parallel: int | None, out: TextIO
) -> Runner:
    """The runner `tune(runner=kind)` names: this machine's worker process, or the Ray cluster's workers."""
    if kind == "local":
        return LocalRunner(threads=threads, timeout=timeout)
    if kind != "ray":
        raise ValueError(f"runner must be local or ray, not {kind!r}")
    if address is None:
        raise ValueError("the ray runner needs the cluster's address (ray_address, --ray-address HOST:PORT)")
    from minimlc.tuner.ray_runner import RayRunner

    return RayRunner(address, key, parallel=parallel, threads=threads, timeout=timeout, out=out)


def _sync(path: os.PathLike[str]) -> None:
    """Flush the database's appended line to the disk: a crash of the machine keeps every record measured."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def cache_mode(cache: str, imported: ImportedModel, out: TextIO, calibrate: bool = False) -> str:
    """How `imported`'s candidates find their weights (`cache_flush.CACHE_MODES`), for `cache`: `auto` or a mode;
    by the size rule alone (`calibrate`: the caller then measures where the rule says cold, `calibrate.py`)."""
    if cache != "auto" and cache not in CACHE_MODES:
        raise ValueError(f"cache must be auto, {', '.join(CACHE_MODES)}, not {cache!r}")
    if cache == "cold" and not can_flush():
        raise ValueError("timing candidates cold needs an x86-64 host (clflush)")
    if cache != "auto":
        return cache
    weights = sum(array.nbytes for array in imported.weights.values())
    sizes = target_from_name("host").cache_bytes
    mode = cache_mode_for(weights, sizes)
    if mode == "cold":
        then = (
            "timing the model's kernels warm and cold"
            if calibrate
            else "candidates are timed with their weights in memory"
        )
        print(f"weights {_size(weights)} > L2 {_size(sizes[1])}: {then}", file=out, flush=True)
    return mode


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 2**10:.0f} KiB"


def at_peak_seconds(task: Task, peak_gflops: float, bf16_peak_gflops: float | None = None) -> float:
    """Seconds `task`'s float work takes at the peaks (`seconds_at_peaks`)."""
    return seconds_at_peaks(task.flops, task.bf16_flops, peak_gflops, bf16_peak_gflops)


def _start(
    task: Task,
    db: TuningDatabase,
    target: str,
    seed: int,
    mode: str,
    peak_gflops: float,
    bf16_peak_gflops: float | None = None,
) -> TaskState:
    state = TaskState(task, Search(task.space, seed), mode, at_peak_seconds(task, peak_gflops, bf16_peak_gflops))
    records = db.records_for(task.key, target, mode)
    for record in records:
        if not task.space.fits(record.config):
            continue
        state.search.add(record.config, record.latency)
        if config_id(record.config) == config_id(task.space.default()):
            state.default_latency = record.latency
    state.reused = len(records)
    return state


def _priority(state: TaskState) -> float:
    """Weighted room left (see the module docstring), damped by the trials the task had."""
    best = state.best_latency
    if best is None:
        return math.inf
    room = max(best - state.at_peak, ROOM_FLOOR * best)
    return state.task.calls * room / math.sqrt(1 + state.trials)


def total_latency(states: list[TaskState]) -> float:
    """Sum over tasks of calls x best latency (tasks without a measurement count 0)."""
    return sum(s.task.calls * (s.best_latency or 0.0) for s in states)


def headroom_line(states: list[TaskState], peak_gflops: float, bf16_peak_gflops: float | None = None) -> str:
    """The weighted latency of the best configs against the tasks' float work at the peak (and the bfloat16
    products' at theirs)."""
    measured = [(s.task.calls, s.at_peak, best) for s in states if (best := s.best_latency) is not None]
    total = sum(calls * best for calls, _, best in measured)
    at_peak = sum(calls * min(floor, best) for calls, floor, best in measured)
    room = 100 * (1 - at_peak / total) if total else 0.0
    peaks = f"peak ({peak_gflops:.1f} GFLOP/s)"
    if bf16_peak_gflops:
        peaks = f"peaks ({peak_gflops:.1f} GFLOP/s, bfloat16 products {bf16_peak_gflops:.1f})"
    return (
        f"at the {peaks} the tasks' float work takes {at_peak * 1e3:.3f} ms of their "
        f"{total * 1e3:.3f} ms weighted: their schedules can save at most {room:.1f}% more"
    )


def task_table(states: list[TaskState]) -> str:
    """The MetaSchedule-like table: per task its FLOP, weight, best GFLOP/s, % of the peak and latency (in ms, as
    every latency `minimlc` prints), trials."""
    header = (
        f"{'ID':>3} | {'task':<32} | {'rule':<11} | {'FLOP':>10} | {'weight':>6} | {'GFLOP/s':>8} | {'% peak':>6} | "
        f"{'latency ms':>10} | {'weighted ms':>11} | {'vs default':>10} | {'trials':>6}"
    )
    lines = [header, "-" * len(header)]
    for number, s in enumerate(states):
        best = s.best_latency
        gflops = f"{s.task.flops / best / 1e9:.2f}" if best and s.task.flops else "-"
        peak = f"{100 * s.at_peak / best:.1f}" if best and s.task.flops else "-"
        latency = f"{best * 1e3:.5f}" if best else "-"
        weighted = f"{s.task.calls * best * 1e3:.5f}" if best else "-"
        ratio = f"{s.default_latency / best:.2f}x" if best and s.default_latency else "-"
        trials = s.trials + s.reused
        lines.append(
            f"{number:>3} | {s.task.kernel[:32]:<32} | {s.task.rule:<11} | {s.task.flops:>10} | {s.task.calls:>6} | "
            f"{gflops:>8} | {peak:>6} | {latency:>10} | {weighted:>11} | {ratio:>10} | {trials:>6}"
        )
    return "\n".join(lines)


def _progress(done: int, trials: int, elapsed: float, states: list[TaskState], workers: dict[str, int]) -> str:
    """The progress bar, and how many candidates each worker timed when more than this machine's did."""
    width = 30
    filled = width * done // max(trials, 1)
    bar = "#" * filled + "." * (width - filled)
    total = total_latency(states) * 1e3
    line = f"[{bar}] {done}/{trials} trials, {elapsed:.0f} s, total weighted latency {total:.3f} ms"
    if set(workers) - {"local"}:
        line += "; timed by " + ", ".join(f"{worker} {count}" for worker, count in sorted(workers.items()))
    return line
