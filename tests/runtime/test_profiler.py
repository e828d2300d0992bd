"""The kernel profiler: every kernel call of a small CNN timed in order, summarised, written as a Chrome trace."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from model_builder import ModelBuilder

from minimlc import InferenceSession
from minimlc.lowering.pipeline import build_pipeline
from minimlc.runtime.profiler import ProfiledCall, Profiler, headroom_line, summary_table


def small_cnn() -> onnx.ModelProto:
    b = ModelBuilder(seed=3)
    y = b.node("Relu", [b.conv("x", 3, 16, "c1")], "r1")
    y = b.node("MaxPool", [y], "p1", kernel_shape=[2, 2], strides=[2, 2])
    y = b.node("Relu", [b.conv(y, 16, 32, "c2")], "r2")
    y = b.node("GlobalAveragePool", [y], "gap")
    return b.model([1, 3, 16, 16], y, [1, 32, 1, 1])


@pytest.fixture(scope="module")
def profiled() -> tuple[onnx.ModelProto, InferenceSession]:
    model = small_cnn()
    return model, InferenceSession(model, enable_profiling=True, num_threads=1)


def test_every_kernel_call_is_timed_in_order(profiled: tuple[onnx.ModelProto, InferenceSession], tmp_path: Path):
    model, session = profiled
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    session.profiler.runs.clear()
    start = time.monotonic_ns()
    (y,) = session.run(None, {"x": x})
    wall_us = (time.monotonic_ns() - start) / 1000
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)

    events = json.loads(Path(session.end_profiling(tmp_path / "trace.json")).read_text())
    run, *calls = events
    assert run["name"] == "model_run"
    assert run["ph"] == "X"
    assert [e["name"] for e in calls] == [c.kernel for c in session.profiler.calls]
    assert len(calls) == session.stats["kernels"]
    assert all(e["dur"] >= 0 for e in calls)
    assert sum(e["dur"] for e in calls) <= min(run["dur"], wall_us)
    starts = [e["ts"] for e in calls]
    assert starts == sorted(starts)
    assert starts[0] >= run["ts"]
    assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in itertools.pairwise(calls))


def test_summary_names_rules_and_flops(profiled: tuple[onnx.ModelProto, InferenceSession]):
    _, session = profiled
    session.run(None, {"x": np.zeros((1, 3, 16, 16), np.float32)})
    rows = session.profiler.summary(peak_gflops=100.0)
    assert sum(row["share"] for row in rows) == pytest.approx(1.0)
    assert {row["kernel"] for row in rows} == {call.kernel for call in session.profiler.calls}
    conv = next(row for row in rows if row["kernel"].startswith("fused_pad_conv"))
    assert "conv nr=" in conv["schedule"]
    assert conv["gflops"] > 0
    assert conv["peak_percent"] is not None
    assert "calls" in summary_table(rows).splitlines()[0]
    runs = len(session.profiler.runs)
    for row in rows:  # the float work at 100 GFLOP/s: FLOP / 1e8 ms, never more than the time measured
        flops = runs * sum(call.flops for call in session.profiler.calls if call.kernel == row["kernel"])
        assert row["peak_ms"] == pytest.approx(min(row["total_ms"], flops / 1e8))
    # Whether the convolution beats 100 GFLOP/s depends on the machine (a 264 GFLOP/s core did: its time at that peak
    # was the time measured). Peaks far above and below any CPU's do not: at 1 EFLOP/s the float work takes a sliver
    # of the time measured, at 1 kFLOP/s it is capped at that time.
    (fast,) = [row for row in session.profiler.summary(peak_gflops=1e9) if row["kernel"] == conv["kernel"]]
    assert 0 < fast["peak_ms"] < conv["total_ms"]
    (slow,) = [row for row in session.profiler.summary(peak_gflops=1e-6) if row["kernel"] == conv["kernel"]]
    assert slow["peak_ms"] == slow["total_ms"] == conv["total_ms"]


def test_each_call_records_the_bytes_of_its_buffers(profiled: tuple[onnx.ModelProto, InferenceSession]):
    """The max pool reads 16x16x16 and writes 16x8x8 floats; the average pool's sum reads 32x8x8 and writes 32."""
    _, session = profiled
    moved = {call.kernel.rsplit("_", 1)[0]: call.bytes for call in session.profiler.calls}
    assert moved["max_pool"] == (16 * 16 * 16 + 16 * 8 * 8) * 4
    assert moved["avg_pool_sum"] == (32 * 8 * 8 + 32) * 4
    assert all(call.bytes > 0 for call in session.profiler.calls)
    session.run(None, {"x": np.zeros((1, 3, 16, 16), np.float32)})
    runs = len(session.profiler.runs)
    table = summary_table(session.profiler.summary()).splitlines()
    assert "GB/s" in table[0]
    for row in session.profiler.summary():
        (call,) = [call for call in session.profiler.calls if call.kernel == row["kernel"]]
        assert row["gbs"] == pytest.approx(runs * call.bytes / (row["total_ms"] * 1e6))
        assert row["intensity"] == pytest.approx(call.flops / call.bytes)


