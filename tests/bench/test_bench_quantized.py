"""bench/bench_quantized.py: a quick run on a small quantized network checks the outputs and prints the ratios."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_prints_exact_outputs_and_ratios() -> None:
    command = [sys.executable, str(ROOT / "bench" / "bench_quantized.py"), "--size", "8", "--channels", "16"]
    env = {**os.environ, "MINIMLC_CACHE": "0"}
    result = subprocess.run(
        [*command, "--blocks", "1", "--rounds", "2", "--budget", "0"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bit for bit" in result.stdout
    assert "quantized resnet 16x8x8, 1 blocks, 1 thread" in result.stdout
    assert result.stdout.count("minimlc / this") == 3
