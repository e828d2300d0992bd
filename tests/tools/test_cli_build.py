"""`minimlc build`: a named CPU, output paths checked before any work, nothing half-written, and the README's
description of what it builds (dtypes, header signatures)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import onnx
from cli_run import ROOT, SCRIPTS, assert_one_line_error, minimlc
from model_builder import token_embedding_model

README = (ROOT / "README.md").read_text()


def test_build_for_a_named_cpu(mlp_path: Path, tmp_path: Path) -> None:
    result = minimlc("build", str(mlp_path), "-o", str(tmp_path / "libmlp.so"), "--target", "x86-64-v3")
    assert result.returncode == 0, result.stderr
    assert "for CPU x86-64-v3" in (tmp_path / "libmlp.h").read_text()
    assert (tmp_path / "libmlp.so").read_bytes()[:4] == b"\x7fELF"


def test_outputs_are_checked_before_building(mlp_path: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "f.onnx"
    blocker.write_bytes(b"a file")
    result = minimlc("build", str(mlp_path), "-o", str(blocker / "lib.so"))
    assert_one_line_error(result, f"-o {blocker / 'lib.so'}: '{blocker}' is a file, not a directory")
    folder = tmp_path / "existing_dir"
    folder.mkdir()
    result = minimlc("build", str(mlp_path), "-o", str(folder))
    assert_one_line_error(result, f"-o {folder}: is a directory, not a file")
    assert "building" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["existing_dir", "f.onnx"]


def test_a_failed_link_leaves_the_earlier_files(mlp_path: Path, tmp_path: Path) -> None:
    """The header and weights are written beside the library only once it is linked."""
    (tmp_path / "lib.h").write_text("earlier header")
    result = subprocess.run(
        [str(SCRIPTS / "minimlc"), "build", str(mlp_path), "-o", str(tmp_path / "lib.so")],
        capture_output=True, text=True, check=False, env={**os.environ, "CC": "false"},
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "failed (1)" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["lib.h"]
    assert (tmp_path / "lib.h").read_text() == "earlier header"


def test_readme_describes_what_build_accepts(mlp_path: Path, tmp_path: Path) -> None:
    """A model of int64 token ids builds; its header has the README's signatures, and the MLP's the README's C block."""
    onnx.save(token_embedding_model(), tmp_path / "ids.onnx")
    result = minimlc("build", str(tmp_path / "ids.onnx"), "-o", str(tmp_path / "libids.so"))
    assert result.returncode == 0, result.stderr
    header = (tmp_path / "libids.h").read_text()
    assert "int model_run(minimlc_model *m, const int64_t *ids, float *embedded);" in header
    assert "int model_run_arrays(minimlc_model *m, const void *const *inputs, void *const *outputs);" in header
    prose = " ".join(README.split())
    assert "`model_run(minimlc_model *m, const int64_t *ids, float *embedded)`" in prose
    assert "`model_run_arrays` takes `const void *const *inputs, void *const *outputs` unless every input and " \
           "output is float32" in prose
    assert "non-float32" not in README

    assert minimlc("build", str(mlp_path), "-o", str(tmp_path / "libmodel.so")).returncode == 0
    mlp_header = (tmp_path / "libmodel.h").read_text()
    (c_block,) = re.findall(r"```c\n(.*?)```", README, flags=re.DOTALL)
    for line in c_block.splitlines():
        assert line.split(";")[0] + ";" in mlp_header, line