def test_calls_of_unknown_bytes_have_no_bandwidth() -> None:
    calls = [ProfiledCall("k", 100, "", (), 400), ProfiledCall("k", 100, "", (), 0), ProfiledCall("j", 10, "", ())]
    profiler = Profiler(calls, np.zeros(32 * len(calls), np.uint8))
    profiler._clock[:, 1, 1] = 1000  # every call took 1 us
    profiler.record_run(0, 0)
    rows = {row["kernel"]: row for row in profiler.summary()}
    assert rows["k"]["gflops"] == pytest.approx(0.1)
    assert rows["k"]["gbs"] is None
    assert rows["k"]["intensity"] is None
    assert rows["j"]["gbs"] is None
    saved_without_bytes = {"kernel": "k", "flops": 100, "schedule": "", "tasks": ["a"]}
    assert ProfiledCall.from_json(saved_without_bytes) == ProfiledCall("k", 100, "", ("a",), 0)


def test_bfloat16_products_count_at_their_own_peak() -> None:
    """A kernel of 3000 FLOPs, 2000 of them bfloat16 dot products, in 1 us: at peaks of 2 and 4 GFLOP/s its work
    takes 0.5 + 0.5 us (100%), at the FMA peak alone 1.5 us (150%, capped at its time); a saved build without the
    share reads 0."""
    profiler = Profiler([ProfiledCall("k", 3000, "", (), 0, 2000)], np.zeros(32, np.uint8))
    profiler._clock[:, 1, 1] = 1000
    profiler.record_run(0, 0)
    (row,) = profiler.summary(2.0, 4.0)
    assert row["peak_percent"] == pytest.approx(100.0)
    assert row["peak_ms"] == pytest.approx(0.001)
    (row,) = profiler.summary(2.0)
    assert row["peak_percent"] == pytest.approx(150.0)
    assert row["peak_ms"] == pytest.approx(0.001)
    assert ProfiledCall.from_json({"kernel": "k", "flops": 3000, "schedule": "", "tasks": []}).bf16_flops == 0
    line = headroom_line([{"total_ms": 1.0, "peak_ms": 0.5}], 2.0, bf16_peak_gflops=4.0)
    assert line.startswith("at the peaks (2.0 GFLOP/s, bfloat16 products 4.0) the kernels' float work takes 0.500 ms")


def test_the_headroom_line_compares_the_work_at_the_peak_with_the_time_measured():
    rows = [{"total_ms": 30.0, "peak_ms": 24.0}, {"total_ms": 10.0, "peak_ms": 0.0}]  # over two runs
    line = headroom_line(rows, 50.0, runs=2)
    assert line == (
        "at the peak (50.0 GFLOP/s) the kernels' float work takes 12.000 ms a run of the 20.000 ms they took: "
        "schedules that keep these algorithms save at most 40.0%"
    )


def test_profiling_off_compiles_no_timer(profiled: tuple[onnx.ModelProto, InferenceSession]):
    model, session = profiled
    plain = InferenceSession(model, num_threads=1)
    assert plain.profiler is None
    assert "clock_gettime" not in plain.llvm_ir
    assert "clock_gettime" in session.llvm_ir
    with pytest.raises(ValueError, match="enable_profiling"):
        plain.end_profiling()


def test_profiling_places_the_pass():
    passes = build_pipeline(
        ["te-to-loop", "default-schedule", "loop-plan-memory", "loop-outline-parallel"], profiling="monotonic"
    )
    assert list(map(str, passes)) == [
        "te-to-loop",
        "default-schedule{annotate=true}",
        "loop-plan-memory",
        "loop-profile-calls",
        "loop-outline-parallel",
    ]


