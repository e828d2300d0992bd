"""The kernel profiler: per-call kernel times of a session's runs, a per-kernel summary and a Chrome trace.

`InferenceSession(model, enable_profiling=True)` compiles with `loop-profile-calls` (clock readings around every
kernel call of the entry, into a buffer the runtime allocates) and `default-schedule{annotate=true}` (each kernel's
rule and config); after every run the session hands the buffer to `Profiler.record_run`. Nothing is instrumented
without it. The trace is ONNX Runtime's profiler format (a JSON array of complete events, microseconds), which
`chrome://tracing` and Perfetto open:

    session = InferenceSession("model.onnx", enable_profiling=True)
    session.run(None, feeds)
    for row in session.profiler.summary(peak_gflops=120.0):
        print(row["kernel"], row["calls"], row["total_ms"], row["gflops"])
    path = session.end_profiling()          # minimlc_profile_<date>.json

`profiling_clock="cpu"` (one thread only) reads the calling thread's CPU time instead of wall time: on a machine
other processes load, a preempted kernel's wall time includes their slices, its CPU time does not. In the trace
such a run's kernel events then sit at their CPU-time offsets from the run's first kernel call.

With a peak (`peak_gflops`: the machine's, times the threads; `runtime.machine_peak` measures one core's), each
kernel's floating-point work also gives the least time it could take, `peak_ms` (its bfloat16 dot products at
`bf16_peak_gflops`, the bfloat16 dot product loop's, where given); `headroom_line` sums them into the
most that any schedule of these kernels can save (light ResNet-50 on a Zen 4 core: 58.9 ms of work at the peak in
68.2 ms of kernels, so schedules save at most 13.6%). A kernel bound by memory traffic counts nearly all its time as
room: the bound is loose there, never wrong.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minimlc.runtime.machine_peak import seconds_at_peaks

PROFILING_CLOCKS = {"wall": "monotonic", "cpu": "thread-cpu"}
"""`profiling_clock` values and the `loop-profile-calls` clock each reads."""


def check_profiling_clock(clock: str, num_threads: int) -> None:
    """ValueError unless `clock` is a profiling clock that times whole kernels at `num_threads` threads."""
    if clock not in PROFILING_CLOCKS:
        raise ValueError(f"profiling_clock must be one of {', '.join(PROFILING_CLOCKS)}, got {clock!r}")
    if clock == "cpu" and num_threads != 1:
        raise ValueError(
            f"profiling_clock='cpu' needs num_threads=1 (got {num_threads}): the calling thread's CPU time leaves "
            "out the work of the other pool threads"
        )


@dataclass(frozen=True)
class ProfiledCall:
    """One kernel call of the entry, as `loop-profile-calls` recorded it."""

    kernel: str
    flops: int
    schedule: str
    tasks: tuple[str, ...] = ()
    """The tuning keys of the kernel's stages (`minimlc.task`; `-` for a stage without one)."""
    bytes: int = 0
    """The summed sizes of the buffers the call passes (each moved once: the least traffic it can have); 0 where
    not known (a buffer with a run-time extent; a build saved before bytes were recorded)."""
    bf16_flops: int = 0
    """The share of `flops` that bfloat16 dot products do (`bf16_product_flops`; 0 in a build saved before it was
    recorded)."""

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> ProfiledCall:
        """The call `dataclasses.asdict` wrote into a saved build's metadata (`tasks` as a list)."""
        tasks = tuple(value.get("tasks", ()))
        return cls(
            value["kernel"], value["flops"], value["schedule"], tasks, value.get("bytes", 0), value.get("bf16_flops", 0)
        )


