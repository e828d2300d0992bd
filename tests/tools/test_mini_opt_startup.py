"""`mini-opt` starts lean: every lit RUN line and CLI test pays its start-up, so modules only some runs need load
where they are used. A run that parses and prints graph IR loads neither llvmlite's bindings (35 ms), nor difflib
(pass-name suggestions: tests/filecheck/tools/pass-names.mlir), nor the DOT writer; asking for a target CPU loads
the bindings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LAZY = ["llvmlite.binding", "difflib", "minimlc.tools.op_graph_dot"]
GRAPH_IR = """
func.func @bits(%a: tensor<4xi32>) -> tensor<4xi32> {
  %not = graph.not %a : tensor<4xi32>
  func.return %not : tensor<4xi32>
}
"""


def loaded_after(tmp_path: Path, *args: str) -> dict[str, object]:
    """Run `mini-opt` in a fresh interpreter on a small module; its exit status and which `LAZY` modules it loaded."""
    source = tmp_path / "m.mlir"
    source.write_text(GRAPH_IR)
    script = (
        "import contextlib, io, json, sys\n"
        "from minimlc.tools.mini_opt import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main({[str(source), *args]!r})\n"
        f"print(json.dumps({{'status': status, 'loaded': [m for m in {LAZY!r} if m in sys.modules]}}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def test_importing_mini_opt_loads_none_of_the_deferred_modules() -> None:
    script = f"import sys, minimlc.tools.mini_opt; print([m for m in {LAZY!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_parse_and_print_run_loads_none_of_them(tmp_path: Path) -> None:
    assert loaded_after(tmp_path) == {"status": 0, "loaded": []}


@pytest.mark.parametrize(
    ("args", "needed"),
    [
        (["--mcpu", "x86-64-v3"], "llvmlite.binding"),
        (["--view-op-graph"], "minimlc.tools.op_graph_dot"),
    ],
    ids=["mcpu", "view-op-graph"],
)
def test_what_a_run_asks_for_loads_where_it_is_used(tmp_path: Path, args: list[str], needed: str) -> None:
    assert loaded_after(tmp_path, *args) == {"status": 0, "loaded": [needed]}