def test_a_saved_profiled_build_loads_with_its_profiler(
    profiled: tuple[onnx.ModelProto, InferenceSession], tmp_path: Path
) -> None:
    from minimlc.runtime import load

    _, session = profiled
    session.save(tmp_path / "profiled.mlc")
    loaded = load(tmp_path / "profiled.mlc", num_threads=1)
    assert loaded.profiler is not None
    assert loaded.profiler.calls == session.profiler.calls
    assert all(call.bytes > 0 for call in loaded.profiler.calls)
    loaded.run(None, {"x": np.zeros((1, 3, 16, 16), np.float32)})
    rows = loaded.profiler.summary()
    assert {row["kernel"] for row in rows} == {call.kernel for call in session.profiler.calls}
    assert any("conv nr=" in row["schedule"] for row in rows)
    plain = InferenceSession(small_cnn(), num_threads=1)
    plain.save(tmp_path / "plain.mlc")
    assert load(tmp_path / "plain.mlc").profiler is None


def test_the_cpu_clock_reads_the_calling_threads_cpu_time(tmp_path: Path) -> None:
    """With `profiling_clock="cpu"` every reading lies between the calling thread's CPU time before and after the
    run (a wall clock's readings would not: they count from boot), and the trace places the calls from the run's
    start in that order."""
    session = InferenceSession(small_cnn(), enable_profiling=True, profiling_clock="cpu", num_threads=1)
    session.profiler.runs.clear()
    before = time.thread_time_ns()
    session.run(None, {"x": np.ones((1, 3, 16, 16), np.float32)})
    after = time.thread_time_ns()
    ((_, _, times),) = session.profiler.runs
    assert before <= times.min()
    assert times.max() <= after
    assert (times[:, 1] >= times[:, 0]).all()
    assert (times[1:, 0] >= times[:-1, 1]).all()
    run, *calls = json.loads(Path(session.end_profiling(tmp_path / "trace.json")).read_text())
    assert calls[0]["ts"] == run["ts"]
    assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in itertools.pairwise(calls))
    session.save(tmp_path / "cpu.mlc")
    from minimlc.runtime import load

    assert load(tmp_path / "cpu.mlc", num_threads=1).profiler.clock == "cpu"
    with pytest.raises(ValueError, match="needs num_threads=1"):
        load(tmp_path / "cpu.mlc", num_threads=2)


@pytest.mark.parametrize(
    ("clock", "threads", "message"),
    [("cpu", 2, "profiling_clock='cpu' needs num_threads=1 \\(got 2\\)"), ("tsc", 1, "must be one of wall, cpu")],
)
def test_a_bad_profiling_clock_is_refused_before_compiling(clock: str, threads: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InferenceSession(small_cnn(), enable_profiling=True, profiling_clock=clock, num_threads=threads)


def test_a_bfloat16_products_flops_are_two_per_multiply_add() -> None:
    """`kernel_flops` of a MatMul with bfloat16 products (`acc + dot_bf16(0.0, a, b)` over words of two values) is
    the float MatMul's 2*M*N*K: each word two products, their sum and the sum into the accumulator; all of it is
    `bf16_product_flops`, which the tuner puts at the dot product's peak (target pinned: znver4 has the dot product;
    the host need not)."""
    from minimlc.driver.calibration import bf16_passes
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.abi import ENTRY_ATTR
    from minimlc.lowering.pipeline import run_pipeline
    from minimlc.lowering.program.loop_profile_calls import bf16_product_flops, kernel_flops

    m, k, n = 5, 36, 48
    weight = onnx.numpy_helper.from_array(np.ones((k, n), np.float32), "w")
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("MatMul", ["a", "w"], ["y"])],
        "bf16_matmul",
        [onnx.helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [m, k])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [m, n])],
        [weight],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    flops, bf16 = {}, {}
    for precision in ("fp32", "bf16"):
        imported = import_model(model)
        extra = bf16_passes("znver4", None) if precision == "bf16" else None
        run_pipeline(imported.module, build_pipeline(3, extra_passes=extra), stop_after="program", target="znver4")
        kernels = [f for f in imported.module.ops if hasattr(f, "body") and ENTRY_ATTR not in f.attributes]
        flops[precision] = max(kernel_flops(kernel) for kernel in kernels)
        bf16[precision] = max(bf16_product_flops(kernel) for kernel in kernels)
    assert flops == {"fp32": 2 * m * n * k, "bf16": 2 * m * n * k}
    assert bf16 == {"fp32": 0, "bf16": 2 * m * n * k}  # all of the bf16 build's GEMM work is its dot products
