"""Timing candidates with their weights where the model keeps them: in the caches (warm) or in memory (cold, flushed
before each call), chosen by the model's weight bytes and, above the L2, by the model's own kernel times; kept apart
in the database."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from test_tuning import mlp

from minimlc.frontend.onnx import import_model
from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase, TuningDatabaseError
from minimlc.lowering.target import target_from_name
from minimlc.tuner import cache_flush, calibrate, measure, tuner
from minimlc.tuner.cache_flush import CacheEvictor, cache_mode_for, can_flush
from minimlc.tuner.calibrate import closest_mode, majority_mode
from minimlc.tuner.measure import Measurer, _Timing
from minimlc.tuner.tasks import Task, extract_tasks
from minimlc.tuner.tuner import cache_mode, tune

HOST = target_from_name("host")
needs_clflush = pytest.mark.skipif(not can_flush(), reason="clflush needs an x86-64 host")


@needs_clflush
def test_flushing_keeps_every_byte():
    data = np.random.default_rng(0).standard_normal(100_003).astype(np.float32)
    expected = data.copy()
    odd = data[1:]  # starts inside a cache line
    for mode in ("warm", "cold"):
        CacheEvictor(mode).evict([data, odd, np.empty(0, np.float32)])
        np.testing.assert_array_equal(data, expected)
    with pytest.raises(ValueError, match="cache mode must be one of warm, cold, not 'hot'"):
        CacheEvictor("hot")


class _Recorder:
    """Stands in for a call and a flusher, logging what happens in order."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.touched = [np.zeros(4, np.float32)]

    def __call__(self) -> None:
        self.log.append("call")

    def evict(self, buffers: list[np.ndarray]) -> None:
        assert buffers is self.touched
        self.log.append("flush")


def test_a_cold_timing_flushes_the_buffers_before_every_call():
    recorder = _Recorder()
    _Timing(min_seconds=0.0, repeats=3, clock=time.perf_counter, evictor=recorder).time(recorder)  # type: ignore[arg-type]
    calls = recorder.log.count("call")
    assert calls >= 4 and recorder.log[0] == "call"  # the warm-up call is not flushed
    assert recorder.log[1:] == ["flush", "call"] * (calls - 1)
    warm = _Recorder()
    _Timing(min_seconds=0.0, repeats=3, clock=time.perf_counter).time(warm)  # type: ignore[arg-type]
    assert "flush" not in warm.log


@needs_clflush
def test_a_cold_candidate_is_measured():
    (gemm, _) = extract_tasks(import_model(mlp(1)), target_from_name("host"))
    with Measurer(timeout=60, cache="cold") as measurer:
        result = measurer.measure(gemm, gemm.space.default())
        paired = measurer.measure(gemm, {**gemm.space.default(), "unroll": False}, paired=True)
    assert result.error is None and result.latency and result.latency > 0
    assert paired.error is None and paired.latency and paired.baseline


def test_auto_puts_the_weights_where_the_model_keeps_them(monkeypatch: pytest.MonkeyPatch):
    zen5 = (48 * 2**10, 2**20, 32 * 2**20)
    monkeypatch.setattr(cache_flush, "can_flush", lambda: True)
    assert cache_mode_for(512 * 2**10, zen5) == "warm"  # fits the core's L2
    assert cache_mode_for(5 * 2**20, zen5) == "cold"  # SqueezeNet: read from memory in the model (module docstring)
    monkeypatch.setattr(cache_flush, "can_flush", lambda: False)
    assert cache_mode_for(98 * 2**20, zen5) == "warm"  # no clflush
    monkeypatch.setattr(cache_flush, "can_flush", lambda: True)
    imported = import_model(mlp(2))  # 8 KiB of weights
    out = io.StringIO()
    assert cache_mode("auto", imported, out) == "warm" and out.getvalue() == ""
    assert cache_mode("cold", imported, out) == "cold" and out.getvalue() == ""
    small = dataclasses.replace(HOST, cache_bytes=(1024, 4096, 8192))
    monkeypatch.setattr(tuner, "target_from_name", lambda name: small)
    assert cache_mode("auto", imported, out) == "cold"
    assert "weights 8 KiB > L2 4 KiB: candidates are timed with their weights in memory" in out.getvalue()
    with pytest.raises(ValueError, match="cache must be auto, warm, cold, not 'tepid'"):
        cache_mode("tepid", imported, out)


def test_calibration_takes_the_closer_timing_and_the_majority_for_the_rest():
    """ResNet-50 on a Xeon with a 480 MiB L3 (see calibrate.py): a 7x7 convolution ran in the model as it did cold,
    a 56x56 one as warm (its cold timing also flushes activations the model finds in cache)."""
    assert closest_mode(1.92e-3, {"warm": 1.39e-3, "cold": 2.01e-3}) == "cold"
    assert closest_mode(1.40e-3, {"warm": 1.46e-3, "cold": 2.55e-3}) == "warm"
    assert closest_mode(1.0, {"warm": 0.5, "cold": 1.9}) == "cold"  # factors: 2 below against 1.9 above
    assert majority_mode({"warm": 4.5e-3, "cold": 13.7e-3}) == "cold"
    assert majority_mode({"warm": 2.0, "cold": 1.0}) == "warm"
    assert majority_mode({"warm": 1.0, "cold": 1.0}) == "cold"


