"""Fixtures the CLI tests share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mlp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example MLP, written by examples/make_mlp.py."""
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    subprocess.run([sys.executable, str(ROOT / "examples" / "make_mlp.py"), str(path)], check=True)
    return path
