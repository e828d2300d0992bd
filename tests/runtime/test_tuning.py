"""The tuner: tasks, measurement in a worker, the database (resume, reuse, corrupt lines) and applying records."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.cache import cache_key
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline, make_context, run_pipeline
from minimlc.lowering.schedule.default_schedule import schedule_trace
from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase, TuningDatabaseError
from minimlc.lowering.target import target_from_name
from minimlc.runtime.profiler import ProfiledCall, Profiler
from minimlc.tuner.measure import Measurer
from minimlc.tuner.search import Search
from minimlc.tuner.tasks import Task, extract_tasks
from minimlc.tuner.tuner import ROOM_FLOOR, TaskState, _priority, at_peak_seconds, headroom_line, tune
from minimlc.tuner.verify import group_times, task_groups, verify_in_model

HOST = target_from_name("host")


def mlp(layers: int, width: int = 32, seed: int = 0) -> onnx.ModelProto:
    """`layers` Gemm + Relu layers of `width` x `width`: every layer's kernels have the same structure."""
    rng = np.random.default_rng(seed)
    nodes, weights, current = [], [], "x"
    for layer in range(layers):
        w = numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32) / width, f"w{layer}")
        weights.append(w)
        nodes += [
            helper.make_node("Gemm", [current, f"w{layer}"], [f"g{layer}"], transB=1),
            helper.make_node("Relu", [f"g{layer}"], [f"r{layer}"]),
        ]
        current = f"r{layer}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, width])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [4, width])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_tasks_are_distinct_kernels_weighted_by_calls():
    tasks = extract_tasks(import_model(mlp(3)), HOST)
    by_rule = {task.rule: task for task in tasks}
    assert len(tasks) == 2
    assert set(by_rule) == {"gemm", "elementwise"}
    gemm = by_rule["gemm"]
    assert gemm.calls == 3
    assert gemm.flops == 2 * 4 * 32 * 32
    assert gemm.weights == (((32, 32), "float32"),)
    assert gemm.output == ((4, 32), "float32")


def test_the_task_with_the_most_room_below_the_peak_is_tuned_first():
    """A task near the peak yields to one with less time but more room; a task measured at the peak keeps a floor."""
    gemm, relu = sorted(extract_tasks(import_model(mlp(3)), HOST), key=lambda task: task.rule != "gemm")

    def measured(task: Task, latency: float, at_peak: float, trials: int = 0) -> TaskState:
        state = TaskState(task, Search(task.space, 0), "warm", at_peak, trials=trials)
        state.search.add(task.space.default(), latency)
        return state

    near_peak = measured(gemm, 10e-6, 9e-6)  # 3 calls: 30 us of time, 3 us of room
    far_from_it = measured(relu, 8e-6, 0.0)  # 3 calls: 24 us, all of it room
    assert _priority(far_from_it) > _priority(near_peak)
    assert _priority(near_peak) == pytest.approx(3 * 1e-6)
    at_peak = measured(gemm, 10e-6, 11e-6, trials=3)  # timings and the peak are measurements: a floor of 5%
    assert _priority(at_peak) == pytest.approx(3 * ROOM_FLOOR * 10e-6 / 2)
    assert _priority(TaskState(relu, Search(relu.space, 0), "warm", 0.0)) == float("inf")  # not measured yet
    assert headroom_line([near_peak, far_from_it], 100.0) == (
        "at the peak (100.0 GFLOP/s) the tasks' float work takes 0.027 ms of their 0.054 ms weighted: their "
        "schedules can save at most 50.0% more"
    )


