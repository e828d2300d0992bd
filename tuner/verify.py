"""Checking a tuning's choices in the model: a config that won alone is kept only where it wins in the model too.

The measurer times a candidate alone, on its own buffers (`measure.py`). In the model the same kernel is fused with
its neighbours (a pad or layout stage writes its input just before it, an epilogue works on its output tile) and
meets the caches as the kernels before it left them. A config can win alone and lose there: on light ResNet-50 the
3x3 convolution that ran 1.11x faster alone with channels outermost ran 1.031x slower in the model, its stem 1.09x,
and the 664-trial database ran the whole model 1.010x its default's time.

`verify_in_model` builds the model twice with the profiler, with the default schedules and with the database's best
records, and runs the two in alternation. Kernels name the tasks they ran (`minimlc.task`; a fused kernel all of its
stages'); tasks fused together in either build form a group, and per tuned task the median per-run time of its
group's kernel calls is compared: a config whose group is not faster in the model gets a failed record (`slower in
the model than the default: 1.031x`), and a config with a failed record is never applied (`TuningDatabase.best`).
The task's next best config is then checked the same way, in a new tuned build, up to `checks` builds.

    verdicts = verify_in_model("model.onnx", "tuning.jsonl", tasks, rounds=15)
    [(v.record.kernel, v.ratio, v.kept) for v in verdicts]      # [('conv_11', 1.031, False), ('conv_57', 0.96, True)]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

import numpy as np

from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase, config_id, target_key
from minimlc.lowering.target import target_from_name
from minimlc.tuner.measure import random_input
from minimlc.tuner.tasks import Task


@dataclass(frozen=True)
class Verdict:
    """A tuned task's time in the model per run (medians, seconds) with the default config and with its best one."""

    record: Record
    """The task's best record, which the tuned build applied."""
    default: float
    tuned: float

    @property
    def ratio(self) -> float:
        return self.tuned / self.default

    @property
    def kept(self) -> bool:
        return self.tuned < self.default


def verify_in_model(
    model: Any,
    database: str,
    tasks: Sequence[Task],
    *,
    threads: int = 1,
    opt_level: int = 3,
    target: str = "host",
    rounds: int = 15,
    checks: int = 3,
    name: str = "model",
    out: TextIO = sys.stdout,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    precision: str = "fp32",
) -> list[Verdict]:
    """Check the best records of `tasks` in `database` in `model` (an ONNX model or path, its symbolic dimensions
    fixed by `input_shapes`, built at `precision`) and reject those that lose there (see the module docstring);
    returns every verdict, in the order they were reached."""
    cpu = target_key(target_from_name(target))
    default = profiled_session(model, threads, opt_level, target, input_shapes=input_shapes, precision=precision)
    feeds = random_feeds(default)
    checked: set[tuple[str, str]] = set()
    verdicts: list[Verdict] = []
    for _ in range(checks):
        db = TuningDatabase(database)
        chosen = {}
        for task in tasks:
            record = db.best(task.key, cpu, task.space)
            if record is not None and config_id(record.config) != config_id(task.space.default()):
                if (task.key, config_id(record.config)) not in checked:
                    chosen[task.key] = record
        if not chosen:
            if not verdicts:
                print("checked in the model: no kernel's best config differs from its default", file=out)
            break
        print(f"checking {len(chosen)} tuned kernel(s) in the model ({rounds} runs each way)", file=out, flush=True)
        tuned = profiled_session(model, threads, opt_level, target, database, input_shapes, precision)
        default_times, tuned_times, totals = _alternate(default, tuned, feeds, rounds)
        found = []
        for key, record in chosen.items():
            checked.add((key, config_id(record.config)))
            if key in default_times and key in tuned_times:
                found.append(Verdict(record, default_times[key], tuned_times[key]))
        for verdict in found:
            if not verdict.kept:
                error = f"slower in the model than the default: {verdict.ratio:.3f}x ({rounds} runs of {name} each way)"
                db.add(replace(verdict.record, latency=None, error=error, model=name))
        print(verdict_table(found), file=out)
        whole = f"the model's kernels: {totals[0] * 1e3:.3f} ms a run with the default schedules"
        print(f"{whole}, {totals[1] * 1e3:.3f} ms with these ({totals[1] / totals[0]:.3f}x)", file=out, flush=True)
        verdicts += found
        if all(verdict.kept for verdict in found):
            break
    return verdicts


