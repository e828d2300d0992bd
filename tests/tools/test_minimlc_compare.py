"""`minimlc compare` (minimlc vs an oracle, per output or per layer), `minimlc conformance`, `compile --stats`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_run import ROOT, assert_one_line_error, minimlc
from onnx import TensorProto, helper
from test_model_tools import small_cnn

from minimlc.tools import minimlc_cli, model_tools


@pytest.fixture(scope="module")
def cnn_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "cnn.onnx"
    onnx.save(small_cnn(), path)
    return path


ROW = r"\s+\[[\d, ]+\]\s+\d\.\d{3}e[-+]\d\d\s+\d\.\d{3}e[-+]\d\d\s+ok"


@pytest.mark.parametrize("oracle", ["onnxruntime", "reference"])
def test_compare_prints_errors_per_output(mlp_path: Path, oracle: str) -> None:
    result = minimlc("compare", str(mlp_path), "--oracle", oracle)
    assert result.returncode == 0, result.stderr
    assert re.search(rf"compiled .*mlp.onnx in [\d.]+ s .*oracle: {oracle}; seed 0", result.stdout)
    assert re.search(r"^tensor\s+op\s+shape\s+max abs err\s+max rel err$", result.stdout, flags=re.MULTILINE)
    assert re.search(rf"^logits\s+Gemm{ROW}$", result.stdout, flags=re.MULTILINE), result.stdout


def test_compare_per_layer_with_random_weights(cnn_path: Path) -> None:
    result = minimlc("compare", str(cnn_path), "--per-layer", "--random-weights", "--seed", "2")
    assert result.returncode == 0, result.stderr
    assert "random weights" in result.stdout
    rows = re.findall(rf"^(\w+)\s+(\w+){ROW}$", result.stdout, flags=re.MULTILINE)
    assert rows == [
        ("conv", "Conv"),
        ("bn", "BatchNormalization"),
        ("relu", "Relu"),
        ("flat", "Flatten"),
        ("logits", "Gemm"),
        ("probs", "Softmax"),
    ], result.stdout


def test_compare_marks_the_first_mismatch(cnn_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real_oracle = model_tools.run_oracle

    def oracle_off_from_relu_on(model: onnx.ModelProto, feeds: dict[str, np.ndarray], oracle: str) -> dict:
        outputs = real_oracle(model, feeds, oracle)
        return {name: value + 1.0 if name in ("relu", "logits") else value for name, value in outputs.items()}

    monkeypatch.setattr(model_tools, "run_oracle", oracle_off_from_relu_on)
    assert minimlc_cli.main(["compare", str(cnn_path), "--per-layer", "--random-weights"]) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^bn\s.*\sok$", out, flags=re.MULTILINE)
    assert re.search(r"^relu\s.*\sMISMATCH  <- first mismatch$", out, flags=re.MULTILINE), out
    assert re.search(r"^logits\s.*\sMISMATCH$", out, flags=re.MULTILINE)
    assert "2 of 6 tensors exceed the tolerance" in err


def test_compare_with_given_input(mlp_path: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.ones((1, 784), np.float32))
    result = minimlc("compare", str(mlp_path), "--input", f"input={tmp_path / 'x.npy'}", "--atol", "0", "--rtol", "1")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^logits\s+Gemm", result.stdout, flags=re.MULTILINE)


def test_compare_errors_are_reported_without_traceback(tmp_path: Path) -> None:
    missing = minimlc("compare", str(tmp_path / "nowhere.onnx"))
    assert missing.returncode == 1
    assert "nowhere.onnx" in missing.stderr
    assert "Traceback" not in missing.stderr
    graph = helper.make_graph(
        [helper.make_node("NotAnOnnxOp", ["x"], ["y"], domain="com.example")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    onnx.save(helper.make_model(graph, opset_imports=opsets), tmp_path / "custom.onnx")
    unsupported = minimlc("compare", str(tmp_path / "custom.onnx"))
    assert unsupported.returncode == 1
    assert "unsupported operator type: com.example.NotAnOnnxOp" in unsupported.stderr
    assert "Traceback" not in unsupported.stderr


def test_compile_stats_times_every_stage(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--stats", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    for stage in ("import (frontend)", "graph-to-te", "convert-to-llvm", "translate to LLVM IR", "JIT", "total"):
        assert re.search(rf"^  {re.escape(stage)}.*\s[\d.]+ s$", result.stderr, flags=re.MULTILINE), stage


@pytest.mark.slow
def test_conformance_table_and_expected_failures(tmp_path: Path) -> None:
    listing = tmp_path / "expected_failures.txt"
    listing.write_text(
        "# old\ntest_relu  mismatch\ntest_some_other_op  RuntimeError  # kept: not run\n"
        "test_basic_conv_with_padding  mismatch\n"
    )
    classification = tmp_path / "cases.json"
    written = ("--write-expected-failures", str(listing), "--json", str(classification))
    result = minimlc("conformance", "--ops", "Relu,Bernoulli", *written)
    assert result.returncode == 0, result.stderr  # unexpected failures, but now listed
    assert "test_relu: passes (native); listed as mismatch" in result.stdout
    assert re.search(r"^op\s+native\s+constant\s+failed\s+unsupported$", result.stdout, flags=re.MULTILINE)
    assert re.search(r"^Relu\s+2\s+0\s+0\s+0$", result.stdout, flags=re.MULTILINE), result.stdout
    refused = re.search(r"^Bernoulli\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", result.stdout, flags=re.MULTILINE)
    assert refused, result.stdout
    assert int(refused.group(4)) > 0
    assert re.search(r"^total(\s+\d+){4}$", result.stdout, flags=re.MULTILINE)
    cases = {case["name"]: case for case in json.loads(classification.read_text())}
    assert cases["test_relu"] == {"name": "test_relu", "op": "Relu", "outcome": "native", "kind": "", "message": ""}
    assert cases["test_bernoulli"]["kind"] == "unsupported-op"
    assert re.search(r"\[1/\d+\] test_bernoulli", result.stderr)
    written = listing.read_text()
    names = [line.split()[0] for line in written.splitlines() if line and not line.startswith("#")]
    assert "test_relu" not in names  # it passes now
    assert "test_basic_conv_with_padding" in names  # not run: kept
    assert "test_some_other_op" not in names  # no such test: dropped
    assert "test_bernoulli" in names
    assert "test_bernoulli  unsupported-op" in written
    assert written.index("# Bernoulli") < written.index("test_bernoulli") < written.index("# Conv")


def test_conformance_rejects_an_expected_failures_file_without_kinds(tmp_path: Path) -> None:
    listing = tmp_path / "expected_failures.txt"
    listing.write_text("test_relu\n")
    result = minimlc("conformance", "--ops", "Relu", "--write-expected-failures", str(listing))
    assert result.returncode == 1
    assert "minimlc: error: " in result.stderr and "'test_relu' names no failure kind" in result.stderr
    assert "Traceback" not in result.stderr


def test_conformance_rejects_unknown_ops() -> None:
    result = minimlc("conformance", "--ops", "NoSuchOp")
    assert result.returncode == 1
    assert "--ops names unknown ONNX operator(s): NoSuchOp" in result.stderr


@pytest.mark.slow
def test_conformance_runs_a_preview_domain_op() -> None:
    """`--ops` names ops of onnx's preview domain too (FlexAttention); float64 is refused, not failed."""
    result = minimlc("conformance", "--ops", "FlexAttention")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^FlexAttention\s+\d+\s+0\s+0\s+2$", result.stdout, flags=re.MULTILINE), result.stdout