def test_a_contraction_is_measured_with_the_epilogue_fused_into_it():
    """The GEMM's task module holds the elementwise kernel that alone reads its output (here bias-free residual add
    + ReLU: `epilogue_call`), as `loop-fuse-kernels` fuses it in the model; its other input (the residual) is an input
    of the task, its output the task's output. The elementwise task itself is measured alone."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((32, 32)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["g"], transB=1),
        helper.make_node("Add", ["g", "r"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    info = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [4, 32]) for name in ("x", "r", "y")]
    graph = helper.make_graph(nodes, "residual", info[:2], info[2:], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    by_rule = {task.rule: task for task in extract_tasks(import_model(model), HOST)}
    gemm, epilogue = by_rule["gemm"], by_rule["elementwise"]
    assert gemm.inputs == (((4, 32), "float32"), ((4, 32), "float32"))
    assert gemm.weights == (((32, 32), "float32"),)
    assert gemm.output == ((4, 32), "float32")
    assert gemm.module.count("func.call @") == 2
    assert 'loop.alloc "global"' in gemm.module
    assert epilogue.module.count("func.call @") == 1
    with Measurer(timeout=60) as measurer:
        result = measurer.measure(gemm, gemm.space.default())
    assert result.error is None
    assert result.latency


def test_a_failing_candidate_costs_only_that_candidate():
    (gemm, _) = extract_tasks(import_model(mlp(1)), HOST)
    broken = type(gemm)(**{**gemm.__dict__, "module": "this is not IR"})
    with Measurer(timeout=60) as measurer:
        failed = measurer.measure(broken, gemm.space.default())
        assert failed.latency is None
        assert "failed to build" in (failed.error or "")
        good = measurer.measure(gemm, gemm.space.default())
        assert good.latency is not None
        assert good.latency > 0
    with Measurer(timeout=0.001) as measurer:
        late = measurer.measure(gemm, gemm.space.default())
        assert late.latency is None
        assert "timed out" in (late.error or "")


def test_a_paired_candidate_is_timed_with_the_default():
    (gemm, _) = extract_tasks(import_model(mlp(1)), HOST)
    other = {**gemm.space.default(), "unroll": False}
    with Measurer(timeout=60) as measurer:
        paired = measurer.measure(gemm, other, paired=True)
        again = measurer.measure(gemm, other, paired=True)  # the default's build is kept in the worker
    for result in (paired, again):
        assert result.error is None
        assert result.latency
        assert result.baseline
        assert result.latency > 0 < result.baseline


@pytest.mark.slow
def test_tune_resumes_and_reuses_shared_kernels(tmp_path: Path):
    db = tmp_path / "tuning.jsonl"
    out = io.StringIO()
    first = tune(mlp(2), db, trials=3, verify=False, out=out)
    assert len(db.read_text().splitlines()) == 3
    keys = [json.loads(line)["key"] for line in db.read_text().splitlines()]
    assert len(set(keys[:2])) == 2  # every task's default first, one trial each
    assert "ID | task" in out.getvalue()
    assert "3/3 trials" in out.getvalue()
    assert all(state.reused == 0 for state in first.tasks)
    assert len(first.curve) == 3
    assert all(latency > 0 for _, latency in first.curve)

    out = io.StringIO()
    second = tune(mlp(3, seed=1), db, trials=2, verify=False, out=out)  # another model with the same kernels
    assert "reused" in out.getvalue()
    records = [json.loads(line) for line in db.read_text().splitlines()]
    assert len(records) == 5
    configs = [(r["key"], json.dumps(r["config"], sort_keys=True)) for r in records]
    assert len(set(configs)) == len(configs)  # nothing measured twice
    assert sum(state.reused for state in second.tasks) == 3


def test_a_corrupt_line_names_the_file_and_line(tmp_path: Path):
    db = tmp_path / "tuning.jsonl"
    record = Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": 1}, 1e-6)
    db.write_text(record.to_json() + "\n{not json\n")
    with pytest.raises(TuningDatabaseError, match=rf"{db}:2: not a JSON line"):
        TuningDatabase(db)
    db.write_text(json.dumps({**json.loads(record.to_json()), "latency": "fast"}) + "\n")
    with pytest.raises(TuningDatabaseError, match=rf"{db}:1: field 'latency'"):
        InferenceSession(mlp(1), tuning_db=db)


def test_applied_records_change_the_schedule_and_keep_the_numerics(tmp_path: Path):
    model = mlp(2)
    gemm = next(task for task in extract_tasks(import_model(model), HOST) if task.rule == "gemm")
    config = {**gemm.space.default(), "mr": 1, "unroll": False, "parallel": False}
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    db.add(Record(gemm.key, HOST.cpu, "gemm", gemm.kernel, gemm.flops, config, 1e-6))
    db.add(Record(gemm.key, HOST.cpu, "gemm", gemm.kernel, gemm.flops, gemm.space.default(), 2e-6))

    def trace(database: TuningDatabase | None) -> str:
        imported = import_model(model)
        run_pipeline(imported.module, 3, stop_after="schedule")
        return schedule_trace(make_context(), imported.module, database)

    assert "loop-split{kernel=gemm_0 loop=i0 factor=1}" in trace(db)
    assert "loop-split{kernel=gemm_0 loop=i0 factor=1}" not in trace(None)
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    (tuned,) = InferenceSession(model, tuning_db=db.path).run(None, {"x": x})
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(tuned, expected, rtol=1e-4, atol=1e-5)


def test_a_record_outside_the_space_gives_way_to_the_fastest_that_fits(tmp_path: Path):
    """A database written when a knob took other values (here `mr` 99): its fastest record no longer fits the space,
    and the build applies the fastest record that does (the tuner's check in the model asks for the same one)."""
    model = mlp(2)
    gemm = next(task for task in extract_tasks(import_model(model), HOST) if task.rule == "gemm")
    stale = {**gemm.space.default(), "mr": 99}
    fitting = {**gemm.space.default(), "mr": 1, "unroll": False, "parallel": False}
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    for config, latency in ((stale, 1e-7), (fitting, 1e-6), (gemm.space.default(), 2e-6)):
        db.add(Record(gemm.key, HOST.cpu, "gemm", gemm.kernel, gemm.flops, config, latency))
    assert not gemm.space.fits(stale)
    assert db.best(gemm.key, HOST.cpu).config == stale
    assert db.best(gemm.key, HOST.cpu, gemm.space).config == fitting
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="schedule")
    assert "loop-split{kernel=gemm_0 loop=i0 factor=1}" in schedule_trace(make_context(), imported.module, db)