def profiled_session(
    model: Any,
    threads: int,
    opt_level: int,
    target: str,
    tuning_db: str | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    precision: str = "fp32",
) -> Any:
    """`model` (for `input_shapes`, at `precision`) built uncached with the profiler on (thread CPU time on one
    thread, else wall time), with the default schedules or `tuning_db`'s best records."""
    from minimlc.driver.session import InferenceSession

    return InferenceSession(
        model,
        input_shapes=input_shapes,
        num_threads=threads,
        opt_level=opt_level,
        target=target,
        cache=False,
        tuning_db=tuning_db,
        enable_profiling=True,
        profiling_clock="cpu" if threads == 1 else "wall",
        precision=precision,
    )


def random_feeds(session: Any) -> dict[str, np.ndarray]:
    """Seeded random inputs for `session` (`measure.random_input`)."""
    rng = np.random.default_rng(0)
    return {info.name: random_input(rng, info) for info in session.get_inputs()}


def _alternate(
    default: Any, tuned: Any, feeds: dict[str, np.ndarray], rounds: int
) -> tuple[dict[str, float], dict[str, float], tuple[float, float]]:
    """Per task key, the median over `rounds` runs of its group's kernel time per run (`task_groups`), for each
    session (run in alternation, the order flipping every round, after a warm-up run each); and each session's
    median time per run of all its kernel calls."""
    sessions = (default, tuned)
    for session in sessions:
        session.run(None, feeds)
    first = [len(session.profiler.runs) for session in sessions]
    for index in range(rounds):
        for session in sessions if index % 2 == 0 else sessions[::-1]:
            session.run(None, feeds)
    groups = task_groups(default.profiler.calls, tuned.profiler.calls)
    default_times, tuned_times = (group_times(s.profiler, groups, start) for s, start in zip(sessions, first))
    default_total, tuned_total = (
        statistics.median(float(np.sum(t[:, 1] - t[:, 0])) / 1e9 for _, _, t in s.profiler.runs[start:])
        for s, start in zip(sessions, first)
    )
    return default_times, tuned_times, (default_total, tuned_total)


def task_groups(*builds: Sequence[Any]) -> dict[str, str]:
    """Tasks joined where a kernel of any of the `builds` (their profiled calls) fuses them: key -> the key standing
    for its group. Fusion can differ between builds (a tuned convolution whose tile no longer takes the ReLU leaves
    it to the pool after it), so only a group's time is the same work in both."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for calls in builds:
        for call in calls:
            keys = [key for key in call.tasks if key != "-"]
            for key in keys:
                parent.setdefault(key, key)
            for key in keys[1:]:
                parent[root(key)] = root(keys[0])
    return {key: root(key) for key in parent}


def group_times(profiler: Any, groups: dict[str, str], first_run: int = 0) -> dict[str, float]:
    """Per task key, the median over the profiler's runs from `first_run` on of the seconds per run that the kernel
    calls of its group (`task_groups`) took."""
    runs = profiler.runs[first_run:]
    per_group: dict[str, list[float]] = {}
    for number, (_, _, times) in enumerate(runs):
        for call, (begin, end) in zip(profiler.calls, times):
            keys = [key for key in call.tasks if key != "-"]
            if keys:
                series = per_group.setdefault(groups[keys[0]], [0.0] * len(runs))
                series[number] += (end - begin) / 1e9
    medians = {group: statistics.median(series) for group, series in per_group.items()}
    return {key: medians[group] for key, group in groups.items() if group in medians}


def verdict_table(verdicts: Sequence[Verdict]) -> str:
    """Per checked task: its kernel, rule, time per run in the model with the default and the tuned config."""
    header = f"{'task':<32} | {'rule':<11} | {'default us':>10} | {'tuned us':>10} | {'ratio':>6} | verdict"
    lines = [header, "-" * len(header)]
    for v in verdicts:
        lines.append(
            f"{v.record.kernel[:32]:<32} | {v.record.rule:<11} | {v.default * 1e6:>10.1f} | {v.tuned * 1e6:>10.1f} | "
            f"{v.ratio:>6.3f} | {'kept' if v.kept else 'rejected: slower in the model'}"
        )
    return "\n".join(lines)
