"""The example plugin `examples/plugin` (package `minimlc_toy`): its lit tests, its discovery as an installed
package, toy IR compiled to native code, and its graph rewrite inside a real model's compile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering import plugins
from minimlc.lowering.pipeline import build_pipeline, make_context, run_pipeline

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugin"
SCRIPTS = str(Path(sys.executable).parent)


def tool_env(**extra: str) -> dict[str, str]:
    """The environment for a tool subprocess: the venv's scripts on PATH (pytest may run as .venv/bin/python)."""
    return {**os.environ, "PATH": SCRIPTS + os.pathsep + os.environ.get("PATH", ""), **extra}


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy plugin loaded in this process (by module name, from the checkout), forgotten afterwards."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    plugins.load_plugin("minimlc_toy")
    yield
    plugins.unload_plugins()


@pytest.mark.slow
def test_plugin_lit_suite() -> None:
    result = subprocess.run(
        [shutil.which("lit", path=tool_env()["PATH"]) or "lit", "-q", str(PLUGIN / "tests")],
        capture_output=True,
        text=True,
        check=False,
        env=tool_env(),
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"


def pip_install(target: Path) -> None:
    """`pip install --no-deps --target target ./examples/plugin`: a real build and install of the plugin (its
    entry point included) into a folder the test puts on PYTHONPATH, so the running venv is left as it was."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(PLUGIN)],
        check=True,
        capture_output=True,
        timeout=300,
    )


@pytest.mark.slow
def test_installed_plugin_is_found_by_mini_opt(tmp_path: Path) -> None:
    pip_install(tmp_path)
    env = tool_env(PYTHONPATH=str(tmp_path))
    listing = subprocess.run(["mini-opt", "--list-passes"], capture_output=True, text=True, check=True, env=env)
    assert "[from plugin toy]" in listing.stdout
    for name in ("toy-to-graph", "toy-fuse-matmul-relu", "toy-relu-to-clip", "toy-lower-to-llvm"):
        (line,) = [line for line in listing.stdout.splitlines() if line.startswith(f"  {name} ")]
        assert line.endswith("[from plugin toy]"), line
    toy_ir = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %y = toy.gelu %x : tensor<4xf32>\n  func.return %y : tensor<4xf32>\n}\n"
    lowered = subprocess.run(
        ["mini-opt", "-p", "toy-to-graph"], input=toy_ir, capture_output=True, text=True, check=True, env=env
    )
    assert 'graph.gelu %x {approximate = "tanh"} : tensor<4xf32>' in lowered.stdout
    # Installed and also named on the command line: one plugin, loaded once.
    again = subprocess.run(
        ["mini-opt", "--load-plugin", "minimlc_toy", "--list-passes"], capture_output=True, text=True, env=env
    )
    assert again.returncode == 0, again.stderr


TOY_MODEL = """
func.func @main(%x: tensor<3x16xf32>, %w: tensor<16x8xf32>) -> (tensor<3x16xf32>, tensor<3x8xf32>) {
  %g = toy.gelu %x : tensor<3x16xf32>
  %y = toy.matmul_relu %g, %w : (tensor<3x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
  func.return %g, %y : tensor<3x16xf32>, tensor<3x8xf32>
}
"""


@pytest.mark.parametrize("expand_gelu", [False, True])
@pytest.mark.usefixtures("toy")
def test_toy_ir_runs_natively(expand_gelu: bool) -> None:
    float32 = np.dtype("float32")
    imported = ImportedModel(
        Parser(make_context(), TOY_MODEL).parse_module(),
        {},
        [TensorInfo("x", (3, 16), float32), TensorInfo("w", (16, 8), float32)],
        [TensorInfo("g", (3, 16), float32), TensorInfo("y", (3, 8), float32)],
    )
    lowering = f"toy-to-graph{{expand-gelu={str(expand_gelu).lower()}}}"
    session = InferenceSession.from_imported(imported, extra_passes={"graph": [lowering]})
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 16)) * 2).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    gelu, y = session.run(None, {"x": x, "w": w})
    expected_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu, expected_gelu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, np.maximum(expected_gelu @ w, 0), rtol=1e-4, atol=1e-5)


def relu_model(activation: str = "Relu") -> onnx.ModelProto:
    """x[4,32] -> MatMul -> activation -> MatMul -> activation, weights large enough that values pass 6."""
    rng = np.random.default_rng(1)
    weights = [
        numpy_helper.from_array((rng.standard_normal(shape) * 2).astype(np.float32), name)
        for name, shape in (("w0", (32, 64)), ("w1", (64, 16)))
    ]
    bounds = [numpy_helper.from_array(np.float32(value), name) for name, value in (("lo", 0.0), ("hi", 6.0))]
    extra = ["lo", "hi"] if activation == "Clip" else []
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["h"]),
        helper.make_node(activation, ["h", *extra], ["a"]),
        helper.make_node("MatMul", ["a", "w1"], ["z"]),
        helper.make_node(activation, ["z", *extra], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "relu_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [*weights, *(bounds if extra else [])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.usefixtures("toy")
def test_plugin_pass_in_a_models_compile_matches_onnxruntime() -> None:
    ort = pytest.importorskip("onnxruntime")
    from minimlc.frontend.onnx import import_model

    model = relu_model()
    graph = import_model(model).module
    run_pipeline(graph, build_pipeline(3, extra_passes={"graph": ["toy-relu-to-clip"]}), stop_after="graph")
    ops = [op.name for op in graph.walk()]
    assert "graph.relu" not in ops and ops.count("graph.clip") == 2

    x = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float32)
    for pass_item, oracle_model in (("toy-relu-to-clip", model), ("toy-relu-to-clip{max=6.0}", relu_model("Clip"))):
        session = InferenceSession(model, extra_passes={"graph": [pass_item]})
        oracle = ort.InferenceSession(oracle_model.SerializeToString(), providers=["CPUExecutionProvider"])
        (expected,) = oracle.run(None, {"x": x})
        (actual,) = session.run(None, {"x": x})
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    assert expected.max() == 6.0, "ReLU6 must clip something, or the test shows nothing"
    (plain,) = InferenceSession(model).run(None, {"x": x})
    assert plain.max() > 6.0


def test_cli_passes_after_runs_a_plugin_pass(tmp_path: Path) -> None:
    path = tmp_path / "relu.onnx"
    onnx.save(relu_model(), path)
    env = tool_env(PYTHONPATH=str(PLUGIN))
    common = ["--load-plugin", "minimlc_toy", "--passes-after", "graph:toy-relu-to-clip{max=6.0}"]
    graph = subprocess.run(
        ["minimlc", "compile", str(path), "--emit", "graph", *common], capture_output=True, text=True, env=env
    )
    assert graph.returncode == 0, graph.stderr
    assert graph.stdout.count("graph.clip") == 2 and "graph.relu" not in graph.stdout
    run = subprocess.run(
        ["minimlc", "run", str(path), "--repeat", "1", *common], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert "max 6 " in run.stdout
    bad = subprocess.run(
        ["minimlc", "compile", str(path), "--passes-after", "graph:no-such-pass"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 1
    assert bad.stderr.strip() == "minimlc: error: unknown pass 'no-such-pass' in the passes after stage 'graph'"