def test_the_cache_key_follows_the_applied_records(tmp_path: Path):
    imported = import_model(mlp(1))
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    pipeline = build_pipeline(3, tuning_db=db.path)
    before = cache_key(imported, pipeline, 3, "host")
    assert before != cache_key(imported, 3, 3, "host")
    db.add(Record("k", HOST.cpu, "gemm", "gemm_0", 10, {"mr": 1}, 1e-6))
    assert cache_key(imported, pipeline, 3, "host") != before


def test_a_config_slower_in_the_model_is_rejected_and_never_applied(tmp_path: Path):
    model = mlp(1, width=256)
    tasks = extract_tasks(import_model(model), HOST)
    gemm = next(task for task in tasks if task.rule == "gemm")
    knobs = {knob.name: knob.values for knob in gemm.space.knobs}  # the narrowest tile of this target's space
    slow = {**gemm.space.default(), "mr": 1, "nr": min(knobs["nr"]), "kc": 1, "order": "k,j,i", "unroll": False}
    slow["parallel"] = False
    gemm.space.check(slow, gemm.kernel)
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    db.add(Record(gemm.key, HOST.cpu, "gemm", gemm.kernel, gemm.flops, gemm.space.default(), 2e-6))
    db.add(Record(gemm.key, HOST.cpu, "gemm", gemm.kernel, gemm.flops, slow, 1e-6))  # "won" alone
    out = io.StringIO()
    (verdict,) = verify_in_model(model, str(db.path), tasks, rounds=5, name="mlp", out=out)
    assert verdict.record.config == slow
    assert verdict.ratio > 1.0  # what "slower" means; the margin (1.5-2x on a quiet 2-core machine) is the machine's
    assert not verdict.kept
    assert "rejected: slower in the model" in out.getvalue()
    assert "the model's kernels: " in out.getvalue()
    rejection = TuningDatabase(db.path).records[-1]
    assert rejection.config == slow
    assert rejection.latency is None
    assert rejection.error is not None
    assert rejection.error.startswith("slower in the model than the default")
    assert TuningDatabase(db.path).best(gemm.key, HOST.cpu).config == gemm.space.default()
    out = io.StringIO()
    assert verify_in_model(model, str(db.path), tasks, rounds=5, out=out) == []  # nothing tuned is left
    assert "no kernel's best config differs from its default" in out.getvalue()


def test_tasks_are_compared_by_the_groups_fused_in_either_build():
    default = [
        ProfiledCall("fused_0", 0, "", ("a", "b")),  # the ReLU b fused into the convolution a
        ProfiledCall("pool_1", 0, "", ("c",)),
        ProfiledCall("k_2", 0, "", ("d",)),
        ProfiledCall("k_3", 0, "", ()),
    ]
    tuned = [ProfiledCall("conv_0", 0, "", ("a",)), ProfiledCall("fused_1", 0, "", ("b", "c")), default[2], default[3]]
    groups = task_groups(default, tuned)
    assert groups["a"] == groups["b"] == groups["c"] != groups["d"]
    clock = np.zeros(32 * len(tuned), np.uint8)  # per call, the (seconds, nanoseconds) before and after it
    profiler = Profiler(tuned, clock)
    for durations in ([3, 1, 5, 7], [4, 2, 6, 7], [30, 10, 50, 7]):  # nanoseconds per call
        clock.view(np.int64)[:] = np.array([[0, 0, 0, d] for d in durations]).ravel()
        profiler.record_run(0, 1)
    times = group_times(profiler, groups)
    assert times == {"a": pytest.approx(6e-9), "b": pytest.approx(6e-9), "c": pytest.approx(6e-9), "d": 6e-9}
    assert group_times(profiler, groups, first_run=2)["a"] == pytest.approx(40e-9)


def test_an_imported_model_is_tuned_but_not_checked_in_the_model(tmp_path: Path):
    out = io.StringIO()
    tune(import_model(mlp(1)), tmp_path / "tuning.jsonl", trials=1, out=out)
    assert "not checked in the model: tune() was given an imported model, not an ONNX one" in out.getvalue()


def test_bf16_products_count_at_their_own_peak() -> None:
    """A task's float work at the peaks: its bfloat16 dot products' at the dot product loop's, the rest at the FMA
    loop's (without a bfloat16 peak, all at the FMA's)."""
    (gemm, *_) = extract_tasks(import_model(mlp(3)), HOST)
    task = replace(gemm, flops=3_000_000_000, bf16_flops=2_000_000_000)
    assert at_peak_seconds(task, 100.0, 200.0) == pytest.approx(0.01 + 0.01)
    assert at_peak_seconds(task, 100.0) == pytest.approx(0.03)
