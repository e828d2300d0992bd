"""Which cache state a model's kernels meet, measured: the model's own kernel times against the measurer's, both ways.

The size rule (`cache_flush.cache_mode_for`) says `cold` wherever the weights exceed the L2. Where they come from in
the model depends on the machine, not only on their size. On a 2-core cloud VM whose 32 MiB L3 other tenants share,
SqueezeNet's 4.7 MiB behaved as flushed; on a 2-core Xeon VM with a 480 MiB L3, MatMul 1024^3 (4 MiB of weights)
took 14.6 ms a run in the model, 14.2 ms timed warm and 16.4 ms cold, while light ResNet-50's ten heaviest kernels
(97.7 MiB of weights) took 19.2 ms in the model, 16.1 ms warm and 19.9 ms cold. A tuning timed in the wrong state
ranks candidates by the wrong cost: the MatMul tuned cold kept its default (the model's check: 0.951x, noise), tuned
warm it took 14 rows and a prefetch of B (0.922x).

Nor is it one state for the whole model: on that Xeon, ResNet-50's 56x56 convolutions ran in the model as they did
warm (conv_19: 1.40 ms; warm 1.46, cold 2.55: cold also flushes their 3 MB activations, which the model finds in
cache), its 7x7 ones as they did cold (conv_73: 1.92 ms; warm 1.39, cold 2.01). So where the rule says cold,
`tune(cache="auto")` asks the model: it builds it with the default schedules, profiles a few runs, and times the
heaviest tasks whose kernels in the model do their work alone (no fused neighbour's but the epilogue the measurer
fuses too: see `verify.task_groups`) with their default configs, warm and cold. Each of those tasks is tuned in
the state that came closer to its time in the model; the other tasks in the state that most of that time chose.

    modes = calibrated_cache_modes("model.onnx", tasks)     # task key -> "warm" or "cold", with a table
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from minimlc.lowering.strategy.tuning_db import CACHE_MODES
from minimlc.tuner.measure import Measurer
from minimlc.tuner.tasks import Task
from minimlc.tuner.verify import group_times, profiled_session, random_feeds, task_groups

CALIBRATION_TASKS = 12
"""How many of the heaviest tasks are timed both ways (light ResNet-50: its 12 heaviest lone kernels, ~15 s)."""


def calibrated_cache_modes(
    model: Any,
    tasks: Sequence[Task],
    *,
    threads: int = 1,
    opt_level: int = 3,
    target: str = "host",
    runs: int = 5,
    out: TextIO = sys.stdout,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    precision: str = "fp32",
) -> dict[str, str]:
    """Per task key of `tasks` (of `model`, an ONNX model or path, built at `precision`), the cache state
    (`CACHE_MODES`) to time its candidates in: for the heaviest tasks whose kernels work alone in the model, the
    state whose timing of the default config comes closer to the model's; for the others, the state the calibrated
    ones' time mostly chose (see the module docstring). All `cold` where no task could be compared."""
    in_model = _model_times(model, tasks, threads, opt_level, target, runs, input_shapes, precision)
    chosen = sorted((task for task in tasks if task.key in in_model), key=lambda task: -in_model[task.key])
    timed: dict[str, dict[str, float]] = {}
    with Measurer(threads=threads) as measurer:
        for task in chosen[:CALIBRATION_TASKS]:
            for mode in CACHE_MODES:
                result = measurer.measure(task, task.space.default(), cache=mode)
                if result.latency is not None:
                    timed.setdefault(task.key, {})[mode] = result.latency * task.calls
    calibrated = [task for task in chosen if len(timed.get(task.key, {})) == len(CACHE_MODES)]
    if not calibrated:
        print("no kernel of the model could be compared with its timing: candidates are timed cold", file=out)
        return {task.key: "cold" for task in tasks}
    modes = {task.key: closest_mode(in_model[task.key], timed[task.key]) for task in calibrated}
    votes = {mode: sum(in_model[key] for key, closer in modes.items() if closer == mode) for mode in CACHE_MODES}
    rest = majority_mode(votes)
    print(calibration_table(calibrated, in_model, timed, modes), file=out)
    print(
        f"{len(modes)} task(s) timed as the model ran them; the other {len(tasks) - len(modes)} are timed {rest} "
        f"(of the model's time above, {_duration(votes['warm'])} a run came closer warm, {_duration(votes['cold'])} "
        "cold)",
        file=out,
        flush=True,
    )
    return {task.key: modes.get(task.key, rest) for task in tasks}


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e3:.5f} ms"


def majority_mode(votes: Mapping[str, float]) -> str:
    """The mode with the most votes (seconds of the model's time), `cold` on a tie."""
    return max(CACHE_MODES, key=lambda mode: (votes.get(mode, 0.0), mode == "cold"))


def closest_mode(in_model: float, timed: Mapping[str, float]) -> str:
    """The mode whose timing is the smallest factor away from the time `in_model` (either side)."""
    return min(timed, key=lambda mode: abs(math.log(timed[mode] / in_model)))


def _model_times(
    model: Any,
    tasks: Sequence[Task],
    threads: int,
    opt_level: int,
    target: str,
    runs: int,
    input_shapes: Mapping[str, Sequence[int]] | None,
    precision: str,
) -> dict[str, float]:
    """Per task key whose kernels do their work alone in `model` (its group, `verify.task_groups`, holds no other
    task but the elementwise epilogues its measured module brings along, `tasks.standalone_module`), the median
    seconds per run of its group's kernel calls, over `runs` profiled runs with the default schedules (after a
    warm-up run)."""
    session = profiled_session(model, threads, opt_level, target, input_shapes=input_shapes, precision=precision)
    feeds = random_feeds(session)
    for _ in range(runs + 1):
        session.run(None, feeds)
    groups = task_groups(session.profiler.calls)
    rules = {task.key: task.rule for task in tasks}
    workers: dict[str, list[str]] = {}
    for key, group in groups.items():
        if rules.get(key) != "elementwise":
            workers.setdefault(group, []).append(key)
    times = group_times(session.profiler, groups, first_run=1)
    return {key: seconds for key, seconds in times.items() if workers.get(groups[key]) == [key] and seconds > 0}


def calibration_table(
    tasks: Sequence[Task], in_model: Mapping[str, float], timed: Mapping[str, Any], modes: Mapping[str, str]
) -> str:
    """Per task: its kernel, rule, time per run in the model, timed alone in each cache state, and the state chosen."""
    cells = " | ".join(f"{mode + ' ms':>10}" for mode in CACHE_MODES)
    header = f"{'task':<32} | {'rule':<11} | {'model ms':>10} | {cells} | timed"
    lines = [header, "-" * len(header)]
    for task in tasks:
        cells = " | ".join(f"{timed[task.key][mode] * 1e3:>10.4f}" for mode in CACHE_MODES)
        model_ms = in_model[task.key] * 1e3
        lines.append(f"{task.kernel[:32]:<32} | {task.rule:<11} | {model_ms:>10.4f} | {cells} | {modes[task.key]}")
    return "\n".join(lines)
