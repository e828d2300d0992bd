"""bench/bench_load.py: a saved model's import, load and first-run times in fresh processes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_load_prints_each_step(tmp_path: Path) -> None:
    model = tmp_path / "mlp.onnx"
    subprocess.run([sys.executable, str(ROOT / "examples" / "make_mlp.py"), str(model)], check=True)
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_load.py"), str(model), "--runs", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "mlp.mlc" in result.stdout and "2 fresh processes" in result.stdout
    for step in ("import", "load", "first run", "second run", "process"):
        assert re.search(rf"^{step}\s+[\d.]+\s+[\d.]+$", result.stdout, flags=re.MULTILINE), result.stdout