@needs_clflush
def test_auto_times_each_task_as_its_calibration_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Weights over the L2 (8 KiB, an L2 of 4 KiB here): `auto` profiles the model, times its GEMM (fused with its
    ReLU in the model and in the measurer) warm and cold, and records every candidate in the state it chose, here
    warm (made the closer one: the size rule alone says cold); the ReLU task, never alone, takes the GEMM's state."""
    small = dataclasses.replace(HOST, cache_bytes=(1024, 4096, 8192))
    monkeypatch.setattr(tuner, "target_from_name", lambda name: small)
    monkeypatch.setattr(calibrate, "closest_mode", lambda in_model, timed: "warm")
    out = io.StringIO()
    tune(mlp(2), tmp_path / "db.jsonl", trials=3, verify=False, out=out)
    printed = out.getvalue()
    assert "weights 8 KiB > L2 4 KiB: timing the model's kernels warm and cold" in printed
    (row,) = [line for line in printed.splitlines() if line.startswith("gemm_0 ") and line.count("|") == 5]
    model_us, warm_us, cold_us = (float(cell) for cell in row.split("|")[2:5])
    assert min(model_us, warm_us, cold_us) > 0
    assert row.split("|")[-1].strip() == "warm"
    assert "1 task(s) timed as the model ran them; the other 1 are timed warm" in printed
    records = [json.loads(line) for line in (tmp_path / "db.jsonl").read_text().splitlines()]
    assert [r["cache"] for r in records] == ["warm"] * 3


@pytest.mark.slow
@needs_clflush
def test_cold_records_are_kept_apart_from_warm_ones(tmp_path: Path):
    db = tmp_path / "tuning.jsonl"
    tune(mlp(1), db, trials=2, cache="cold", verify=False, out=io.StringIO())
    records = [json.loads(line) for line in db.read_text().splitlines()]
    assert [r["cache"] for r in records] == ["cold", "cold"]
    warm = tune(mlp(1), db, trials=1, cache="warm", verify=False, out=io.StringIO())
    assert sum(state.reused for state in warm.tasks) == 0  # cold latencies are not warm ones
    again = tune(mlp(1), db, trials=1, cache="cold", verify=False, out=io.StringIO())
    assert sum(state.reused for state in again.tasks) == 2


def test_the_best_record_is_of_the_latest_timing_kind(tmp_path: Path):
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    for cache, mr, latency in (("warm", 1, 1e-6), ("cold", 2, 3e-6), ("cold", 4, 2e-6)):
        db.add(Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": mr}, latency, cache=cache))
    best = TuningDatabase(db.path).best("k", "cpu")
    assert best is not None and best.config == {"mr": 4}
    db.add(Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": 8}, 5e-6, cache="warm"))
    best = TuningDatabase(db.path).best("k", "cpu")
    assert best is not None and best.config == {"mr": 1}


def test_an_unknown_timing_kind_is_named(tmp_path: Path):
    db = tmp_path / "tuning.jsonl"
    record = json.loads(Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": 1}, 1e-6).to_json())
    db.write_text(json.dumps({**record, "cache": "lukewarm"}) + "\n")
    with pytest.raises(TuningDatabaseError, match=rf"{db}:1: field 'cache' is 'lukewarm', not one of warm, cold"):
        TuningDatabase(db)
    del record["cache"]  # databases written before the field: warm
    db.write_text(json.dumps(record) + "\n")
    assert TuningDatabase(db).records[0].cache == "warm"


def _job(task: Task) -> dict[str, object]:
    """What the tuner sends the measuring worker for `task` (see `Measurer.measure`)."""
    return {"module": task.module, "inputs": task.inputs, "weights": task.weights, "output": task.output, "threads": 1}


def test_a_cold_call_flushes_its_weights_and_only_the_buffers_larger_than_the_l2():
    """A GEMM over small activations flushes its weight (and packed copy) only; a ReLU over 4 MiB (more than any
    L2 here) flushes its input and output: they cannot have stayed in the core's caches since their producer ran."""
    (gemm, _) = extract_tasks(import_model(mlp(1)), HOST)
    call = measure._build(_job(gemm), gemm.space.default())
    compiled = call._compiled
    assert [id(b) for b in call.touched] == [id(b) for b in [*compiled.weights.values(), *compiled.precomputed]]
    assert len(call.touched) >= 1
    width = 2**20
    assert 4 * width > HOST.cache_bytes[1]
    relu = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "relu",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=9,
    )
    (task,) = extract_tasks(import_model(relu), HOST)
    call = measure._build(_job(task), task.space.default())
    assert sorted(b.nbytes for b in call.touched) == [4 * width, 4 * width]
