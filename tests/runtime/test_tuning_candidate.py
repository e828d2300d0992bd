"""Builder and runner apart: a candidate built to object code here and timed from it, against the local measurer; the
tuner's protocol on the local runner; the core never imports Ray."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
from tuning_models import matmul_8x64x64

from minimlc.frontend.onnx import import_model
from minimlc.lowering.strategy.tuning_db import config_id
from minimlc.lowering.target import target_from_name
from minimlc.tuner.candidate import Candidate, build_candidate, time_candidate
from minimlc.tuner.measure import Measurer
from minimlc.tuner.runner import LocalRunner, measure_configs
from minimlc.tuner.tasks import Task, extract_tasks

HOST = target_from_name("host")


def matmul_task() -> Task:
    (task,) = extract_tasks(import_model(matmul_8x64x64()), HOST)
    return task


def test_a_candidate_built_here_times_as_the_local_measurer_does() -> None:
    task = matmul_task()
    other = {**task.space.default(), "unroll": not task.space.default()["unroll"]}
    with Measurer(timeout=60) as measurer:
        built = build_candidate(measurer.job(task, other, paired=True))
        local = measurer.measure(task, other)
    assert isinstance(built, Candidate)
    assert built.baseline is not None
    assert built.baseline.digest != built.digest
    assert {"pool_code", "code_0"} <= set(built.code)
    assert built.meta["target"]["cpu"] == HOST.cpu
    timed = time_candidate({"candidate": built})
    assert timed.error is None
    assert timed.latency is not None
    assert timed.baseline is not None
    assert local.latency is not None
    assert 1 / 4 < timed.latency / local.latency < 4, (timed.latency, local.latency)  # a loaded machine


def test_a_candidate_that_does_not_build_is_a_failed_result() -> None:
    task = matmul_task()
    with Measurer(timeout=60) as measurer:  # a build process, as the Ray runner's
        job = {**measurer.job(task, task.space.default()), "module": "this is not IR"}
        failed = measurer.run(build_candidate, job)  # type: ignore[arg-type]
    assert failed.latency is None
    assert "failed to build" in (failed.error or "")


def test_the_local_runner_times_the_default_alone_then_pairs() -> None:
    task = matmul_task()
    default = task.space.default()
    samples = {config_id(config): config for config in (task.space.sample(random.Random(seed)) for seed in range(3))}
    others = [config for key, config in samples.items() if key != config_id(default)]
    with LocalRunner(timeout=60) as runner:
        ((config, first, worker),) = measure_configs(runner, task, [default], None, "warm")
        assert config_id(config) == config_id(default)
        assert first.latency is not None
        assert first.baseline is None
        assert worker == "local"
        measured = list(measure_configs(runner, task, others, first.latency, "warm"))
    assert [config_id(config) for config, _, _ in measured] == [config_id(config) for config in others]
    assert all(result.latency and result.baseline is None for _, result, _ in measured)  # scaled to the default's


def test_the_core_never_imports_ray() -> None:
    script = (
        "import sys, minimlc, minimlc.tuner.tuner, minimlc.tuner.runner, minimlc.tuner.ray_runner, "
        "minimlc.tools.minimlc_cli\nprint('ray' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_bf16_gemm_task_takes_its_load_time_words_as_weights() -> None:
    """The bfloat16 build's GEMM reads B's i32 words computed at load time. Its standalone module takes them as a
    weight, as the model does, so the rule sees a weight B there too and the default config (packed B) builds; with
    B's words as an input the space had `pack` in [False] only and every candidate of the task failed to build."""
    from minimlc.driver.calibration import bf16_passes
    from minimlc.tuner.measure import scheduled_model

    znver4 = target_from_name("znver4")
    tasks = extract_tasks(import_model(matmul_8x64x64()), znver4, extra_passes=bf16_passes("znver4", None))
    (gemm,) = [task for task in tasks if task.rule == "bf16_gemm"]
    assert [dtype for _, dtype in gemm.weights] == ["int32"]
    default = gemm.space.default()
    assert default["pack"] is True
    with Measurer(timeout=60) as measurer:
        job = measurer.job(gemm, default)
    scheduled = scheduled_model(job, default, np.random.default_rng(0))
    assert isinstance(scheduled, tuple), scheduled
    imported, _ = scheduled
    assert imported.weights["w0"].dtype == np.int32
