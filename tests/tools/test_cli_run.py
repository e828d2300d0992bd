"""`minimlc run`: outputs saved inside their folder whatever their names, output paths and options checked before any
work, empty and huge inputs, saved models, and the CLI's own error messages."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_run import assert_one_line_error, minimlc
from onnx import TensorProto, helper


def save_model(path: Path, outputs: list[str], shape: list[int | str], op: str = "Identity") -> Path:
    """A model of one input `x` of `shape` and one `op` node (of `x`) per output name."""
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], [name]) for name in outputs],
        "named_outputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name in outputs],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def test_saved_outputs_stay_inside_the_folder(tmp_path: Path) -> None:
    """`/abs`, `../up` and `a/b` are legal ONNX names: each is saved in the folder, its slashes made `_`."""
    model = save_model(tmp_path / "names.onnx", ["/abs", "../up", "a/b"], [2, 3], op="Relu")
    np.save(tmp_path / "x.npy", np.arange(-3, 3, dtype=np.float32).reshape(2, 3))
    folder = tmp_path / "deep" / "outs"
    result = minimlc("run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--save-outputs", str(folder))
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in folder.iterdir()) == [".._up.npy", "_abs.npy", "a_b.npy"]
    expected = np.maximum(np.arange(-3, 3, dtype=np.float32).reshape(2, 3), 0)
    for name in ("_abs", ".._up", "a_b"):
        np.testing.assert_array_equal(np.load(folder / f"{name}.npy"), expected)
    assert sorted(path.name for path in (tmp_path / "deep").iterdir()) == ["outs"]
    assert not Path("/abs.npy").exists()


def test_outputs_sharing_a_file_are_refused_before_running(tmp_path: Path) -> None:
    model = save_model(tmp_path / "clash.onnx", ["a/b", "a_b"], [2], op="Relu")
    result = minimlc("run", str(model), "--save-outputs", str(tmp_path / "outs"))
    assert_one_line_error(result, "--save-outputs: outputs 'a/b' and 'a_b' would both be saved as")
    assert "output a/b:" not in result.stdout
    assert not (tmp_path / "outs").exists()


@pytest.mark.parametrize("command", ["run", "compile", "build"])
def test_missing_tuning_database_is_an_error(mlp_path: Path, tmp_path: Path, command: str) -> None:
    extra = ["-o", str(tmp_path / "lib.so")] if command == "build" else []
    result = minimlc(command, str(mlp_path), "--tuning-db", str(tmp_path / "missing.jsonl"), *extra)
    assert_one_line_error(result, f"--tuning-db {tmp_path / 'missing.jsonl'}: no such file")
    assert "compiling" not in result.stderr
    assert "building" not in result.stderr


@pytest.mark.parametrize("shape_args", [[], ["--input-shape", "x=0,4"]])
def test_run_with_an_empty_input(tmp_path: Path, shape_args: list[str]) -> None:
    model = save_model(tmp_path / "empty.onnx", ["y"], ["N", 4] if shape_args else [0, 4], op="Relu")
    result = minimlc("run", str(model), "--repeat", "1", *shape_args)
    assert result.returncode == 0, result.stderr
    assert "output y: shape [0, 4] float32  (empty)" in result.stdout


def test_random_input_is_drawn_in_its_dtype() -> None:
    from minimlc.tools.cli_run import random_input

    drawn = random_input(np.random.default_rng(3), "x", (3, 1 << 19), np.dtype(np.float32))
    assert drawn.dtype == np.float32
    np.testing.assert_array_equal(drawn, np.random.default_rng(3).standard_normal((3, 1 << 19)).astype(np.float32))


def test_an_input_too_big_for_memory_is_an_error(tmp_path: Path) -> None:
    model = save_model(tmp_path / "big.onnx", ["y"], ["A", "B", "C"], op="Relu")
    result = minimlc("run", str(model), "--input-shape", "x=1000000,1000000,1000")
    assert_one_line_error(result, "cannot allocate random input 'x' [1000000, 1000000, 1000] float32")


@pytest.mark.parametrize("command", ["run", "compile"])
def test_a_failing_extra_pass_is_one_line(mlp_path: Path, command: str) -> None:
    bad = "loop:loop-split{kernel=nope loop=i factor=4}"
    result = minimlc(command, str(mlp_path), "-O1", "--passes-after", bad)
    assert_one_line_error(result, "loop-split: no kernel named 'nope'")


def test_outputs_under_a_file_are_refused_before_compiling(mlp_path: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "f.onnx"
    blocker.write_bytes(b"a file")
    result = minimlc("run", str(mlp_path), "--save-outputs", str(blocker))
    assert_one_line_error(result, f"--save-outputs {blocker}: is a file, not a directory")
    result = minimlc("run", str(mlp_path), "--profile", "--profile-json", str(blocker / "p.json"))
    assert_one_line_error(result, f"--profile-json {blocker / 'p.json'}: '{blocker}' is a file, not a directory")
    assert "compiling" not in result.stderr
    assert blocker.read_bytes() == b"a file"


def test_run_a_saved_model(mlp_path: Path, tmp_path: Path) -> None:
    saved = tmp_path / "mlp.mlc"
    assert minimlc("compile", str(mlp_path), "-o", str(saved)).returncode == 0
    np.save(tmp_path / "x.npy", np.ones((1, 784), np.float32))
    result = minimlc("run", str(saved), "--input", f"input={tmp_path / 'x.npy'}", "--save-outputs", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "compiling" not in result.stderr
    assert re.search(r"output logits: shape \[1, 10\] float32 ", result.stdout)
    from minimlc import InferenceSession

    expected = InferenceSession(mlp_path).run(None, {"input": np.ones((1, 784), np.float32)})[0]
    np.testing.assert_array_equal(np.load(tmp_path / "logits.npy"), expected)
    refused = minimlc("run", str(saved), "-O2", "--tuning-db", "t.jsonl")
    assert_one_line_error(refused, f"{saved} is a saved model, already compiled: -O/--opt-level, --tuning-db cannot")


def test_a_directory_is_not_a_model(tmp_path: Path) -> None:
    for command in ("run", "compile", "compare"):
        assert_one_line_error(minimlc(command, str(tmp_path)), f"'{tmp_path}' is a directory, not a model file")


def test_symbolic_dimension_error_names_the_cli_flag(tmp_path: Path) -> None:
    model = save_model(tmp_path / "sym.onnx", ["y"], ["N", 4], op="Relu")
    result = minimlc("run", str(model))
    assert_one_line_error(result, "input 'x' has a symbolic dimension 'N' at axis 0; pass --input-shape x=D,D,...")
    assert "input_shapes=" not in result.stderr


def test_version() -> None:
    result = minimlc("--version")
    assert result.returncode == 0, result.stderr
    from importlib.metadata import version

    assert result.stdout.startswith(f"minimlc {version('minimlc')} (xDSL {version('xdsl')}, llvmlite ")
    assert re.search(r"with LLVM \d+\.\d+\.\d+, onnx [\d.]+, numpy [\d.]+\)$", result.stdout.strip())


def test_the_random_generator_is_made_before_compiling(
    mlp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #54: made after the compile, the generator's lazy `import numpy.random` could lose a Ctrl-C pressed
    right after compiling. Here the compile is interrupted: the generator exists already and minimlc exits 130."""
    from minimlc.tools import cli_run
    from minimlc.tools.minimlc_cli import main

    events = []
    make_generator = np.random.default_rng

    def recorded_generator(seed: int) -> np.random.Generator:
        events.append("generator")
        return make_generator(seed)

    def interrupted_compile(*_: object) -> None:
        events.append("compile")
        raise KeyboardInterrupt

    monkeypatch.setattr(np.random, "default_rng", recorded_generator)
    monkeypatch.setattr(cli_run, "_session", interrupted_compile)
    assert main(["run", str(mlp_path)]) == 130
    assert events == ["generator", "compile"]
    assert capsys.readouterr().err == "\nminimlc: interrupted\n"


def test_input_shape_shapes_the_run_of_a_model_compiled_once(tmp_path: Path) -> None:
    """The model keeps its symbolic dimensions (one compile for every shape, saved so); `--input-shape` is the run's
    shape, for the compiled and for the saved model."""
    model = save_model(tmp_path / "sym.onnx", ["y"], ["N", 4], op="Relu")
    saved = tmp_path / "sym.mlc"
    assert minimlc("compile", str(model), "-o", str(saved)).returncode == 0
    for path, shape in ((model, "3,4"), (saved, "5,4"), (saved, "0,4")):
        result = minimlc("run", str(path), "--input-shape", f"x={shape}", "--repeat", "1")
        assert result.returncode == 0, result.stderr
        assert f"output y: shape [{shape.replace(',', ', ')}] float32" in result.stdout
    from minimlc.runtime import load

    assert load(saved).get_inputs()[0].shape == ("N", 4)
    for shape, message in (
        ("x=3,5", "input 'x' is given shape [3, 5], but the model declares [N, 4]: only symbolic or unknown"),
        ("y=3,4", "--input-shape names unknown input 'y'; the model's inputs are ['x']"),
    ):
        assert_one_line_error(minimlc("run", str(saved), "--input-shape", shape), message)
