"""The architecture holds: the layers import downwards only, lowering has one subpackage per stage, files stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOWER_LAYERS = ("dialects", "frontend", "lowering")
STAGES = ("graph", "graph_to_te", "te", "te_to_loop", "loop", "schedule", "program", "loop_to_scf", "llvm")
MAX_LINES = 500


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (lazy imports inside functions included)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("path", python_files(*LOWER_LAYERS), ids=lambda p: str(p.relative_to(ROOT)))
def test_lower_layers_do_not_import_the_runtime_or_tools(path: Path) -> None:
    # minimlc.te and minimlc.schedule are runtime/te and runtime/schedule (the Python authoring API, above the compiler)
    upward_prefixes = ("minimlc.runtime", "minimlc.tools", "minimlc.te", "minimlc.schedule")
    upward = {m for m in imported_modules(path) if m.startswith(upward_prefixes) or m == "minimlc"}
    assert not upward, f"{path.relative_to(ROOT)} imports {sorted(upward)}"


def test_frontend_and_dialects_do_not_import_lowering() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.startswith("minimlc.lowering"))
        for path in python_files("dialects", "frontend")
    }
    assert not {path: modules for path, modules in offenders.items() if modules}


def test_lowering_has_one_subpackage_per_stage() -> None:
    """One room per stage, and `generic` for the passes of every stage (`cse`)."""
    packages = {path.parent.name for path in (ROOT / "lowering").glob("*/__init__.py")}
    assert packages == {*STAGES, "generic"}
    loose = sorted(path.name for path in (ROOT / "lowering").glob("*.py"))
    assert loose == ["__init__.py", "abi.py", "pipeline.py", "plugins.py", "target.py", "workers.py"]


def test_no_python_file_outside_dialects_and_tests_is_over_the_limit() -> None:
    folders = ("frontend", "lowering", "runtime", "tools", "bench", "examples", "minimlc")
    long_files = {
        str(path.relative_to(ROOT)): lines
        for path in python_files(*folders)
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long_files, f"over {MAX_LINES} lines: {long_files}"
