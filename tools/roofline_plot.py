"""`minimlc run MODEL --profile --plot roofline.png`: each kernel as a point under the machine's roofline.

A kernel's point is its arithmetic intensity (x: the floating-point operations of its calls, as `loop-profile-calls`
counts them, per byte of the memref buffers the calls pass, which it records beside them: each read or written once,
the least traffic a call can have) against the GFLOP/s the profiler measured (y), log-log. The roof is min(peak,
bandwidth x intensity): the FMA peak `runtime.machine_peak` measures (times the threads, as the profile table's % of
peak) and the memory bandwidth it measures on the same threads. A point far under the slope moves more bytes than its
buffers (re-reads that miss the caches); one far under the flat roof wastes compute. Everything comes from the
profile, so a saved profiled build (`.mlc`) plots as its `.onnx` does:

    rows = session.profiler.summary()                       # `intensity` and `gflops` per kernel
    drawn = draw_roofline(roofline_points(rows), peak_gflops=120.0, bandwidth_gbs=20.0, path="r.png", title="model")

matplotlib is imported only to draw (the `plot` extra), with its Agg backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from minimlc.runtime.session import Session

LABELLED = 5
"""The kernels labelled on the plot: the slowest."""


@dataclass(frozen=True)
class KernelPoint:
    """One kernel on the roofline."""

    kernel: str
    intensity: float
    """FLOP per byte of its buffers."""
    gflops: float
    """Achieved, over all its calls."""
    total_ms: float


def roofline_points(rows: Sequence[Mapping[str, Any]]) -> list[KernelPoint]:
    """The kernels of `rows` (`Profiler.summary`, slowest first) that have float work and known bytes, in that
    order."""
    return [
        KernelPoint(row["kernel"], row["intensity"], row["gflops"], row["total_ms"])
        for row in rows
        if row["gflops"] and row["intensity"]
    ]


def draw_roofline(
    points: Sequence[KernelPoint], peak_gflops: float, bandwidth_gbs: float, path: str | Path, title: str
) -> np.ndarray:
    """Draw `points` under the roof of `peak_gflops` and `bandwidth_gbs` into `path` (PNG, SVG or PDF by its
    suffix; written atomically), the `LABELLED` slowest named; the (intensity, GFLOP/s) pairs drawn, read back from
    the plot."""
    import matplotlib

    from minimlc.tools.cli_files import write_atomically

    matplotlib.use("Agg")
    from matplotlib import pyplot

    ridge = peak_gflops / bandwidth_gbs
    intensities = [point.intensity for point in points] + [ridge]
    low, high = min(intensities) / 4, max(intensities) * 4
    figure, axes = pyplot.subplots(figsize=(7, 5))
    axes.plot([low, ridge], [bandwidth_gbs * low, peak_gflops], color="black", label=f"memory {bandwidth_gbs:.1f} GB/s")
    roof = f"FMA peak {peak_gflops:.1f} GFLOP/s"
    axes.plot([ridge, high], [peak_gflops, peak_gflops], color="black", linestyle="--", label=roof)
    total = sum(point.total_ms for point in points) or 1.0
    drawn = axes.scatter(
        [point.intensity for point in points],
        [point.gflops for point in points],
        s=[20 + 400 * point.total_ms / total for point in points],
        alpha=0.6,
        label="kernels (area: share of time)",
    )
    for point in sorted(points, key=lambda point: -point.total_ms)[:LABELLED]:
        axes.annotate(
            point.kernel, (point.intensity, point.gflops), fontsize=7, xytext=(4, 4), textcoords="offset points"
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOP / byte of the kernel's buffers)")
    axes.set_ylabel("GFLOP/s")
    axes.set_title(title)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    write_atomically(Path(path), lambda temporary: figure.savefig(temporary, format=Path(path).suffix[1:] or "png"))
    pyplot.close(figure)
    return np.asarray(drawn.get_offsets())


def plot_session(model: str, session: Session, peak_gflops: float, rows: Sequence[dict[str, Any]], path: Path) -> str:
    """`minimlc run --profile --plot PATH`: the kernels of `session`'s profile (`rows`, computed with `peak_gflops`)
    on the roofline into `path`, under the bandwidth measured on the session's threads; the line saying what it
    drew."""
    from minimlc.runtime.machine_peak import memory_bandwidth_gbs

    points = roofline_points(rows)
    bandwidth = memory_bandwidth_gbs(session.num_threads)
    title = f"{model}: {len(points)} kernels, {session.num_threads} thread(s)"
    draw_roofline(points, peak_gflops, bandwidth, path, title)
    left_out = len(rows) - len(points)
    note = f" ({left_out} without float work or known buffer sizes left out)" if left_out else ""
    return f"wrote {path}: {len(points)} kernels under {peak_gflops:.1f} GFLOP/s and {bandwidth:.1f} GB/s{note}"
