"""The Ray runner: candidates built here, timed by the workers of a Ray cluster that offer the target CPU.

Workers join with `minimlc worker --ray-address HOST:PORT --target-key KEY --cores N` (`tools/cli_worker.py`): a Ray
node pinned to N cores of its host that no other worker holds, offering N units of the resource
`minimlc-target-KEY`. `RayRunner` places one `MeasureActor` per `threads` units (one core set: never two
measurements on one core), up to `parallel`, and keeps each busy with one candidate at a time, the next one building
meanwhile (`slots`, the requests in flight, is twice the core sets):

    submit(request) -> a local build process compiles it (`candidate.build_candidate`, `parallel` of them)
                    -> an idle actor times it (`candidate.time_candidate`, in its own `Measurer` process)
    next_result()   -> Measured(request, result, worker="host/cpu1"), in the order they finish

A worker that dies, disconnects or does not answer within the timeout (plus `LOST_SLACK` for the transfer) loses
its in-flight candidate only: it is timed again on another worker, up to `ATTEMPTS` times, then recorded failed with
the reason; the runner starts a new actor where the cluster has room. A candidate that hangs or crashes its worker's
measuring process is a failed record, as on this machine. Ray is imported here only, when a runner starts.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import socket
import sys
import tempfile
import time
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TextIO

from minimlc.lowering.strategy.tuning_db import config_id
from minimlc.tuner.candidate import Candidate, build_candidate, time_candidate, warm_up
from minimlc.tuner.measure import Measurer, Result
from minimlc.tuner.runner import Measured, Request, RunnerError

ATTEMPTS = 2
"""Workers a candidate may be timed on before a lost worker makes it a failed record."""
LOST_SLACK = 15.0
"""Seconds beyond the timeout a worker may take to answer (transfer, its measuring process starting)."""
CLAIM_WAIT = 10.0
"""Seconds an actor waits for its node's cores to be free (an actor of a tuning just ended may still hold them)."""
KEPT_BUILDS = 64
"""Paired candidates kept built, for the second pairing of a winner."""


def target_resource(key: str) -> str:
    """The Ray resource a worker for target CPU `key` offers, one unit per core."""
    return f"minimlc-target-{key}"


