"""Runners: what times the tuner's candidates, here (`LocalRunner`) or on a cluster (`ray_runner.RayRunner`).

A runner takes `Request`s (a config of a task, timed alone or paired with the task's default) with `submit` and
gives each back once timed with `next_result`, as a `Measured` naming the worker that timed it, in the order they
finish; `slots` is how many it times at once. `measure_configs` is the tuner's protocol on top: the default alone,
every other config paired and scaled to the default's latency, a winner paired a second time (keeping the worse
ratio), keeping up to `slots` requests in flight:

    with LocalRunner(threads=1, timeout=60) as runner:
        for config, result, worker in measure_configs(runner, task, configs, default_latency, "warm"):
            ...   # result.latency in seconds, or result.error; worker: "local", "host/cpu1", ...

`LocalRunner` is the one worker process of `measure.Measurer`, one request at a time: the tuner measures as it
always has. A runner's errors that end a tuning (a cluster that cannot be reached, no worker left for the target)
are `RunnerError`s.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from minimlc.lowering.schedule.space import Config
from minimlc.lowering.strategy.tuning_db import config_id
from minimlc.tuner.measure import Measurer, Result


class RunnerError(ConnectionError):
    """A runner cannot go on: the cluster is unreachable, or no worker is left for the target (one line)."""


@dataclass
class Request:
    """One timing of `config` of `task`: alone, or `paired` with the task's default; `cache`: its weights' state."""

    task: Any
    config: Config
    paired: bool
    cache: str
    attempt: int = 0
    """Workers lost while timing it so far (a runner may try it again elsewhere)."""


@dataclass(frozen=True)
class Measured:
    """A request timed: its result and the worker that timed it."""

    request: Request
    result: Result
    worker: str


class Runner(Protocol):
    """Times requests (see the module docstring)."""

    slots: int

    def submit(self, request: Request) -> None: ...

    def next_result(self) -> Measured: ...

    def close(self) -> None: ...

    def __enter__(self) -> Runner: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None: ...


class LocalRunner:
    """One `Measurer` worker process on this machine, one request at a time."""

    slots = 1

    def __init__(self, threads: int = 1, timeout: float = 60.0):
        self.measurer = Measurer(threads=threads, timeout=timeout)
        self._queue: deque[Request] = deque()

    def submit(self, request: Request) -> None:
        self._queue.append(request)

    def next_result(self) -> Measured:
        request = self._queue.popleft()
        result = self.measurer.measure(request.task, request.config, paired=request.paired, cache=request.cache)
        return Measured(request, result, "local")

    def close(self) -> None:
        self.measurer.close()

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def measure_configs(
    runner: Runner, task: Any, configs: list[Config], reference: float | None, cache: str
) -> Iterator[tuple[Config, Result, str]]:
    """Each of `configs` timed (see the module docstring), as (config, result, worker) in the order they finish:
    alone for the default config (or while the default has no latency, `reference`), else paired with the default
    and recorded as `reference` times their ratio, paired a second time when it beats the default."""
    default = config_id(task.space.default())
    waiting = deque(configs)
    ratios: dict[str, list[float]] = {}
    in_flight = 0
    while waiting or in_flight:
        while waiting and in_flight < runner.slots:
            config = waiting.popleft()
            alone = reference is None or config_id(config) == default
            runner.submit(Request(task, config, not alone, cache))
            in_flight += 1
        measured = runner.next_result()
        in_flight -= 1
        config, result = measured.request.config, measured.result
        if not measured.request.paired or reference is None:
            yield config, result, measured.worker
            continue
        if result.latency is None or result.baseline is None:
            yield config, result, measured.worker
            continue
        taken = ratios.setdefault(config_id(config), [])
        taken.append(result.latency / result.baseline)
        if len(taken) == 1 and taken[0] < 1.0:  # a winner: confirmed by a second pairing, before the next config
            runner.submit(Request(task, config, True, cache))
            in_flight += 1
            continue
        yield config, Result(max(taken) * reference), measured.worker
