"""Convolution algorithms as a tuning decision: `minimlc tune` times Winograd and the direct sum per 3x3 shape once
(records reused on the next run), and `te-conv-winograd{tuning-db}` follows the faster record ahead of
`prefers_winograd`, keeping the numbers (onnxruntime, rtol = atol = 1e-4)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from minimlc import InferenceSession
from minimlc.dialects import te
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline, run_passes
from minimlc.lowering.strategy.conv import ConvShape, prefers_winograd
from minimlc.lowering.strategy.tuning_db import (
    ALGORITHM_RULE,
    Record,
    TuningDatabase,
    algorithm_key,
    target_key,
)
from minimlc.lowering.target import target_from_name
from minimlc.tuner.algorithms import block_model, check_in_model, winograd_shapes
from minimlc.tuner.measure import Measurer
from minimlc.tuner.tuner import tune

HOST = target_from_name("host")
WINOGRAD_BY_RULE = ConvShape(1, 64, 64, 12, 12, 3, 3)
DIRECT_BY_RULE = ConvShape(1, 16, 32, 6, 8, 3, 3)


def algorithm_records(path: Path) -> list[Record]:
    return [r for r in TuningDatabase(path).records if r.rule == ALGORITHM_RULE]


def winograd_gemms(model: onnx.ModelProto, database: Path | None) -> int:
    passes = build_pipeline(3, tuning_db=database)
    passes = passes[: [item.name for item in passes].index("te-conv-winograd") + 1]
    imported = import_model(model)
    run_passes(imported.module, passes)
    return sum(1 for op in imported.module.walk() if isinstance(op, te.ComputeOp) and op.tag.data == "winograd_gemm")


def test_the_faster_record_decides_ahead_of_the_rule(tmp_path: Path) -> None:
    assert prefers_winograd(WINOGRAD_BY_RULE, HOST)
    assert not prefers_winograd(DIRECT_BY_RULE, HOST)
    path = tmp_path / "db.jsonl"
    db = TuningDatabase(path)
    for shape, winograd, direct in ((WINOGRAD_BY_RULE, 2e-3, 1e-3), (DIRECT_BY_RULE, 1e-3, 2e-3)):
        for algorithm, latency in (("winograd", winograd), ("direct", direct)):
            record = Record(
                algorithm_key(shape),
                target_key(HOST),
                ALGORITHM_RULE,
                algorithm_key(shape),
                1,
                {"algorithm": algorithm},
                latency,
            )
            db.add(record)
    against_the_rule = block_model(WINOGRAD_BY_RULE)
    assert winograd_gemms(against_the_rule, None) == 1
    assert winograd_gemms(against_the_rule, path) == 0
    taken = block_model(DIRECT_BY_RULE)
    assert winograd_gemms(taken, None) == 0
    assert winograd_gemms(taken, path) == 1
    x = np.random.default_rng(1).standard_normal((1, 16, 6, 8)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(taken.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(taken, tuning_db=path, cache=False).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def test_tune_times_each_shape_once_and_its_tasks_follow_the_choice(tmp_path: Path) -> None:
    model_path = tmp_path / "block.onnx"
    onnx.save(block_model(WINOGRAD_BY_RULE), model_path)
    db_path = tmp_path / "db.jsonl"
    out = io.StringIO()
    result = tune(str(model_path), db_path, trials=1, verify=False, out=out)
    records = algorithm_records(db_path)
    assert {r.config["algorithm"] for r in records} == {"winograd", "direct"}
    assert all(r.key == algorithm_key(WINOGRAD_BY_RULE) and r.latency is not None and r.latency > 0 for r in records)
    assert "conv3x3:1x64x12x12->64" in out.getvalue()
    assert "| timed" in out.getvalue()
    winograd = TuningDatabase(db_path).best(algorithm_key(WINOGRAD_BY_RULE), target_key(HOST))
    assert winograd is not None
    has_gemm_task = any(state.task.kernel.startswith("winograd_gemm") for state in result.tasks)
    assert has_gemm_task == (winograd.config["algorithm"] == "winograd")
    again = io.StringIO()
    tune(str(model_path), db_path, trials=1, verify=False, out=again)
    assert "| reused" in again.getvalue()
    assert len(algorithm_records(db_path)) == 2


def test_only_the_pipelines_that_run_winograd_have_shapes_to_time() -> None:
    imported = import_model(block_model(WINOGRAD_BY_RULE))
    assert winograd_shapes(imported, HOST, opt_level=3) == [WINOGRAD_BY_RULE]
    assert winograd_shapes(imported, HOST, opt_level=1) == []
    assert not any(isinstance(op, te.ComputeOp) for op in imported.module.walk())  # still the graph it was


def test_choices_that_differ_from_the_rule_are_checked_in_the_model(tmp_path: Path) -> None:
    """Winograd for the 16 -> 32 block (the rule says direct) is timed in the model against the rule's build: kept,
    or rejected with failed records that make the rule's algorithm the database's best. Choices the rule agrees with
    are not timed at all."""
    db = TuningDatabase(tmp_path / "db.jsonl")
    model = block_model(DIRECT_BY_RULE).SerializeToString()
    out = io.StringIO()
    with Measurer() as measurer:
        assert check_in_model(model, {WINOGRAD_BY_RULE: "winograd"}, db, HOST, measurer, "block", out=out)
        assert out.getvalue() == ""
        kept = check_in_model(model, {DIRECT_BY_RULE: "winograd"}, db, HOST, measurer, "block", out=out)
    assert "1 measured algorithm choice(s) that differ from the rule's" in out.getvalue()
    failed = [r for r in db.records if r.latency is None]
    if kept:
        assert not failed
    else:
        assert [(r.key, r.config, r.error.split(":")[0]) for r in failed] == [
            (algorithm_key(DIRECT_BY_RULE), {"algorithm": "winograd"}, "slower in the model")
        ]
