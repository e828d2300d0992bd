"""bench/bench_models.py `--precision`: its parsing, and bf16 refused in one line on a CPU without a bfloat16 dot
product (this host's Zen 3; skipped where the host has one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from minimlc.lowering.target import target_from_name

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_models.py"


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, check=False)


def test_bf16_is_refused_naming_the_missing_feature() -> None:
    host = target_from_name("host")
    if host.dot_bf16_bits:
        pytest.skip(f"this CPU ({host.cpu}) has a bfloat16 dot product")
    result = run_bench("--quick", "--models", "mlp", "--threads", "1", "--precision", "bf16")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"bench_models.py: error: --precision bf16: this CPU ({host.cpu}) has no bfloat16 dot product "
        "(x86: avx512bf16; AArch64: bf16)"
    )
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # refused before measuring anything


def test_precision_takes_fp32_or_bf16_only() -> None:
    result = run_bench("--models", "mlp", "--precision", "int8")
    assert result.returncode == 2
    assert "argument --precision: invalid choice: 'int8' (choose from" in result.stderr.splitlines()[-1]
    assert "'fp32', 'bf16'" in result.stderr.splitlines()[-1]


def test_bf16_percent_of_peak_is_of_the_bf16_dot_product_loop(tmp_path: Path) -> None:
    """A bf16 build's products run on the bfloat16 dot product: its "% peak" is of that loop's measured peak (twice
    the FMA loop's on Zen 4, about the same on CPUs with two FMA ports: the two are not compared here), ONNX
    Runtime's (float32) still of the FMA loop's."""
    host = target_from_name("host")
    if not host.dot_bf16_bits:
        pytest.skip(f"this CPU ({host.cpu}) has no bfloat16 dot product")
    report_path = tmp_path / "report.json"
    result = run_bench("--quick", "--models", "matmul", "--matmul-size", "128", "--threads", "1", "--precision",
                       "bf16", "--json", str(report_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    machine, (row,) = (report := json.loads(report_path.read_text()))["machine"], report["rows"]
    assert machine["bf16_dot_gflops"] > 0
    assert row["minimlc_pct_peak"] == pytest.approx(100 * row["minimlc_gflops"] / machine["bf16_dot_gflops"])
    if row["ort_gflops"] is not None:
        assert row["ort_pct_peak"] == pytest.approx(100 * row["ort_gflops"] / machine["fma_gflops"])
    assert "(minimlc's: of the bfloat16 dot product loop," in result.stdout
