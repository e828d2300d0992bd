"""`minimlc run MODEL --profile --plot roofline.png`: each kernel as a point under the machine's roofline.

A kernel's point is its arithmetic intensity (x: the floating-point operations of one call, as `loop-profile-calls`
counts them, per byte of the memref buffers the call takes: each read or written once, the least traffic the call can
have) against the GFLOP/s the profiler measured (y), log-log. The roof is min(peak, bandwidth x intensity): the FMA
peak `runtime.machine_peak` measures (times the threads, as the profile table's % of peak) and the memory bandwidth
of a minimlc-compiled ReduceSum streaming 256 MiB on the same threads. A point far under the slope moves more bytes
than its buffers (re-reads that miss the caches); one far under the flat roof wastes compute. The profile records no
bytes, so the model is lowered once more, with the same pipeline, to the `program` stage, where each kernel is a
function whose arguments are its buffers:

    module = profiled_module("model.onnx", {}, opt_level=3)     # kernels at the `program` stage
    points = roofline_points(session.profiler.summary(), session.profiler.calls, kernel_bytes(module))
    drawn = draw_roofline(points, peak_gflops=120.0, bandwidth_gbs=20.0, path="roofline.png", title="model")

matplotlib is imported only to draw (the `plot` extra), with its Agg backend.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import argparse

    from xdsl.dialects.builtin import ModuleOp

    from minimlc.runtime.profiler import ProfiledCall
    from minimlc.runtime.session import Session

STREAM_MIB = 256
"""The ReduceSum's input, well past the last-level caches."""
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


def kernel_bytes(module: ModuleOp) -> dict[str, int]:
    """Per function of `module`, the bytes of its memref arguments, where all have static shapes and runtime
    element types; `@k(%a: memref<4x8xf32>, %b: memref<16xi8>, %pool: !llvm.ptr)` takes 144."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType

    from minimlc.lowering.abi import buffer_dtype

    sizes: dict[str, int] = {}
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        buffers = [arg.type for arg in function.args if isinstance(arg.type, MemRefType)]
        try:
            if all(size >= 0 for buffer in buffers for size in buffer.get_shape()):
                itemsizes = [buffer_dtype(buffer.element_type).itemsize for buffer in buffers]
                sizes[function.sym_name.data] = sum(
                    math.prod(buffer.get_shape()) * itemsize for buffer, itemsize in zip(buffers, itemsizes)
                )
        except (ValueError, TypeError):  # an element type with no runtime buffer (i4): its bytes are not known
            continue
    return sizes


def roofline_points(
    rows: Sequence[Mapping[str, Any]], calls: Sequence[ProfiledCall], bytes_by_kernel: Mapping[str, int]
) -> list[KernelPoint]:
    """The kernels of `rows` (`Profiler.summary`, slowest first) that have float work and known bytes, in that
    order: intensity from one call's FLOPs (`calls`) over its bytes, GFLOP/s as measured."""
    flops = {call.kernel: call.flops for call in calls}
    return [
        KernelPoint(
            row["kernel"], flops[row["kernel"]] / bytes_by_kernel[row["kernel"]], row["gflops"], row["total_ms"]
        )
        for row in rows
        if row["gflops"] and bytes_by_kernel.get(row["kernel"])
    ]


def profiled_module(
    model: str,
    input_shapes: Mapping[str, Sequence[int]],
    opt_level: int,
    *,
    target: str = "host",
    tuning_db: str | None = None,
    extra_passes: Mapping[str, Any] | None = None,
    clock: str = "wall",
) -> ModuleOp:
    """`model` lowered as `InferenceSession(..., enable_profiling=True)` lowers it, up to the `program` stage."""
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.pipeline import build_pipeline, run_passes
    from minimlc.lowering.target import set_target
    from minimlc.runtime.profiler import PROFILING_CLOCKS

    module = import_model(model, input_shapes or None).module
    set_target(module, target)
    passes = build_pipeline(
        opt_level,
        extra_passes=extra_passes,
        tuning_db=tuning_db,
        profiling=PROFILING_CLOCKS[clock],
        stop_after="program",
    )
    run_passes(module, passes)
    return module


def memory_bandwidth_gbs(threads: int, mebibytes: int = STREAM_MIB, repeats: int = 5) -> float:
    """GB/s of a minimlc-compiled float32 ReduceSum over rows of 4,096 streaming `mebibytes` MiB on `threads`
    threads: the best of `repeats` timed runs after one warm-up."""
    import onnx
    from onnx import TensorProto, helper

    from minimlc.driver.session import InferenceSession

    rows = (mebibytes << 20) // (4 * 4096)
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axis"], ["total"], keepdims=0)],
        "stream",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 4096])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [rows])],
        [onnx.numpy_helper.from_array(np.array([1], np.int64), "axis")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    session = InferenceSession(model, num_threads=threads)
    feeds = {"x": np.ones((rows, 4096), np.float32)}
    session.run(None, feeds)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        best = min(best, time.perf_counter() - start)
    return rows * 4096 * 4 / best / 1e9


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


def plot_session(
    args: argparse.Namespace, session: Session, peak_gflops: float, rows: Sequence[dict[str, Any]], path: Path
) -> str:
    """`minimlc run --profile --plot PATH`: the kernels of `session`'s profile (`rows`, computed with `peak_gflops`)
    on the roofline into `path`; the line saying what it drew."""
    from minimlc.tools import cli_options

    assert session.profiler is not None
    module = profiled_module(
        args.model,
        cli_options.input_shapes(args),
        args.opt_level,
        target=args.target or "host",
        tuning_db=args.tuning_db,
        extra_passes=cli_options.extra_passes(args),
        clock=args.profile_clock or "wall",
    )
    points = roofline_points(rows, session.profiler.calls, kernel_bytes(module))
    bandwidth = memory_bandwidth_gbs(session.num_threads)
    title = f"{args.model}: {len(points)} kernels, {session.num_threads} thread(s)"
    draw_roofline(points, peak_gflops, bandwidth, path, title)
    left_out = len(rows) - len(points)
    note = f" ({left_out} without float work or known buffer sizes left out)" if left_out else ""
    return f"wrote {path}: {len(points)} kernels under {peak_gflops:.1f} GFLOP/s and {bandwidth:.1f} GB/s{note}"
