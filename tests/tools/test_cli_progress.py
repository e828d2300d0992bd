"""What `minimlc` prints while it compiles (each stage as it completes) and how it treats its environment."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_run import SCRIPTS, assert_one_line_error, minimlc

from minimlc.tools.cli_progress import milliseconds


def test_run_prints_each_compile_stage_as_it_completes(mlp_path: Path, tmp_path: Path) -> None:
    result = minimlc("run", str(mlp_path), "--no-cache", "--repeat", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    start = lines.index(f"compiling {mlp_path} ...")
    stages = [re.fullmatch(r"  (\w+) +\d+\.\d{3} s(  \(\d+ partitions?\))?", line) for line in lines[start + 1 :]]
    assert [match.group(1) for match in stages if match] == ["import", "lower", "codegen", "load"], result.stderr
    assert re.search(r"^  codegen +\d+\.\d{3} s  \(\d+ partitions?\)$", result.stderr, flags=re.MULTILINE)
    saved = minimlc("compile", str(mlp_path), "--no-cache", "-o", str(tmp_path / "mlp.mlc"))
    assert saved.returncode == 0, saved.stderr
    assert re.search(r"^compiling .* at O3 \.\.\.\n  import .*\n  lower .*\n  codegen .*\n  load ", saved.stderr)


@pytest.mark.parametrize(("seconds", "shown"), [(0.0000123, "0.0123 ms"), (0.0005, "0.500 ms"), (1.5, "1500.000 ms")])
def test_latencies_are_milliseconds(seconds: float, shown: str) -> None:
    assert milliseconds(seconds) == shown


@pytest.mark.parametrize("setting", ["0", "abc", "-2"])
def test_a_bad_compile_jobs_setting_is_one_line_error(mlp_path: Path, setting: str) -> None:
    result = subprocess.run(
        [str(SCRIPTS / "minimlc"), "run", str(mlp_path), "--repeat", "1"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MINIMLC_COMPILE_JOBS": setting},
    )
    assert_one_line_error(result, f"MINIMLC_COMPILE_JOBS must be a positive integer, got '{setting}' (the number of")
    assert "compiling" not in result.stderr  # refused before any work
