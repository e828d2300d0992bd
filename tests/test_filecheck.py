"""Runs the lit + filecheck IR tests under tests/filecheck/ as part of pytest, so one command runs everything."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"


@pytest.mark.slow
def test_lit_filecheck_suite() -> None:
    # The venv's scripts (mini-opt, filecheck, lit) may not be on PATH when pytest runs as .venv/bin/python.
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}
    for tool in ("mini-opt", "filecheck", "lit"):
        assert shutil.which(tool, path=env["PATH"]), f"{tool} not found: install the package with `pip install -e .[test]`"
    assert sorted(FILECHECK_DIR.rglob("*.mlir")), "no filecheck tests found"
    result = subprocess.run(
        [shutil.which("lit", path=env["PATH"]) or "lit", "-q", str(FILECHECK_DIR)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