class Profiler:
    """Kernel call times of every profiled run of one session (see the module docstring)."""

    def __init__(self, calls: Sequence[ProfiledCall], buffer: np.ndarray, clock: str = "wall"):
        """`buffer` is the byte buffer the compiled code writes `timespec`s into: two per call (before, after), read
        from `clock` (`PROFILING_CLOCKS`)."""
        if buffer.nbytes != 32 * len(calls):
            raise ValueError(f"profile buffer of {buffer.nbytes} bytes for {len(calls)} kernel calls")
        self.calls = list(calls)
        self.clock = clock
        self._clock = buffer.view(np.int64).reshape(len(calls), 2, 2)
        self._origin = time.monotonic_ns()
        self.runs: list[tuple[int, int, np.ndarray]] = []
        """Per run: start and end (monotonic ns) and each call's (start, end) in ns."""

    def record_run(self, start_ns: int, end_ns: int) -> None:
        """Read the buffer after a run that started and ended at `start_ns` and `end_ns` (`time.monotonic_ns`)."""
        seconds, nanoseconds = self._clock[..., 0], self._clock[..., 1]
        self.runs.append((start_ns, end_ns, seconds * 1_000_000_000 + nanoseconds))

    def summary(self, peak_gflops: float | None = None, bf16_peak_gflops: float | None = None) -> list[dict[str, Any]]:
        """Per kernel, slowest first: `kernel`, `schedule`, `calls`, `total_ms`, `share` (of all kernel time),
        `gflops` (None without float work), `gbs` (GB/s of its buffers' bytes) and `intensity` (FLOP per byte; both
        None where a call's bytes are not known), and with `peak_gflops` (else None) `peak_percent` and `peak_ms`:
        the kernel's float work at the peak (its bfloat16 dot products' at `bf16_peak_gflops` where given), at most
        its measured time."""
        rows: dict[str, dict[str, Any]] = {}
        for _, _, times in self.runs:
            for call, (begin, end) in zip(self.calls, times):
                row = rows.setdefault(call.kernel, {"kernel": call.kernel, "schedule": call.schedule, "calls": 0})
                row["calls"] += 1
                row["ns"] = row.get("ns", 0) + int(end - begin)
                row["flops"] = row.get("flops", 0) + call.flops
                row["bf16_flops"] = row.get("bf16_flops", 0) + call.bf16_flops
                known = call.bytes > 0 and row.get("bytes", 0) >= 0  # -1: some call's bytes not known
                row["bytes"] = row.get("bytes", 0) + call.bytes if known else -1
        total = sum(row["ns"] for row in rows.values()) or 1
        for row in rows.values():
            nanoseconds, flops, moved, bf16 = row.pop("ns"), row.pop("flops"), row.pop("bytes"), row.pop("bf16_flops")
            row["total_ms"] = nanoseconds / 1e6
            row["share"] = nanoseconds / total
            row["gflops"] = flops / nanoseconds if flops and nanoseconds else None
            row["gbs"] = moved / nanoseconds if moved > 0 and nanoseconds else None
            row["intensity"] = flops / moved if flops and moved > 0 else None
            at_peak_ms = 1e3 * seconds_at_peaks(flops, bf16, peak_gflops, bf16_peak_gflops) if peak_gflops else None
            row["peak_percent"] = 100 * at_peak_ms / row["total_ms"] if at_peak_ms and row["total_ms"] else None
            row["peak_ms"] = min(row["total_ms"], at_peak_ms) if at_peak_ms is not None else None
        return sorted(rows.values(), key=lambda row: -row["total_ms"])

    def trace_events(self) -> list[dict[str, Any]]:
        """The runs as Chrome-trace complete events: one `model_run` per run, then one per kernel call."""
        pid = os.getpid()
        events: list[dict[str, Any]] = []
        for number, (start, end, times) in enumerate(self.runs):
            events.append(self._event("model_run", "Session", start, end, pid, {"run": number}))
            if self.clock == "cpu" and len(times):  # CPU-time offsets from the first call, placed at the run's start
                times = times - times[0, 0] + start
            for call, (begin, finish) in zip(self.calls, times):
                args = {"schedule": call.schedule, "flops": call.flops, "bytes": call.bytes}
                events.append(self._event(call.kernel, "Node", int(begin), int(finish), pid, args))
        return events

    def write_trace(self, path: str | os.PathLike[str]) -> str:
        """Write the Chrome trace (JSON array of events) to `path`; returns the path."""
        Path(path).write_text(json.dumps(self.trace_events(), indent=0))
        return str(path)

    def _event(self, name: str, category: str, start: int, end: int, pid: int, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "cat": category,
            "ph": "X",
            "ts": (start - self._origin) / 1000,
            "dur": (end - start) / 1000,
            "pid": pid,
            "tid": 0,
            "args": args,
        }


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """`Profiler.summary` as a text table (what `minimlc run --profile` prints)."""
    header = f"{'kernel':<40} {'calls':>6} {'total ms':>10} {'share':>7} {'GFLOP/s':>9} {'% peak':>7} {'GB/s':>7}"
    lines = [f"{header}  schedule"]
    for row in rows:
        gflops = f"{row['gflops']:.2f}" if row["gflops"] else "-"
        peak = f"{row['peak_percent']:.1f}" if row["peak_percent"] else "-"
        gbs = f"{row['gbs']:.2f}" if row.get("gbs") else "-"
        lines.append(
            f"{row['kernel']:<40} {row['calls']:>6} {row['total_ms']:>10.3f} {100 * row['share']:>6.1f}% "
            f"{gflops:>9} {peak:>7} {gbs:>7}  {row['schedule']}"
        )
    return "\n".join(lines)


def headroom_line(
    rows: Sequence[dict[str, Any]], peak_gflops: float, runs: int = 1, bf16_peak_gflops: float | None = None
) -> str:
    """What a schedule could still save: the kernels' float work at `peak_gflops` (their bfloat16 dot products' at
    `bf16_peak_gflops`, where given) against their measured time, per run (`rows`: `summary` over `runs` runs,
    computed with those peaks)."""
    measured = sum(row["total_ms"] for row in rows) / max(runs, 1)
    at_peak = sum(row["peak_ms"] for row in rows) / max(runs, 1)
    room = 100 * (1 - at_peak / measured) if measured else 0.0
    peaks = f"peak ({peak_gflops:.1f} GFLOP/s)"
    if bf16_peak_gflops:
        peaks = f"peaks ({peak_gflops:.1f} GFLOP/s, bfloat16 products {bf16_peak_gflops:.1f})"
    return (
        f"at the {peaks} the kernels' float work takes {at_peak:.3f} ms a run of the "
        f"{measured:.3f} ms they took: schedules that keep these algorithms save at most {room:.1f}%"
    )
