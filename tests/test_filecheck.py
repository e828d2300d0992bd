"""Runs the lit + filecheck IR tests under tests/filecheck/ as part of pytest, so one command runs everything.

Their `mini-opt` runs are children of a fork server (`tests/lit_fork_server.py`) that has loaded `mini-opt` once: the
real `main`, with each RUN line's arguments, folder, environment and streams, without paying start-up 400 times.
`lit -q tests/filecheck` run by hand uses the console script."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).parent
FILECHECK_DIR = TESTS_DIR / "filecheck"


@contextlib.contextmanager
def mini_opt_server(folder: Path) -> Iterator[Path]:
    """A fork server on `folder`/socket, and a `mini-opt` client of it in `folder`/bin, the folder yielded."""
    socket_path = folder / "socket"
    server = subprocess.Popen(
        [sys.executable, str(TESTS_DIR / "lit_fork_server.py"), str(socket_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == "ready\n", "the mini-opt fork server did not start"
        (folder / "bin").mkdir()
        client = folder / "bin" / "mini-opt"
        client.write_text(
            f"#!{sys.executable} -S\nimport sys\nsys.path.insert(0, {str(TESTS_DIR)!r})\n"
            f"from lit_fork_server import client\nsys.exit(client({str(socket_path)!r}))\n"
        )
        client.chmod(0o755)
        yield folder / "bin"
    finally:
        server.terminate()  # it waits for its children, then ends
        server.wait(60)
        server.stdout.close()  # type: ignore[union-attr]


@pytest.mark.slow
def test_lit_filecheck_suite() -> None:
    # The venv's scripts (mini-opt, filecheck, lit) may not be on PATH when pytest runs as .venv/bin/python.
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}
    for tool in ("mini-opt", "filecheck", "lit"):
        assert shutil.which(tool, path=env["PATH"]), (
            f"{tool} not found: install the package with `pip install -e .[test]`"
        )
    assert sorted(FILECHECK_DIR.rglob("*.mlir")), "no filecheck tests found"
    with tempfile.TemporaryDirectory(prefix="minimlc-lit-") as folder, mini_opt_server(Path(folder)) as client_dir:
        result = subprocess.run(
            [shutil.which("lit", path=env["PATH"]) or "lit", "-q", str(FILECHECK_DIR)],
            capture_output=True,
            text=True,
            check=False,
            env={**env, "PATH": str(client_dir) + os.pathsep + env["PATH"]},
        )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
