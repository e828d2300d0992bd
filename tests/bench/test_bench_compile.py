"""bench/bench_compile.py (compile time by stage beside run time) and bench/bench_ab.py (same-run A/B of two builds)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from minimlc import InferenceSession

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from make_mlp import build_mlp  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_bench_compile_reports_the_stages() -> None:
    bench = str(ROOT / "bench" / "bench_compile.py")
    result = run(bench, "--models", "squeezenet,gpt2", "--runs", "1", "--compiles", "2")
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == [
        "model", "compile", "s", "frontend", "lower", "codegen", "cpu", "parts", "load", "mlc", "ms", "ORT", "ms", "nodes"
    ]
    assert [row.split()[0] for row in rows] == ["squeezenet", "gpt2"]
    for row in rows:
        _, total, frontend, lower, codegen, _cpu, parts, load, _mlc, ort_ms, _nodes = row.split()
        assert int(parts) >= 1
        assert float(ort_ms) > 0
        assert float(total) >= float(frontend) + float(lower) + float(codegen) + float(load) - 0.05


def test_bench_compile_names_an_unknown_workload() -> None:
    result = run(str(ROOT / "bench" / "bench_compile.py"), "--models", "resnet51")
    assert result.returncode == 2
    assert "no workload named resnet51" in result.stderr


def test_bench_ab_compares_two_builds(tmp_path: Path) -> None:
    onnx.save(build_mlp(batch=1), tmp_path / "mlp.onnx")
    for name in ("a", "b"):
        InferenceSession(tmp_path / "mlp.onnx").save(tmp_path / f"{name}.mlc")
    result = run(str(ROOT / "bench" / "bench_ab.py"), str(tmp_path / "a.mlc"), str(tmp_path / "b.mlc"), "--rounds", "5")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^\s+1\s+[\d.]+\s+[\d.]+\s+[\d.]+$", result.stdout, flags=re.MULTILINE), result.stdout
