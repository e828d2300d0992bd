"""bench/bench_te_matmul.py runs: both builds agree with numpy and a row per thread count comes out (no timing is
checked here; the ratio means something only on a quiet machine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_te_matmul_prints_a_ratio_per_thread_count() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_te_matmul.py"), "--size", "64", "--rounds", "3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[-2:]
    assert [row.split(" | ")[0] for row in rows] == ["1", "2"]
    assert all(float(row.split(" | ")[3]) > 0 for row in rows)
