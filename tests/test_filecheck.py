"""Runs the lit + filecheck IR tests under tests/filecheck/ as part of pytest, so one command runs everything."""

import shutil
import subprocess
import sys
from pathlib import Path

FILECHECK_DIR = Path(__file__).parent / "filecheck"


def test_lit_filecheck_suite() -> None:
    assert shutil.which("mini-opt"), "mini-opt is not on PATH: install the package with `pip install -e .[test]`"
    assert shutil.which("filecheck"), "filecheck is not on PATH: install the test extras"
    tests = sorted(FILECHECK_DIR.rglob("*.mlir"))
    assert tests, "no filecheck tests found"
    result = subprocess.run(
        [_lit_executable(), "-q", str(FILECHECK_DIR)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"


def _lit_executable() -> str:
    beside_python = Path(sys.executable).parent / "lit"
    return str(beside_python) if beside_python.exists() else shutil.which("lit") or "lit"
