"""`precision="bf16"` on its surfaces (issue #50): the session's and the CLI's refusals on a target without a
bfloat16 dot product (znver3, pinned; this host's too where it lacks one), calibration refused with it, the compile
cache's key telling a bf16 build from a float32 one, `--precision bf16` on `minimlc compile` (the te form for
znver4), `minimlc compare` and `minimlc tune` (the bf16 build's kernels tuned, on a host with the dot product), and
`graph-bf16-products` refused through mini-opt in one line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_run import SCRIPTS, assert_one_line_error, minimlc
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.cache import cache_key
from minimlc.driver.calibration import bf16_passes
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline
from minimlc.lowering.strategy.tuning_db import TuningDatabase
from minimlc.lowering.target import target_from_name
from minimlc.tuner.tuner import tune

REFUSAL = "has no bfloat16 dot product (x86: avx512bf16; AArch64: bf16)"
SVE = "aarch64-linux-gnu -mcpu=neoverse-v1"


def matmul_model() -> onnx.ModelProto:
    """x [4, 24] times a weight [24, 16]."""
    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((24, 16)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "matmul.onnx"
    onnx.save(matmul_model(), path)
    return path


def test_session_refuses_bf16_calibration_and_unknown_precisions() -> None:
    with pytest.raises(ValueError, match=r"^calibration is only used with precision='int8'$"):
        InferenceSession(matmul_model(), target="znver4", precision="bf16", calibration=[{}])
    with pytest.raises(ValueError, match=r"^precision must be one of 'fp32', 'bf16', 'int8', got 'fp16'$"):
        InferenceSession(matmul_model(), precision="fp16")


def test_bf16_passes_follow_the_given_ones_after_the_graph_and_te_stages() -> None:
    extra = bf16_passes(SVE, {"graph": "graph-simplify", "te": "te-clamped-casts", "loop": ["cse"]})
    assert extra == {
        "graph": ["graph-simplify", "graph-bf16-products"],
        "te": ["te-clamped-casts", "te-bf16-word-views", "te-bf16-activations"],
        "loop": ["cse"],
    }
    with pytest.raises(ValueError, match=re.escape(f"precision='bf16': target 'znver3' {REFUSAL}")):
        bf16_passes("znver3", None)


def test_cache_key_tells_a_bf16_build_from_a_float32_one() -> None:
    """The session compiles a bf16 build with the opt level's pipeline plus `graph-bf16-products`, and a float32 one
    with the opt level's own: their keys differ, and each is stable."""
    imported = import_model(matmul_model())
    bf16 = build_pipeline(3, extra_passes=bf16_passes(SVE, None))
    assert cache_key(imported, bf16, 3, SVE) == cache_key(imported, bf16, 3, SVE)
    assert cache_key(imported, bf16, 3, SVE) != cache_key(imported, 3, 3, SVE)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_compile_precision_chooses_the_te_form(precision: str, model_file: Path) -> None:
    result = minimlc("compile", str(model_file), "--precision", precision, "--target", "znver4", "--emit", "te")
    assert result.returncode == 0, result.stderr
    assert ('te.compute "matmul_bf16_rhs"' in result.stdout) == (precision == "bf16")
    assert ("llvmx.dot_bf16" in result.stdout) == (precision == "bf16")


@pytest.mark.parametrize("command", ["compile", "build", "run", "compare", "tune"])
def test_cli_refuses_bf16_on_znver3_in_one_line(command: str, model_file: Path, tmp_path: Path) -> None:
    database = tmp_path / "db.jsonl"
    output = {"build": ["-o", str(tmp_path / "libm.so")], "tune": ["--trials", "1", "--db", str(database)]}
    result = minimlc(command, str(model_file), "--precision", "bf16", "--target", "znver3", *output.get(command, []))
    assert_one_line_error(result, f"precision='bf16': target 'znver3' {REFUSAL}")
    assert not database.exists()


def test_tune_refuses_a_precision_it_does_not_tune(model_file: Path, tmp_path: Path) -> None:
    message = "precision must be 'fp32' or 'bf16', got 'int8' (for int8, tune the model `minimlc quantize` wrote)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        tune(str(model_file), tmp_path / "db.jsonl", trials=1, precision="int8")
    assert not (tmp_path / "db.jsonl").exists()


@pytest.mark.skipif(not target_from_name("host").dot_bf16_bits, reason="this host has no bfloat16 dot product")
def test_tune_bf16_tunes_the_bf16_builds_kernels(model_file: Path, tmp_path: Path) -> None:
    """`tune --precision bf16` measures the kernels of the bfloat16 build (its MatMul's, the bf16 GEMM rule's, sums
    `llvmx.dot_bf16` words of a load-time B), whose records `run --precision bf16 --tuning-db` then applies. The
    candidates build: the standalone module of a task takes its load-time words as weights, as the model does."""
    database = tmp_path / "db.jsonl"
    result = minimlc("tune", str(model_file), "--precision", "bf16", "--trials", "2", "--db", str(database))
    assert result.returncode == 0, result.stderr
    records = TuningDatabase(database).records
    gemms = [record for record in records if record.rule == "bf16_gemm"]
    assert gemms
    assert all(record.error is None and record.latency is not None for record in gemms)
    run = minimlc("run", str(model_file), "--precision", "bf16", "--tuning-db", str(database))
    assert run.returncode == 0, run.stderr


def test_compare_bf16_refuses_calibration_inputs(model_file: Path) -> None:
    result = minimlc("compare", str(model_file), "--precision", "bf16", "--calibrate", str(model_file))
    assert_one_line_error(result, "--calibrate goes with --precision int8")


def test_mini_opt_refuses_graph_bf16_products_on_znver3_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "matmul.mlir"
    source.write_text(
        'func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {\n  %w = graph.weight "w" : tensor<8x16xf32>\n'
        "  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>\n"
        "  func.return %y : tensor<4x16xf32>\n}\n"
    )
    command = [str(SCRIPTS / "mini-opt"), str(source), "--mcpu=znver3", "-p", "graph-bf16-products"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"mini-opt: error: pass 'graph-bf16-products' failed: graph-bf16-products: target 'znver3' {REFUSAL}"
    ]