def test_compare_random_weights_replaces_initializers(mlp_path: Path) -> None:
    """The MLP's weights are initializers: random ones give other outputs, which still match ONNX Runtime."""
    result = minimlc("compare", str(mlp_path), "--random-weights", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "random weights" in result.stdout and re.search(rf"^logits\s+Gemm{ROW}$", result.stdout, flags=re.MULTILINE)


def test_compare_without_onnxruntime_says_what_to_install(mlp_path: Path) -> None:
    hidden = "import sys; sys.modules['onnxruntime'] = None; from minimlc.tools.minimlc_cli import main; "
    result = subprocess.run(
        [sys.executable, "-c", hidden + f"sys.exit(main(['compare', {str(mlp_path)!r}]))"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert_one_line_error(result, "--oracle onnxruntime needs ONNX Runtime")
    assert "pip install 'minimlc[compare]' (or onnxruntime), or compare with --oracle reference" in result.stderr
    assert "compiling" not in result.stderr  # refused before any work
    assert '"onnxruntime>=' in (ROOT / "pyproject.toml").read_text().split("compare = [")[1].split("]")[0]


@pytest.mark.slow
def test_conformance_fails_on_unexpected_failures_and_labels_them(tmp_path: Path) -> None:
    listing = tmp_path / "expected.txt"
    listing.write_text("test_relu  mismatch\ntest_bernoulli  unsupported-op\ntest_bernoulli_seed  mismatch\n")
    result = minimlc("conformance", "--ops", "Relu,Bernoulli", "--expected-failures", str(listing), "-v")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    labelled = re.findall(r"^\w+ +(expected|UNEXPECTED(?: pass)?) +(\w+):", result.stdout, flags=re.MULTILINE)
    rows = {name: label for label, name in labelled}
    assert rows["test_bernoulli"] == "expected"
    assert rows["test_bernoulli_double"] == "UNEXPECTED"  # not listed
    assert rows["test_bernoulli_seed"] == "UNEXPECTED"  # listed as another kind of failure
    assert rows["test_relu"] == "UNEXPECTED pass"
    assert "test_bernoulli_seed: model has 1 unsupported operator type: Bernoulli" in result.stdout
    assert "(listed as mismatch)" in result.stdout and "listed as mismatch: its entry can go" in result.stdout
    assert f"5 unexpected failure(s), 1 expected (listed in {listing}), 1 unexpected pass(es)" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "minimlc: 5 unexpected failure(s)"
    checked_in = minimlc("conformance", "--ops", "Relu,Bernoulli")  # tools/conformance_expected_failures.txt
    assert checked_in.returncode == 0, checked_in.stdout
    assert "0 unexpected failure(s), 6 expected (listed in" in checked_in.stdout
    assert "UNEXPECTED" not in checked_in.stdout
