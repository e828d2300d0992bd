"""bench/bench_dynamic.py, through `bench_models.py --dynamic`: a quick run's table and JSON (one compile serving
every shape, side by side with static builds), and bad options."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-W", "error", str(ROOT / "bench" / script), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_dynamic_option_reports_static_and_dynamic_side_by_side(tmp_path: Path) -> None:
    report = tmp_path / "dynamic.json"
    result = run_bench("bench_models.py", "--dynamic", "--quick", "--models", "mlp", "--json", str(report))
    assert result.returncode == 0, result.stderr
    header = r"^workload\s+shape\s+static ms\s+dynamic ms\s+dyn/static\s+compiles\s+symbolic$"
    assert re.search(header, result.stdout, re.M)
    for batch in (1, 8):
        row = rf"^mlp\s+batch={batch}\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+1\s+yes$"
        assert re.search(row, result.stdout, re.M), result.stdout
    assert "mlp: compiling the dynamic session ..." in result.stderr
    rows = json.loads(report.read_text())
    assert [row["shape"] for row in rows] == ["batch=1", "batch=8"]
    for row in rows:
        assert row["error"] == ""
        assert row["dynamic_compiles"] == 1
        assert row["symbolic"] == "yes"
        assert row["max_abs_diff"] < 1e-4  # the dynamic and the static build compute the same outputs
        assert row["dynamic_ms"] > 0
        assert row["static_ms"] > 0
        assert row["dynamic_over_static"] == pytest.approx(row["dynamic_ms"] / row["static_ms"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "mlp,nope"], "unknown workload(s) nope; known: bert, resnet50, mlp"),
        (["--threads", "0"], "--threads and --runs must be positive"),
        (["--clock", "cpu", "--threads", "2"], "--clock cpu needs --threads 1"),
    ],
)
def test_bad_options_are_refused(args: list[str], message: str) -> None:
    result = run_bench("bench_dynamic.py", *args)
    assert result.returncode == 2
    assert message in result.stderr
