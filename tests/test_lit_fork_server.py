"""The lit suite's `mini-opt` fork server (`tests/lit_fork_server.py`) behaves as the console script: same standard
output, standard error and exit status for a run from a file in the working folder, from standard input, and a
refused one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_filecheck import mini_opt_server

GRAPH_IR = """
func.func @bits(%a: tensor<4xi32>) -> tensor<4xi32> {
  %not = graph.not %a : tensor<4xi32>
  func.return %not : tensor<4xi32>
}
"""
RUNS = {
    "file": "mini-opt m.mlir --print-op-generic",
    "stdin": "mini-opt < m.mlir",
    "refused": "mini-opt m.mlir -p graph-simplfy",
    "bad-ir": "echo 'func.func @f() {' | mini-opt",
}


def run_all(folder: Path, path: str) -> dict[str, tuple[int, str, str]]:
    return {
        name: (result.returncode, result.stdout, result.stderr)
        for name, command in RUNS.items()
        for result in [
            subprocess.run(
                command, shell=True, cwd=folder, env={**os.environ, "PATH": path}, capture_output=True, text=True
            )
        ]
    }


def test_the_fork_server_runs_as_the_console_script(tmp_path: Path) -> None:
    (tmp_path / "m.mlir").write_text(GRAPH_IR)
    # The venv's scripts may not be on PATH when pytest runs as .venv/bin/python (as `.ci/run` runs it).
    scripts = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    console_script = shutil.which("mini-opt", path=scripts)
    assert console_script, "mini-opt not installed"
    path = os.pathsep.join([str(Path(console_script).parent), os.environ.get("PATH", "")])
    expected = run_all(tmp_path, path)
    (tmp_path / "server").mkdir()
    with mini_opt_server(tmp_path / "server") as client_dir:
        served = run_all(tmp_path, str(client_dir) + os.pathsep + path)
    assert served == expected
    assert [status for status, _, _ in expected.values()] == [0, 0, 1, 1]
    assert "graph.not" in expected["stdin"][1]
    assert '"graph.not"' in expected["file"][1]
    assert expected["refused"][2].startswith("mini-opt: error: unknown pass or pipeline 'graph-simplfy'")
