"""`minimlc compile`: extra passes at every emit level, `-o FILE.mlc` against `--emit`, `--stats` without `-o`, output
paths checked first, object code for a named CPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_run import ROOT, assert_one_line_error, minimlc

SPLIT = "loop:loop-split{kernel=relu_2 loop=i1 factor=4}"


@pytest.mark.parametrize(
    ("emit", "passes", "marker", "gone"),
    [
        ("loop", SPLIT, r'loop\.for "i1_o" %i1_o = 0 to 128 step 4', None),
        ("scf", "scf:convert-scf-to-cf", r"cf\.cond_br", "scf.for"),
    ],
)
def test_extra_passes_after_the_emit_level_stage_run_last(
    mlp_path: Path, emit: str, passes: str, marker: str, gone: str | None
) -> None:
    """`--emit loop` runs the passes after `loop` (a split loop's names in the IR); `--emit scf` those after `scf`."""
    result = minimlc("compile", str(mlp_path), "--emit", emit, "-O1", "--passes-after", passes)
    assert result.returncode == 0, result.stderr
    assert re.search(marker, result.stdout)
    assert gone is None or gone not in result.stdout


def test_extra_passes_after_the_emit_level_are_refused(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "te", "-O1", "--passes-after", SPLIT)
    assert_one_line_error(result, "--passes-after loop:... runs after stage 'loop', past the end of --emit te")


def test_emit_with_a_saved_model_output_is_refused(mlp_path: Path, tmp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "graph", "-o", str(tmp_path / "z.mlc"))
    assert_one_line_error(result, f"--emit graph cannot be saved as z.mlc (a .mlc file is a saved model): use -o "
                                  f"{tmp_path / 'z.mlir'}")
    assert not (tmp_path / "z.mlc").exists()


def test_stats_without_output_prints_the_tables_alone(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--stats")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "compile time of" in result.stderr and "statistics of" in result.stderr
    assert "define " not in result.stderr
    readme = (ROOT / "README.md").read_text()
    assert "`minimlc compile MODEL --stats` prints the same table" in readme


def test_output_under_a_file_is_refused_before_compiling(mlp_path: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "f.onnx"
    blocker.write_bytes(b"a file")
    for name in ("x.mlc", "x.ll"):
        result = minimlc("compile", str(mlp_path), "-o", str(blocker / name))
        assert_one_line_error(result, f"-o {blocker / name}: '{blocker}' is a file, not a directory")
        assert "compiling" not in result.stderr
    result = minimlc("compile", str(mlp_path), "-o", str(tmp_path))
    assert_one_line_error(result, f"-o {tmp_path}: is a directory, not a file")


def test_emit_object_code_for_a_named_cpu(mlp_path: Path, tmp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "obj", "--target", "sapphirerapids", "-o",
                     str(tmp_path / "m.o"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.o").read_bytes()[:4] == b"\x7fELF"


def test_a_cpu_this_llvm_does_not_know_is_one_error(mlp_path: Path, monkeypatch, capsys) -> None:
    """A CPU minimlc knows but an older LLVM does not (here: a made-up one) is refused before LLVM aborts."""
    from minimlc.lowering import known_cpus, target
    from minimlc.tools import minimlc_cli

    monkeypatch.setitem(known_cpus.CPUS, "made-up-cpu", known_cpus.CPUS["x86-64-v3"])
    target.target_from_name.cache_clear()
    with pytest.raises(SystemExit) as exit_:
        minimlc_cli.main(["compile", str(mlp_path), "--emit", "obj", "--target", "made-up-cpu", "-o", "m.o"])
    target.target_from_name.cache_clear()
    assert exit_.value.code == 2
    assert "does not know CPU 'made-up-cpu'" in capsys.readouterr().err


def test_saved_model_output_makes_its_folders(mlp_path: Path, tmp_path: Path) -> None:
    """As for every other `-o`: missing folders of the path are made."""
    result = minimlc("compile", str(mlp_path), "-o", str(tmp_path / "new" / "sub" / "m.mlc"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "sub" / "m.mlc").read_bytes()[:7] == b"MINIMLC"
