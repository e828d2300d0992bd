"""bench/bench_tuning_cluster.py: a short run on a loopback cluster, and its refusals of bad options."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "bench" / "bench_tuning_cluster.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.slow  # a Ray head, two workers and four actors start: about 20 s
def test_one_round_times_every_candidate_on_one_worker_and_on_two() -> None:
    pytest.importorskip("ray", reason="the distributed extra (ray) is not installed")
    result = run_bench("--candidates", "3", "--rounds", "1")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert re.search(r"^built 3 of 3 candidates of \w+$", result.stdout, re.M), result.stdout
    row = re.search(r"^1\s+(\d+\.\d)\s+(\d+\.\d)\s+(\d+\.\d\d)$", result.stdout, re.M)
    assert row, result.stdout
    one, two, ratio = (float(value) for value in row.groups())
    assert one > 0
    assert two > 0
    assert ratio == pytest.approx(two / one, abs=0.01)
    assert re.search(rf"^median ratio, two workers to one: {row[3]}$", result.stdout, re.M)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shape", "8x64"], "--shape is ROWSxDEPTHxCOLUMNS, not '8x64'"),
        (["--candidates", "1"], "--candidates needs at least 2 and --rounds at least 1"),
        (["--rounds", "0"], "--candidates needs at least 2 and --rounds at least 1"),
    ],
)
def test_bad_options_are_refused_in_one_line(args: list[str], message: str) -> None:
    result = run_bench(*args)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(message)
    assert "Traceback" not in result.stderr
