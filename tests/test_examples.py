"""The example scripts that write models say what they wrote: the file, and the model's inputs and outputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_make_mlp_prints_the_file_and_the_models_inputs_and_outputs(tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_mlp.py"), str(path)], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines() == [
        f"wrote {path}: an MLP 784-128-10 (Gemm, Relu, Gemm), opset 17, 101,770 float32 weights",
        "  input   input   float32 [1, 784]",
        "  output  logits  float32 [1, 10]",
    ]
    assert path.stat().st_size > 4 * 101_770


def test_torch_mlp_compiles_the_model_three_ways_and_matches_eager() -> None:
    pytest.importorskip("torch")
    command = '.venv/bin/pip install ".[torch]" && .venv/bin/python examples/torch_mlp.py'
    assert command in (ROOT / "README.md").read_text()
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "torch_mlp.py")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    paths = [line.split()[0] for line in result.stdout.splitlines()]
    assert paths == ["torch.export", "torch.fx", "torch.compile"], result.stdout
