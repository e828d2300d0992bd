"""A saved model runs without the compiler: loading and running a saved ResNet-50 (onnx's light model) imports
neither xDSL nor ONNX, and gives the compiling session's outputs bitwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minimlc import InferenceSession
from minimlc.tools.conformance import light_model_paths

pytestmark = pytest.mark.slow


def test_a_saved_resnet50_loads_and_runs_without_xdsl_or_onnx(tmp_path: Path) -> None:
    (model,) = [path for path in light_model_paths() if path.stem == "light_resnet50"]
    session = InferenceSession(str(model), num_threads=1)
    session.save(tmp_path / "resnet50.mlc")
    (info,) = session.get_inputs()
    x = np.random.default_rng(0).standard_normal(info.shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    script = f"""
import sys
import numpy as np
from minimlc.runtime import load
session = load({str(tmp_path / "resnet50.mlc")!r}, num_threads=1)
(y,) = session.run(None, {{{info.name!r}: np.load({str(tmp_path / "x.npy")!r})}})
np.save({str(tmp_path / "y.npy")!r}, y)
print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"xdsl", "onnx", "onnxruntime"}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), session.run(None, {info.name: x})[0])
