"""The `minimlc` console script: run (the README's first command) and compile --emit at every level."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(sys.executable).parent


def minimlc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPTS / "minimlc"), *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def mlp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    subprocess.run([sys.executable, str(ROOT / "examples" / "make_mlp.py"), str(path)], check=True)
    return path


def test_run_prints_outputs_and_latency(mlp_path: Path) -> None:
    result = minimlc("run", str(mlp_path), "--repeat", "5")
    assert result.returncode == 0, result.stderr
    assert re.search(r"output logits: shape \[1, 10\] float32 .*argmax \d", result.stdout)
    assert re.search(r"latency: median [\d.]+ us over 5 runs", result.stdout)


def test_run_with_input_file_and_saved_outputs(mlp_path: Path, tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = minimlc("run", str(mlp_path), "--input", f"input={tmp_path / 'x.npy'}", "--save-outputs", str(tmp_path))
    assert result.returncode == 0, result.stderr
    from minimlc.runtime import InferenceSession

    expected = InferenceSession(str(mlp_path)).run(None, {"input": x})[0]
    np.testing.assert_array_equal(np.load(tmp_path / "logits.npy"), expected)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "input"], "--input expects NAME=FILE.npy, got 'input'"),
        (["--input", "input=/nonexistent.npy"], "cannot read input 'input' from '/nonexistent.npy'"),
    ],
)
def test_run_argument_errors(mlp_path: Path, args: list[str], message: str) -> None:
    result = minimlc("run", str(mlp_path), *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_run_wrong_input_shape(mlp_path: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 10), np.float32))
    result = minimlc("run", str(mlp_path), "--input", f"input={tmp_path / 'x.npy'}")
    assert result.returncode == 1
    assert "minimlc: error:" in result.stderr and "Traceback" not in result.stderr


def test_run_malformed_model(tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"not an onnx model")
    result = minimlc("run", str(path))
    assert result.returncode == 1
    assert "bad.onnx" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("level", "marker"),
    [
        ("graph", r"graph\.gemm"),
        ("te", r"te\.compute"),
        ("loop", r"loop\.for"),
        ("scf", r"scf\.for"),
        ("llvm-dialect", r"llvm\.func"),
        ("llvm-ir", r'define void @"?main_packed"?\(ptr'),
    ],
)
def test_compile_emits_each_level(mlp_path: Path, tmp_path: Path, level: str, marker: str) -> None:
    out = tmp_path / f"mlp.{level}"
    result = minimlc("compile", str(mlp_path), "--emit", level, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert re.search(marker, out.read_text())
