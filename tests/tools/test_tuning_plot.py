"""`minimlc tune --plot`: the total curve and one per task, drawn and read back, and the per-task curves a tuning run
records (each task's best latency after each of its trials)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from minimlc.tools.tuning_plot import TOTAL, draw_tuning_curves

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_every_curve_is_a_panel_holding_its_points(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    total = [(1, 0.004), (2, 0.003), (3, 0.003), (4, 0.0025)]
    tasks = {"task 0 (gemm_0)": [(1, 0.002), (2, 0.0015)], "task 1 (relu_1)": [(1, 0.001), (2, 0.001)]}
    path = tmp_path / "curves.png"
    drawn = draw_tuning_curves(total, tasks, path)
    assert list(drawn) == [TOTAL, *tasks]
    np.testing.assert_allclose(drawn[TOTAL], [[1, 4.0], [2, 3.0], [3, 3.0], [4, 2.5]])
    np.testing.assert_allclose(drawn["task 0 (gemm_0)"], [[1, 2.0], [2, 1.5]])
    assert path.read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.slow
def test_a_tuning_run_records_each_tasks_best_latency(mlp_path: Path, tmp_path: Path) -> None:
    """Five trials of the example MLP's four tasks: each task's default first, then one more for one of them; a
    task's curve is its own trials (1, 2, ...) and never rises."""
    from minimlc.tuner.tuner import tune

    db, out = tmp_path / "db.jsonl", io.StringIO()
    result = tune(str(mlp_path), db, trials=5, verify=False, cache="warm", peak_gflops=50, out=out)
    assert sorted(len(points) for points in result.task_curves.values()) == [1, 1, 1, 2]
    for label, points in result.task_curves.items():
        assert label.startswith("task ")
        assert [trials for trials, _ in points] == list(range(1, len(points) + 1))
        latencies = [seconds for _, seconds in points]
        assert latencies == sorted(latencies, reverse=True)
    kernels = {state.task.kernel for state in result.tasks}
    assert {label.split("(")[1].rstrip(")") for label in result.task_curves} == kernels
