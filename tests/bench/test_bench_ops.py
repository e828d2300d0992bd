"""bench/bench_ops.py: one line per compute node (ConstantOfShape weights made random), totals, bad model names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_ops.py"


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", str(BENCH), *args], capture_output=True, text=True, check=False
    )


def grouped_conv_model(path: Path) -> None:
    """ConstantOfShape weight -> Conv(group 2) -> Relu -> Relu (the two Relus are the same node kind)."""
    shape = numpy_helper.from_array(np.array([8, 2, 3, 3], dtype=np.int64), "w_shape")
    nodes = [
        helper.make_node(
            "ConstantOfShape", ["w_shape"], ["w"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.02])
        ),
        helper.make_node("Conv", ["x", "w"], ["c"], group=2, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])],
        [shape],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def test_one_line_per_compute_node_then_the_total(tmp_path: Path) -> None:
    model = tmp_path / "grouped.onnx"
    grouped_conv_model(model)
    result = run_bench(str(model), "--runs", "1", "--budget-seconds", "0")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    number = r"\s*\d+\.\d{3} ms"
    conv = r"\s+\d+\.\dx  Conv \[\[1, 4, 6, 6\]\] \[\[8, 2, 3, 3\]\] .*'group': 2.*"
    assert re.fullmatch(number + number + conv, lines[0])
    assert lines[1].endswith("Relu [[1, 8, 6, 6]] [] {}") and lines[1] == lines[2]
    assert re.fullmatch(number + number + "  total .*", lines[3])


def test_ops_option_selects_op_types(tmp_path: Path) -> None:
    model = tmp_path / "grouped.onnx"
    grouped_conv_model(model)
    result = run_bench(str(model), "--ops", "Relu", "--runs", "1", "--budget-seconds", "0")
    assert result.returncode == 0, result.stderr
    assert [line.split("x  ")[1] for line in result.stdout.splitlines()[:-1]] == ["Relu [[1, 8, 6, 6]] [] {}"] * 2


def test_unknown_model_is_rejected() -> None:
    result = run_bench("light_nonexistent")
    assert result.returncode == 2
    assert "light_nonexistent is neither a light model (light_bvlc_alexnet" in result.stderr
