"""bench/bench_generate.py: a quick run on the small config, timed by CPU time, and a bad clock."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "bench" / "bench_generate.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.mark.slow  # a compile of the small config's shapes and a 512 MiB bandwidth read: about 14 s
def test_cpu_clock_times_prefill_and_decode_beside_onnx_runtime() -> None:
    result = run_bench("--layers", "2", "--prompt", "6", "--new", "3", "--rounds", "1", "--clock", "cpu")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "small (2 layers): prompt 6, 3 new tokens, 1 thread(s), cpu clock;" in result.stdout
    number = r"\d+\.\d+"
    for name in ("minimlc float32", "onnxruntime float32"):
        row = rf"^{name}\s+\d+\s+{number}\s+{number}\s+{number}\s+\d+%$"
        assert re.search(row, result.stdout, re.M), result.stdout
        prefill = float(re.search(rf"^{name}\s+\d+\s+({number})", result.stdout, re.M)[1])
        assert prefill > 0
    assert re.search(rf"^float32 minimlc / ONNX Runtime: prefill {number}x, decode {number}x$", result.stdout, re.M)


def test_a_layer_count_below_one_is_refused() -> None:
    result = run_bench("--layers", "0")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].endswith("argument --layers: expected a positive integer, got '0'")


def test_an_unknown_clock_is_refused() -> None:
    result = run_bench("--clock", "sundial")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith("argument --clock: invalid choice: 'sundial' (choose from 'wall', 'cpu')")
    )
