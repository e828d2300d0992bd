"""The `minimlc` console script: run (the README's first command), compile --emit at every level, compile --stats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_run import assert_one_line_error, minimlc
from model_builder import expanded_exp_model, token_embedding_model
from onnx import numpy_helper


def test_run_prints_outputs_and_latency(mlp_path: Path) -> None:
    result = minimlc("run", str(mlp_path), "--repeat", "5")
    assert result.returncode == 0, result.stderr
    assert re.search(r"output logits: shape \[1, 10\] float32 .*argmax \d", result.stdout)
    assert re.search(r"latency: median [\d.]+ ms over 5 runs \(min [\d.]+ ms\)", result.stdout)


def test_run_with_input_file_and_saved_outputs(mlp_path: Path, tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = minimlc("run", str(mlp_path), "--input", f"input={tmp_path / 'x.npy'}", "--save-outputs", str(tmp_path))
    assert result.returncode == 0, result.stderr
    from minimlc import InferenceSession

    expected = InferenceSession(str(mlp_path)).run(None, {"input": x})[0]
    np.testing.assert_array_equal(np.load(tmp_path / "logits.npy"), expected)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "input"], "--input expects NAME=FILE.npy, got 'input'"),
        (["--input", "input=/nonexistent.npy"], "cannot read input 'input' from '/nonexistent.npy'"),
    ],
)
def test_run_argument_errors(mlp_path: Path, args: list[str], message: str) -> None:
    result = minimlc("run", str(mlp_path), *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_run_wrong_input_shape(mlp_path: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 10), np.float32))
    result = minimlc("run", str(mlp_path), "--input", f"input={tmp_path / 'x.npy'}")
    assert result.returncode == 1
    assert "minimlc: error:" in result.stderr and "Traceback" not in result.stderr


def test_run_reports_memory_it_cannot_allocate(tmp_path: Path) -> None:
    """Issue #54: a model whose intermediate (exp of a [1, 1] input expanded to [2**25, 2**24], read by two
    reductions: 2**51 bytes) cannot be allocated exits with one error line naming the bytes (it was a segfault)."""
    onnx.save(expanded_exp_model(), tmp_path / "big.onnx")
    result = minimlc("run", str(tmp_path / "big.onnx"))
    assert_one_line_error(result, "out of memory: the model's native code could not allocate")
    asked = re.search(r"could not allocate (\d+) bytes", result.stderr)
    assert asked and int(asked.group(1)) >= 2**51, result.stderr


def test_run_int64_token_ids(tmp_path: Path) -> None:
    """Integer inputs are read from .npy files with their dtype; a file of the wrong dtype is refused by name."""
    onnx.save(token_embedding_model(), tmp_path / "ids.onnx")
    np.save(tmp_path / "ids.npy", np.array([[7, 0, 2]], np.int64))
    result = minimlc(
        "run", str(tmp_path / "ids.onnx"), "--input", f"ids={tmp_path / 'ids.npy'}", "--save-outputs", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    table = np.arange(40, dtype=np.float32).reshape(10, 4)  # the model's
    np.testing.assert_array_equal(np.load(tmp_path / "embedded.npy"), table[[[7, 0, 2]]])
    np.save(tmp_path / "ids32.npy", np.array([[7, 0, 2]], np.int32))
    result = minimlc("run", str(tmp_path / "ids.onnx"), "--input", f"ids={tmp_path / 'ids32.npy'}")
    assert result.returncode == 1
    assert "input 'ids': expected dtype int64 (tensor(int64)), got int32" in result.stderr


def test_run_malformed_model(tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"not an onnx model")
    result = minimlc("run", str(path))
    assert result.returncode == 1
    assert "bad.onnx" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("level", "marker"),
    [
        ("graph", r"graph\.gemm"),
        ("te", r"te\.compute"),
        ("loop", r"loop\.for"),
        ("scf", r"scf\.for"),
        ("llvm-dialect", r"llvm\.func"),
        ("llvm-ir", r'define void @"?main_packed"?\(ptr'),
    ],
)
def test_compile_emits_each_level(mlp_path: Path, tmp_path: Path, level: str, marker: str) -> None:
    out = tmp_path / f"mlp.{level}.{'ll' if level == 'llvm-ir' else 'mlir'}"
    result = minimlc("compile", str(mlp_path), "--emit", level, "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert re.search(marker, text)
    if level != "llvm-ir":  # plain IR that mini-opt parses back, not a Python repr of the module
        assert text.startswith("builtin.module {"), text[:80]
        reparsed = subprocess.run(
            [sys.executable, "-m", "minimlc.tools.mini_opt", str(out)], capture_output=True, text=True, check=False
        )
        assert reparsed.returncode == 0, reparsed.stderr


@pytest.mark.parametrize("flag", ["-O0", "--opt-level=2"])
def test_run_at_an_opt_level(mlp_path: Path, flag: str) -> None:
    result = minimlc("run", str(mlp_path), flag, "--repeat", "1")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("flag", ["-O4", "-Ofast", "--opt-level=-1"])
def test_bad_opt_level_names_the_allowed_values(mlp_path: Path, flag: str) -> None:
    result = minimlc("compile", str(mlp_path), flag)
    assert result.returncode == 2
    assert "argument -O/--opt-level: expects one of 0, 1, 2, 3, got" in result.stderr


def test_emit_schedule_needs_a_scheduling_level(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "schedule", "-O1")
    assert result.returncode == 1
    assert "--emit schedule needs --opt-level 2 or 3 (O1 does not run default-schedule)" in result.stderr


def test_emit_graph_shows_the_optimised_graph(tmp_path: Path) -> None:
    from onnx import TensorProto, helper, numpy_helper

    params = {name: np.full(shape, 0.5, np.float32) for name, shape in [("w", (2, 1, 1, 1)), *[(p, (2,)) for p in "gbmv"]]}
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1]),
            helper.make_node("BatchNormalization", ["y", "g", "b", "m", "v"], ["z"]),
        ],
        "conv_bn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, 2, 2])],
        [numpy_helper.from_array(value, name) for name, value in params.items()],
    )
    path = tmp_path / "conv_bn.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    unoptimised = minimlc("compile", str(path), "--emit", "graph", "-O0")
    optimised = minimlc("compile", str(path), "--emit", "graph", "-O3")
    assert "graph.batch_norm" in unoptimised.stdout
    assert "graph.batch_norm" not in optimised.stdout and "graph.conv" in optimised.stdout


def test_compile_stats_prints_timings_and_model_statistics(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "scf", "--stats", "-o", os.devnull)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^  loop-plan-memory +\d+\.\d{3} s$", result.stderr, re.MULTILINE)
    table = result.stderr[result.stderr.index("statistics of") :]
    values = {
        key: int(value.replace(",", ""))
        for key, value in re.findall(r"^  (\w+) +([\d,]+)(?:  \(.*\))?$", table, re.MULTILINE)
    }
    assert set(values) == {"kernels", "kernel_functions", "arena_bytes", "intermediate_bytes", "weight_bytes"}
    assert re.search(r"^  compile_seconds +\d+\.\d{3}$", table, re.MULTILINE)
    assert 1 <= values["kernel_functions"] <= values["kernels"]
    assert 0 < values["arena_bytes"] <= values["intermediate_bytes"]
    weights = onnx.load(mlp_path).graph.initializer
    assert values["weight_bytes"] == sum(numpy_helper.to_array(weight).nbytes for weight in weights)


def test_compile_stats_before_memory_planning_prints_timings_only(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "loop", "--stats", "-o", os.devnull)
    assert result.returncode == 0, result.stderr
    assert "compile time of" in result.stderr
    assert "statistics of" not in result.stderr


def test_compile_emit_space_prints_rules_and_knobs(mlp_path: Path) -> None:
    table = minimlc("compile", str(mlp_path), "--emit", "space")
    assert table.returncode == 0, table.stderr
    assert re.search(r"^\w+  rule gemm  calls 1$", table.stdout, re.MULTILINE)
    assert re.search(r"^  nr +default \d+ +of \d+, \d+", table.stdout, re.MULTILINE)
    listed = minimlc("compile", str(mlp_path), "--emit", "space", "--json")
    assert listed.returncode == 0, listed.stderr
    spaces = json.loads(listed.stdout)
    gemm = next(space for space in spaces if space["rule"] == "gemm")
    assert set(gemm) == {"kernel", "rule", "calls", "knobs"}
    knobs = {knob["name"]: knob for knob in gemm["knobs"]}
    assert knobs["parallel"] == {"name": "parallel", "values": [True, False], "default": True}
    assert knobs["mr"]["default"] in knobs["mr"]["values"]


def test_compile_to_mlc_saves_a_loadable_model(mlp_path: Path, tmp_path: Path) -> None:
    from minimlc import InferenceSession
    from minimlc.runtime import load

    result = minimlc("compile", str(mlp_path), "-o", str(tmp_path / "mlp.mlc"), "--no-cache")
    assert result.returncode == 0, result.stderr
    x = {"input": np.ones((1, 784), np.float32)}
    np.testing.assert_array_equal(load(tmp_path / "mlp.mlc").run(None, x)[0], InferenceSession(mlp_path).run(None, x)[0])


def test_cache_info_and_clear(tmp_path: Path) -> None:
    env = {**os.environ, "MINIMLC_CACHE_DIR": str(tmp_path)}
    info = subprocess.run([sys.executable, "-m", "minimlc.tools.minimlc_cli", "cache", "info"], env=env, text=True,
                          capture_output=True, check=True)
    assert f"cache: {tmp_path} (off (MINIMLC_CACHE=0))" in info.stdout and "entries: 0, 0 bytes" in info.stdout
    cleared = subprocess.run([sys.executable, "-m", "minimlc.tools.minimlc_cli", "cache", "clear"], env=env, text=True,
                             capture_output=True, check=True)
    assert cleared.stdout.strip() == f"removed 0 entries and 0 kernel entries from {tmp_path}"


@pytest.fixture(scope="module")
def symbolic_mlp_path(mlp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = onnx.load(mlp_path)
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path_factory.mktemp("models") / "mlp_n.onnx"
    onnx.save(model, path)
    return path


def test_input_shape_fixes_a_symbolic_batch(symbolic_mlp_path: Path, tmp_path: Path, capsys) -> None:
    from minimlc.runtime import load
    from minimlc.tools import minimlc_cli

    assert minimlc_cli.main(["run", str(symbolic_mlp_path), "--input-shape", "input=3,784", "--repeat", "1"]) == 0
    assert "output logits: shape [3, 10]" in capsys.readouterr().out
    saved = tmp_path / "mlp3.mlc"
    assert minimlc_cli.main(["compile", str(symbolic_mlp_path), "--input-shape", "input=3,784", "-o", str(saved)]) == 0
    assert load(saved).get_inputs()[0].shape == (3, 784)
    assert minimlc_cli.main(["compile", str(symbolic_mlp_path), "--emit", "graph", "--input-shape", "input=2,784"]) == 0
    assert "tensor<2x784xf32>" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("command", "shape", "message"),
    [
        ("run", "input=4,784", "input 'input' is given shape [4, 784], but the model declares [1, 784]"),
        ("compile", "input=4,784", "input 'input' is given shape [4, 784], but the model declares [1, 784]"),
        ("compare", "input=4,784", "input 'input' is given shape [4, 784], but the model declares [1, 784]"),
        ("run", "input=1,78x", "argument --input-shape: expects NAME=D,D,... with non-negative sizes, got 'input=1,78x'"),
        ("run", "1,784", "argument --input-shape: expects NAME=D,D,... with non-negative sizes, got '1,784'"),
    ],
)
def test_input_shape_cannot_change_a_static_dimension(mlp_path: Path, command: str, shape: str, message: str) -> None:
    result = minimlc(command, str(mlp_path), "--input-shape", shape)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


def test_compare_needs_the_shape_of_a_symbolic_input(symbolic_mlp_path: Path, capsys) -> None:
    from minimlc.tools import minimlc_cli

    assert minimlc_cli.main(["compare", str(symbolic_mlp_path)]) == 1
    assert capsys.readouterr().err.strip() == (
        "minimlc: error: input 'input' has symbolic dimension(s) N: pass --input-shape NAME=D,D,... "
        "or --input NAME=FILE.npy"
    )
    assert minimlc_cli.main(["compare", str(symbolic_mlp_path), "--input-shape", "input=2,784"]) == 0
    assert re.search(r"^logits\s+Gemm\s+\[2, 10\]", capsys.readouterr().out, flags=re.MULTILINE)
