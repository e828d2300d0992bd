"""Builder and runner apart: a candidate compiled where the tuner runs into a self-contained measurable object, timed
wherever its target runs (a Ray worker, `ray_runner.py`) without the compiler.

`build_candidate(job)` takes the job `Measurer.measure` sends (a task's standalone module, a config, the measurement
spec) and returns a `Candidate`: the object code of the scheduled module and of the thread pool, the entry's
signature (as a saved model's metadata: `runtime/artifact.code_meta`), the weights' shapes, and the spec (threads,
seconds per batch, batches, cache state), with the task's default config built the same way when the job is paired.
`time_candidate({"candidate": c})` loads the code (`artifact.bind_code`: nothing is compiled), draws the weights and
inputs as the local measurer draws them (one seeded generator: weights, then inputs) and times it as
`measure_candidate` does, paired with the baseline in alternating batches when there is one:

    candidate = build_candidate(job)                      # here: schedule, lower, LLVM -> object code
    result = time_candidate({"candidate": candidate})     # there: load, bind, time -> Result(latency, baseline=...)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minimlc.tuner.measure import (
    AFTER_SCHEDULE,
    Result,
    _bound_call,
    _cold_evictor,
    _Timing,
    candidate_clock,
    random_weights,
    scheduled_model,
)


@dataclass(frozen=True)
class Spec:
    """How a candidate is timed: on `threads` threads, medians of `repeats` batches of at least `min_seconds`, with
    its weights `cache` (`warm` or `cold`)."""

    threads: int
    min_seconds: float
    repeats: int
    cache: str


@dataclass(frozen=True)
class Candidate:
    """A scheduled kernel compiled to object code, with what loading and timing it needs (see the module docstring)."""

    meta: dict[str, Any]
    """The entry's signature, target, inputs and outputs (`artifact.code_meta`)."""
    code: dict[str, np.ndarray] = field(repr=False)
    """Object code blobs (`artifact.code_blobs`): the kernel's, and the pool's."""
    weights: tuple[tuple[tuple[int, ...], str], ...]
    spec: Spec
    baseline: Candidate | None = None
    """Paired: the task's default config, timed in alternation with this one."""

    @property
    def digest(self) -> str:
        """A hash of the code and signature: a worker keeps the baseline it bound last by it."""
        hasher = hashlib.sha256(repr(sorted(self.meta.items())).encode())
        for name in sorted(self.code):
            hasher.update(self.code[name].tobytes())
        return hasher.hexdigest()


@dataclass
class _Objects:
    """What `code_meta` and `code_blobs` read of a compiled model, for object code that is not loaded here (its
    target may be another CPU's)."""

    signature: Any
    jit: Any
    inputs: list[Any]
    outputs: list[Any]
    stats: dict[str, Any]


@dataclass
class _Code:
    target: Any
    object_files: list[bytes]


def build_candidate(job: dict[str, Any]) -> Candidate | Result:
    """`job` (as `Measurer.measure` makes it) compiled to a `Candidate`, or the failed Result saying why not; a job
    with a `baseline` config and no `baseline_candidate` builds the baseline too."""
    candidate = _compile(job, job["config"])
    if isinstance(candidate, Result) or job.get("baseline") is None:
        return candidate
    baseline = job.get("baseline_candidate") or _compile(job, job["baseline"])
    if isinstance(baseline, Result):
        return candidate  # timed alone, as `measure_candidate` does when the default does not build
    return Candidate(candidate.meta, candidate.code, candidate.weights, candidate.spec, baseline)


def _compile(job: dict[str, Any], config: dict[str, Any]) -> Candidate | Result:
    from minimlc.driver.compiler import compile_objects
    from minimlc.runtime.artifact import code_blobs, code_meta

    scheduled = scheduled_model(job, config, np.random.default_rng(0))
    if isinstance(scheduled, Result):
        return scheduled
    imported, target = scheduled
    objects = compile_objects(imported, AFTER_SCHEDULE, target=target, jobs=1)
    compiled = _Objects(
        objects.signature, _Code(objects.target, objects.object_files), imported.inputs, imported.outputs, {}
    )
    spec = Spec(job["threads"], job["min_seconds"], job["repeats"], job.get("cache") or "warm")
    return Candidate(code_meta(compiled, 3), code_blobs(compiled), tuple(job["weights"]), spec)  # type: ignore[arg-type]


def warm_up(job: dict[str, Any]) -> Result:
    """Import what building (`job["side"] == "build"`) or timing candidates needs, so that a process starting while
    the others do is ready before the first candidate."""
    if job["side"] == "build":
        import minimlc.driver.compiler
        import minimlc.lowering.schedule.default_schedule
    else:
        import minimlc.runtime.artifact  # noqa: F401
    return Result(None, "warmed up")


_BOUND_BASELINE: dict[str, Any] = {}
"""The worker's bound baseline of the task it measures now, by digest."""


def time_candidate(job: dict[str, Any]) -> Result:
    """Time `job["candidate"]` (see the module docstring); the target is checked first."""
    from minimlc.runtime.artifact import target_from_meta

    candidate: Candidate = job["candidate"]
    target_from_meta(candidate.meta["target"]).check_runs_on_host()
    spec = candidate.spec
    evictor = _cold_evictor() if spec.cache == "cold" else None
    timing = _Timing(spec.min_seconds, spec.repeats, candidate_clock(spec.threads), evictor)
    call = _bind(candidate)
    if candidate.baseline is None:
        return Result(timing.time(call))
    digest = candidate.baseline.digest
    if digest not in _BOUND_BASELINE:
        _BOUND_BASELINE.clear()
        _BOUND_BASELINE[digest] = _bind(candidate.baseline)
    latency, reference = timing.time_pair(call, _BOUND_BASELINE[digest])
    return Result(latency, None, reference)


def _bind(candidate: Candidate) -> Any:
    """`candidate`'s code loaded and bound to random weights and buffers (drawn as `measure._build` draws them)."""
    from minimlc.runtime.artifact import bind_code, tensor_from_meta

    rng = np.random.default_rng(0)
    weights = random_weights(rng, candidate.weights)
    compiled = bind_code(candidate.meta, candidate.code, weights)
    inputs = [tensor_from_meta(info) for info in candidate.meta["inputs"]]
    outputs = [tensor_from_meta(info) for info in candidate.meta["computed_outputs"]]
    return _bound_call(compiled, inputs, outputs, candidate.spec.threads, rng)