def check_reachable(address: str) -> None:
    """Raise `RunnerError` unless `address` (`HOST:PORT`, or `ray://HOST:PORT`) accepts a connection."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RunnerError(f"a Ray address is HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise RunnerError(f"cannot reach the Ray cluster at {address}: {error.strerror or error}") from None


def claim_cores(count: int, kind: str, among: set[int]) -> tuple[list[int], list[IO[str]]]:
    """`count` of the cores `among` that no other `kind` (`worker`, `measure`) of this host holds, with the locks that
    hold them until closed or the process ends; `RunnerError` if fewer are free."""
    folder = Path(tempfile.gettempdir()) / "minimlc-cores"
    folder.mkdir(exist_ok=True)
    cores: list[int] = []
    locks: list[IO[str]] = []
    for core in sorted(among):
        lock = (folder / f"{kind}-cpu{core}.lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        cores.append(core)
        locks.append(lock)
        if len(cores) == count:
            return cores, locks
    for lock in locks:
        lock.close()
    raise RunnerError(f"{len(cores)} of this host's cores {sorted(among)} are free for a {kind}, not {count}")


class MeasureActor:
    """A core set of a worker (as a Ray actor): pinned to `threads` cores of its node no other actor holds, it
    times one candidate at a time in a `Measurer` process, which inherits the pinning."""

    def __init__(self, threads: int, timeout: float):
        deadline = time.monotonic() + CLAIM_WAIT
        while True:  # an actor of a tuning just stopped may still hold its cores for a moment
            try:
                self.cores, self._locks = claim_cores(threads, "measure", os.sched_getaffinity(0))
                break
            except RunnerError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        os.sched_setaffinity(0, self.cores)
        self.name = f"{socket.gethostname()}/cpu{'+'.join(str(core) for core in self.cores)}"
        self.measurer = Measurer(threads=threads, timeout=timeout)

    def ready(self) -> str:
        """Its name, once its measuring process has started."""
        self.measurer.run(warm_up, {"side": "time"})
        return self.name

    def measure(self, candidate: Candidate) -> Result:
        return self.measurer.run(time_candidate, {"candidate": candidate})


class RayRunner:
    """Times requests on the Ray cluster at `address` (see the module docstring) on `core_sets` actors."""

    def __init__(
        self,
        address: str,
        target_key: str,
        *,
        parallel: int | None = None,
        threads: int = 1,
        timeout: float = 60.0,
        out: TextIO = sys.stdout,
    ):
        check_reachable(address)
        self._ray = _connect(address)
        self.address, self.key, self.threads, self.timeout, self.out = address, target_key, threads, timeout, out
        self.resource = target_resource(target_key)
        offered = int(self._ray.cluster_resources().get(self.resource, 0) // threads)
        if not offered:
            self._ray.shutdown()
            raise RunnerError(
                f"no worker of the Ray cluster at {address} offers target {target_key} on {threads} core(s): start "
                f"one with `minimlc worker --ray-address {address} --target-key {target_key} --cores {threads}`"
            )
        self.core_sets = min(parallel, offered) if parallel else offered
        self.slots = 2 * self.core_sets
        """Requests in flight: per core set, one timed while the next builds."""
        self._spec = Measurer(threads=threads, timeout=timeout)  # makes the jobs
        self._builders: queue.Queue[Measurer] = queue.Queue()
        self._pool = ThreadPoolExecutor(self.core_sets, thread_name_prefix="minimlc-build")
        for _ in range(self.core_sets):  # build processes start while the actors do
            self._pool.submit(self._start_builder)
        self._actor_class = self._ray.remote(MeasureActor)
        self._builds: dict[Future[Any], Request] = {}
        self._ready: deque[tuple[Request, Candidate]] = deque()
        self._finished: deque[Measured] = deque()
        self._idle: list[tuple[Any, str]] = []
        self._busy: dict[Any, tuple[Any, str, Request, Candidate, float]] = {}
        self._starting: dict[Any, tuple[Any, float]] = {}
        self._baselines: dict[str, Candidate] = {}
        self._kept: OrderedDict[tuple[str, str, str], Candidate] = OrderedDict()
        self._alive_at = self._room_checked = time.monotonic()
        for _ in range(self.core_sets):
            self._start_actor()
        print(f"ray: starting {self.core_sets} core set(s) offering {self.resource} at {address}", file=out, flush=True)
        while self._starting:  # every core set ready (or given up) before the first candidate
            for ref in self._ray.wait(list(self._starting), num_returns=1, timeout=1.0)[0]:
                self._answer(ref)
            self._expire()

    def submit(self, request: Request) -> None:
        kept = self._kept.pop((request.task.key, config_id(request.config), request.cache), None)
        if kept is not None and request.paired:
            self._ready.append((request, kept))  # a winner's second pairing: timed again, not built again
        else:
            self._builds[self._pool.submit(self._build, request)] = request

    def next_result(self) -> Measured:
        while not self._finished:
            self._collect_builds()
            self._dispatch()
            self._replenish()
            waiting = [*self._busy, *self._starting]
            if waiting:
                done, _ = self._ray.wait(waiting, num_returns=1, timeout=0.05 if self._builds else 0.5)
                for ref in done:
                    self._answer(ref)
            else:
                time.sleep(0.05)
            self._expire()
        return self._finished.popleft()

    def _start_builder(self) -> None:
        builder = Measurer(timeout=self.timeout)
        builder.run(warm_up, {"side": "build"})
        self._builders.put(builder)

    def _build(self, request: Request) -> Candidate | Result:
        """`request` compiled in a free build process (one crashing or hanging costs that candidate only)."""
        builder = self._builders.get()
        try:
            job = self._spec.job(request.task, request.config, request.paired, request.cache)
            if request.paired and request.task.key in self._baselines:
                job["baseline_candidate"] = self._baselines[request.task.key]
            return builder.run(build_candidate, job)  # type: ignore[arg-type]
        finally:
            self._builders.put(builder)

    def _collect_builds(self) -> None:
        for future in [future for future in self._builds if future.done()]:
            request = self._builds.pop(future)
            built = future.result()
            if isinstance(built, Result):
                self._finished.append(Measured(request, built, "build"))
                continue
            if built.baseline is not None:
                self._baselines[request.task.key] = built.baseline
                self._kept[(request.task.key, config_id(request.config), request.cache)] = built
                while len(self._kept) > KEPT_BUILDS:
                    self._kept.popitem(last=False)
            self._ready.append((request, built))

    def _dispatch(self) -> None:
        while self._ready and self._idle:
            request, candidate = self._ready.popleft()
            actor, name = self._idle.pop(0)  # the longest idle: every core set takes turns
            deadline = time.monotonic() + self.timeout + LOST_SLACK
            self._busy[actor.measure.remote(candidate)] = (actor, name, request, candidate, deadline)

    def _answer(self, ref: Any) -> None:
        from ray.exceptions import RayError

        if ref in self._starting:
            actor, _ = self._starting.pop(ref)
            try:
                name = self._ray.get(ref)
            except RayError as error:
                reason = (str(error).strip().splitlines() or [type(error).__name__])[-1]
                print(f"ray: a worker could not start ({reason})", file=self.out, flush=True)
                return
            self._idle.append((actor, name))
            print(f"ray: worker {name} ready", file=self.out, flush=True)
            return
        actor, name, request, candidate, _ = self._busy.pop(ref)
        try:
            result = self._ray.get(ref)
        except RayError as error:
            self._lost(actor, name, request, candidate, f"{type(error).__name__}: died or disconnected")
            return
        self._idle.append((actor, name))
        self._finished.append(Measured(request, result, name))

    def _lost(self, actor: Any, name: str, request: Request, candidate: Candidate, reason: str) -> None:
        """`actor` is gone: its candidate is timed again elsewhere, or recorded failed after `ATTEMPTS` workers."""
        self._ray.kill(actor, no_restart=True)
        request.attempt += 1
        again = request.attempt < ATTEMPTS
        then = "timing its candidate on another worker" if again else "its candidate is recorded failed"
        print(f"ray: lost worker {name} ({reason}): {then}", file=self.out, flush=True)
        if again:
            self._ready.appendleft((request, candidate))
        else:
            self._finished.append(Measured(request, Result(None, f"lost worker {name} ({reason})"), name))

    def _expire(self) -> None:
        now = time.monotonic()
        for ref, (actor, name, request, candidate, deadline) in list(self._busy.items()):
            if now > deadline:
                del self._busy[ref]
                self._lost(actor, name, request, candidate, f"no answer within {self.timeout + LOST_SLACK:g} s")
        for ref, (actor, deadline) in list(self._starting.items()):
            if now > deadline:
                del self._starting[ref]
                self._ray.kill(actor, no_restart=True)
        if self._idle or self._busy:
            self._alive_at = now
        elif (self._ready or self._builds) and now - self._alive_at > self.timeout + LOST_SLACK:
            raise RunnerError(f"no worker of the Ray cluster at {self.address} is left for target {self.key}")

    def _replenish(self) -> None:
        """Start an actor in place of each lost one, where the cluster has room (checked at most once a second)."""
        live = len(self._idle) + len(self._busy) + len(self._starting)
        if live >= self.core_sets or time.monotonic() - self._room_checked < 1.0:
            return
        self._room_checked = time.monotonic()
        room = int(self._ray.available_resources().get(self.resource, 0) // self.threads)
        for _ in range(min(room, self.core_sets - live)):
            self._start_actor()

    def _start_actor(self) -> None:
        options = {"resources": {self.resource: self.threads}, "num_cpus": 0, "max_restarts": 0}
        actor = self._actor_class.options(**options).remote(self.threads, self.timeout)
        self._starting[actor.ready.remote()] = (actor, time.monotonic() + self.timeout + LOST_SLACK)

    def close(self) -> None:
        """Stop the build processes and the actors, and leave the cluster."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        while not self._builders.empty():
            self._builders.get().close()
        for actor, *_ in [*self._idle, *self._busy.values(), *self._starting.values()]:
            self._ray.kill(actor, no_restart=True)
        self._ray.shutdown()

    def __enter__(self) -> RayRunner:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _connect(address: str) -> Any:
    """The `ray` module, connected to the cluster at `address` as a driver (`RunnerError` if it cannot be)."""
    try:
        import ray
    except ImportError:
        raise RunnerError("the ray runner needs Ray: pip install 'minimlc[distributed]'") from None
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR, namespace="minimlc")
    except Exception as error:  # Ray raises ConnectionError, RuntimeError or its own for a cluster it cannot join
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise RunnerError(f"cannot join the Ray cluster at {address}: {lines[0]}") from None
    return ray
