"""docs/tutorial.md, docs/te_and_schedules.md, docs/byoc.md and docs/dialects.md cannot rot: their code blocks
run here.

Convention (stated in the tutorial): a fenced block right after `<!-- file: NAME -->` is written to NAME in a fresh
folder (blocks for one file are appended in order); other `python` blocks run in order in one namespace, `sh` blocks
in `bash -euo pipefail`, all with that folder as the working directory. Every `mlir` block in docs/dialects.md must
parse and verify with `mini-opt`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minimlc.lowering import plugins

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"(?:<!-- file: (?P<file>\S+) -->\n)?```(?P<language>\w+)\n(?P<code>.*?)```", re.DOTALL)
SCRIPTS = str(Path(sys.executable).parent)


def blocks(page: str) -> list[tuple[str | None, str, str]]:
    """(file or None, language, code) of every fenced block of `page`, in order."""
    text = (DOCS / page).read_text()
    found = [(match["file"], match["language"], match["code"]) for match in BLOCK.finditer(text)]
    assert len(found) == text.count("```") // 2, f"{page}: a fenced block without a language"
    return found


PAGES = ("tutorial.md", "te_and_schedules.md", "byoc.md")
"""The pages whose blocks run here, each in order."""


@pytest.mark.parametrize("page", PAGES)
def test_tutorial_blocks_follow_the_convention(page: str) -> None:
    for file, language, code in blocks(page):
        assert language in ("python", "sh", "mlir") or file is not None, f"block of unknown language {language}"
        assert file is not None or language != "mlir", f"an mlir block needs a file name: {code[:60]}"


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_tutorial_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": SCRIPTS + os.pathsep + os.environ.get("PATH", "")}
    namespace: dict[str, object] = {"__name__": "tutorial"}
    try:
        for number, (file, language, code) in enumerate(blocks(page), start=1):
            if file is not None:
                (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
                with (tmp_path / file).open("a") as stream:
                    stream.write(code)
            elif language == "python":
                exec(compile(code, f"docs/{page} block {number}", "exec"), namespace)
            else:
                result = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True, env=env, check=False
                )
                assert result.returncode == 0, f"block {number} failed:\n{code}\n{result.stdout}\n{result.stderr}"
    finally:
        plugins.unload_plugins()


@pytest.mark.parametrize("number", range(len(blocks("dialects.md"))))
def test_dialect_examples_parse(number: int) -> None:
    _, language, code = blocks("dialects.md")[number]
    assert language == "mlir"
    env = {**os.environ, "PATH": SCRIPTS + os.pathsep + os.environ.get("PATH", "")}
    result = subprocess.run(["mini-opt"], input=code, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, f"{code}\n{result.stderr}"
