"""The architecture holds: rooms import downwards only, lowering has one subpackage per stage, the runtime runs
without the compiler, files stay small, and every room is in the built wheel."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import minimlc

ROOT = Path(__file__).resolve().parent.parent
ROOMS = (
    "dialects", "te", "frontend", "lowering", "schedule", "runtime", "driver", "tuner", "byoc", "backend", "generation",
    "tools",
)
"""Every installed room, bottom to top: a room imports only rooms before it."""
SIDE_BY_SIDE = ("tuner", "byoc", "backend", "generation")
"""Rooms on one floor, above the driver: none imports another."""
ABOVE_THE_COMPILER = ("schedule", "runtime", "driver", "tuner", "byoc", "backend", "generation", "tools")
"""What `dialects`, `frontend` and `lowering` never import."""
NOT_INSTALLED = ("tests", "bench", "examples", "docs", "build")
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
            if node.module == "minimlc":  # `from minimlc import te` imports minimlc.te
                modules.update(f"minimlc.{alias.name}" for alias in node.names)
    return modules


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "minimlc" and len(parts) > 1 and parts[1] in ROOMS else None


@pytest.mark.parametrize("room", ROOMS)
def test_rooms_import_only_rooms_below_them(room: str) -> None:
    allowed = set(ROOMS[: ROOMS.index(room) + 1]) - ({*SIDE_BY_SIDE} - {room} if room in SIDE_BY_SIDE else set())
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if room_of(m) not in (None, *allowed))
        for path in python_files(room)
    }
    assert not {path: modules for path, modules in offenders.items() if modules}


@pytest.mark.parametrize("room", ["dialects", "frontend", "lowering"])
def test_the_compiler_imports_no_driver_tuner_or_api(room: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imported_modules(path) if room_of(m) in ABOVE_THE_COMPILER or m in ("minimlc", "minimlc.runtime")
        )
        for path in python_files(room)
    }
    assert not {path: modules for path, modules in offenders.items() if modules}


def test_frontend_and_dialects_do_not_import_lowering() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.startswith("minimlc.lowering"))
        for path in python_files("dialects", "frontend")
    }
    assert not {path: modules for path, modules in offenders.items() if modules}


def test_importing_every_runtime_module_loads_neither_xdsl_nor_onnx() -> None:
    modules = sorted(
        "minimlc." + ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in python_files("runtime")
    )
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'xdsl', 'onnx', 'onnxruntime'}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd="/")
    assert result.stdout.strip() == "[]"


def test_lowering_has_one_subpackage_per_stage() -> None:
    """One room per stage, `generic` for the passes of every stage (`cse`) and `strategy` for the decisions that
    several stages take alike."""
    packages = {path.parent.name for path in (ROOT / "lowering").glob("*/__init__.py")}
    assert packages == {*STAGES, "generic", "strategy"}
    loose = sorted(path.name for path in (ROOT / "lowering").glob("*.py"))
    assert loose == [
        "__init__.py", "abi.py", "host_cpu.py", "known_cpus.py", "pipeline.py", "plugins.py", "target.py", "workers.py"
    ]  # fmt: skip


def test_no_python_file_outside_dialects_and_tests_is_over_the_limit() -> None:
    folders = (*[room for room in ROOMS if room != "dialects"], "bench", "examples")
    long_files = {
        str(path.relative_to(ROOT)): lines
        for path in python_files(*folders)
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long_files, f"over {MAX_LINES} lines: {long_files}"


def test_every_folder_with_python_files_is_a_room() -> None:
    """Packages are found from the folders (`setup.py`): a folder with Python files but no `__init__.py` would be
    left out of the wheel."""
    folders = {path.parent for path in ROOT.rglob("*.py")} - {ROOT}
    installed = {f for f in folders if f.relative_to(ROOT).parts[0] not in NOT_INSTALLED and ".venv" not in f.parts}
    assert {f.relative_to(ROOT).parts[0] for f in installed} == set(ROOMS)
    assert not sorted(str(f.relative_to(ROOT)) for f in installed if not (f / "__init__.py").exists())


@pytest.mark.slow
def test_the_built_wheel_holds_every_module(tmp_path: Path) -> None:
    """The wheel built from the tracked files holds every tracked file of every room (modules, the C runtime, the
    conformance list) under `minimlc/`."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    source = tmp_path / "src"
    for name in tracked.stdout.splitlines():
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(source)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("minimlc-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "minimlc/" + path.relative_to(source).as_posix()
        for path in source.rglob("*")
        if path.is_file()
        and path.relative_to(source).parts[0] in ROOMS
        or path.relative_to(source).as_posix() == "__init__.py"
    }
    assert expected - names == set()
    assert "minimlc/setup.py" not in names
    assert not {name for name in names if name.startswith(tuple(f"minimlc/{d}/" for d in NOT_INSTALLED))}


def test_tests_import_the_installed_package() -> None:
    """An installed wheel is tested as installed (`.ci/run`); only an editable install (`pip install -e`) imports
    the checkout."""
    from importlib.metadata import distributions

    # The installed one has a direct_url.json; an in-tree build's minimlc.egg-info beside the sources has none.
    (installed,) = [json.loads(url) for d in distributions(name="minimlc") if (url := d.read_text("direct_url.json"))]
    editable = installed.get("dir_info", {}).get("editable", False)
    assert (Path(minimlc.__file__).resolve() == ROOT / "__init__.py") == editable


BELOW_EVERY_STAGE = ("generic", "strategy", "target", "abi", "workers")
"""Shared parts of `lowering/` that every stage may import: passes and analyses for any IR (`generic`), cross-stage
decisions (`strategy`), contracts (`target`, `abi`) and the fork pool (`workers`). They import no stage. The pass
runner (`pipeline`, `plugins`) may: a stage that imports it must not reach a later stage through it."""


def lowering_module_file(module: str) -> Path | None:
    """The source of module `minimlc.lowering.<...>` (a module or a package's `__init__.py`); None if no module."""
    base = ROOT.joinpath(*module.split(".")[1:])
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


def lowering_imports(path: Path) -> set[str]:
    """The modules under `minimlc.lowering` that `path` imports, lazy imports included; `from minimlc.lowering.x
    import y` imports `x.y` where `y` is a module. `minimlc.lowering` itself (the lazy pass registry) is left out."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update({node.module, *(f"{node.module}.{alias.name}" for alias in node.names)})
    return {name for name in names if name.startswith("minimlc.lowering.") and lowering_module_file(name)}


def stages_reached(path: Path, seen: frozenset[Path] = frozenset()) -> set[str]:
    """The stages `path` imports, directly or through the shared modules it imports."""
    stages: set[str] = set()
    for module in lowering_imports(path):
        part = module.split(".")[2]
        shared = lowering_module_file(module)
        if part in STAGES:
            stages.add(part)
        elif shared is not None and shared not in seen:
            stages |= stages_reached(shared, seen | {path})
    return stages


def test_no_stage_imports_a_later_stage() -> None:
    """What several stages decide alike lives in `lowering/strategy/`, what they analyse alike at the earliest stage
    that needs it: no module of a stage imports a later stage, directly or through a shared module (`pipeline.py`)."""
    offenders = {}
    for path in python_files(*(f"lowering/{stage}" for stage in STAGES)):
        stage = path.relative_to(ROOT / "lowering").parts[0]
        later = sorted(s for s in stages_reached(path) if STAGES.index(s) > STAGES.index(stage))
        if later:
            offenders[str(path.relative_to(ROOT))] = later
    assert not offenders


def test_what_every_stage_may_import_imports_no_stage() -> None:
    """`generic`, `strategy`, `target`, `abi` and `workers` reach no stage, directly or through each other."""
    lowering = ROOT / "lowering"
    shared = [p for name in BELOW_EVERY_STAGE for p in [lowering / f"{name}.py", *(lowering / name).rglob("*.py")]]
    offenders = {
        str(p.relative_to(ROOT)): sorted(stages) for p in shared if p.is_file() and (stages := stages_reached(p))
    }
    assert not offenders
