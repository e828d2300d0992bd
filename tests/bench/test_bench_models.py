"""bench/bench_models.py: a quick run's table and JSON, ONNX Runtime absent, bad options; FLOP counting."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_models.py"
sys.path.insert(0, str(ROOT / "bench"))
from machine_peak import MachinePeak  # noqa: E402
from model_flops import count_flops  # noqa: E402

QUICK = ["--quick", "--matmul-size", "128"]


def run_bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", str(BENCH), *args], capture_output=True, text=True, check=False, env=env
    )


def test_quick_run_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    report_path = tmp_path / "models.json"
    result = run_bench(*QUICK, "--models", "mlp,matmul,conv_relu", "--threads", "1,2", "--json", str(report_path))
    assert result.returncode == 0, result.stderr
    assert re.search(r"FMA loop [\d.]+ GFLOP/s \(\d+ lanes\), numpy sgemm 1024\^3 [\d.]+ GFLOP/s", result.stdout)
    header = r"^workload\s+thr\s+GFLOP\s+compile s\s+minimlc ms\s+ORT ms\s+mlc/ORT\s+mlc/first\s+ORT/first"
    assert re.search(header, result.stdout, re.M)
    for workload in ("mlp", "matmul", "conv_relu"):
        for threads in (1, 2):
            assert re.search(rf"^{workload}\s+{threads}(\s+[\d.e+-]+){{13}}$", result.stdout, re.M), result.stdout
        assert f"{workload}: compiling ..." in result.stderr
    assert "note: FLOPs count Conv, Gemm and MatMul" in result.stdout

    report = json.loads(report_path.read_text())
    assert report["machine"]["fma_gflops"] > 0
    assert report["machine"]["numpy_sgemm_gflops"] > 0
    assert report["onnxruntime"]
    assert report["settings"] == {
        "threads": [1, 2],
        "warmup": 1,
        "runs": 5,
        "budget_seconds": 1.0,
        "matmul_size": 128,
        "quick": True,
        "clock": "wall",
        "openvino": None,
        "precision": "fp32",
    }
    rows = report["rows"]
    assert [(row["workload"], row["threads"]) for row in rows] == [
        (name, threads) for name in ("mlp", "matmul", "conv_relu") for threads in (1, 2)
    ]
    flops = {"mlp": 2 * (784 * 128 + 128 * 10), "matmul": 2 * 128**3, "conv_relu": 2 * 64 * 64 * 9 * 56 * 56}
    for row in rows:
        assert row["errors"] == []
        assert row["gflop"] == pytest.approx(flops[row["workload"]] / 1e9)
        assert row["minimlc_ms"] > 0
        assert row["ort_ms"] > 0
        assert row["minimlc_over_ort"] == pytest.approx(row["minimlc_ms"] / row["ort_ms"])
        first = next(r for r in rows if r["workload"] == row["workload"] and r["threads"] == 1)
        assert row["minimlc_over_first"] == pytest.approx(row["minimlc_ms"] / first["minimlc_ms"])
        assert row["ort_over_first"] == pytest.approx(row["ort_ms"] / first["ort_ms"])
        expected_pct = 100 * row["minimlc_gflops"] / (report["machine"]["fma_gflops"] * row["threads"])
        assert row["minimlc_pct_peak"] == pytest.approx(expected_pct)
        assert row["max_abs_diff_vs_ort"] < 1e-3
        assert row["rounds"] == 5
        assert isinstance(row["minimlc_parallel"], bool)
    if serial := [row["workload"] for row in rows if row["threads"] == 2 and not row["minimlc_parallel"]]:
        assert f"minimlc compiled no parallel loop for {', '.join(serial)}: it ran on one thread" in result.stdout
    assert rows[0]["compile_seconds"] == rows[1]["compile_seconds"]  # one compile serves both thread counts


def test_tuning_db_times_a_tuned_build_in_the_same_rounds(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from make_mlp import build_mlp

    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase, target_key
    from minimlc.lowering.target import target_from_name
    from minimlc.tuner.tasks import extract_tasks

    target = target_from_name("host")
    database = TuningDatabase(tmp_path / "tune.jsonl")
    for task in extract_tasks(import_model(build_mlp(batch=1)), target):
        config = {**task.space.default(), "parallel": False}  # a point of the space other than the default
        database.add(Record(task.key, target_key(target), task.rule, task.kernel, task.flops, config, 1e-6))
    report_path = tmp_path / "r.json"
    database_path = str(tmp_path / "tune.jsonl")
    args = ("--models", "mlp", "--threads", "1", "--tuning-db", database_path, "--json", str(report_path))
    result = run_bench(*QUICK, *args)
    assert result.returncode == 0, result.stderr
    assert re.search(r"ORT %peak\s+max\|diff\|\s+rounds\s+tuned ms\s+tuned/def\s+tuned/ORT$", result.stdout, re.M)
    assert re.search(r"^mlp\s+1(\s+[\d.e+-]+){16}$", result.stdout, re.M), result.stdout
    report = json.loads(report_path.read_text())
    assert report["settings"]["tuning_db"] == str(tmp_path / "tune.jsonl")
    (row,) = report["rows"]
    assert row["tuned_over_default"] == pytest.approx(row["tuned_ms"] / row["minimlc_ms"])
    assert row["tuned_over_ort"] == pytest.approx(row["tuned_ms"] / row["ort_ms"])
    assert row["tuned_max_abs_diff"] < 1e-4
    missing = run_bench(*QUICK, "--models", "mlp", "--tuning-db", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2
    assert "--tuning-db: no such file" in missing.stderr


def hiding(module: str, folder: Path) -> dict[str, str]:
    """An environment in which importing `module` raises ImportError (a package of that name in `folder`, first on
    PYTHONPATH)."""
    (folder / module).mkdir()
    (folder / module / "__init__.py").write_text(f"raise ImportError('{module} is hidden for this test')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


def test_without_onnxruntime_its_columns_show_a_dash(tmp_path: Path) -> None:
    env = hiding("onnxruntime", tmp_path)
    result = run_bench(*QUICK, "--models", "mlp", "--threads", "1", "--json", str(tmp_path / "r.json"), env=env)
    assert result.returncode == 0, result.stderr
    row = r"^mlp\s+1\s+[\d.e-]+\s+[\d.]+\s+[\d.]+\s+-\s+-\s+1.00\s+-\s+[\d.]+\s+[\d.]+\s+-\s+-\s+-\s+5$"
    assert re.search(row, result.stdout, re.M), result.stdout
    assert 'note: onnxruntime is not installed: its columns show "-".' in result.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["onnxruntime"] is None
    assert report["rows"][0]["ort_ms"] is None


def test_openvino_is_timed_in_the_same_rounds(tmp_path: Path) -> None:
    """OpenVINO's CPU plugin beside minimlc and ONNX Runtime: its time, minimlc's over it, and outputs that agree."""
    pytest.importorskip("openvino", reason="openvino is in the test extras")
    report_path = tmp_path / "r.json"
    result = run_bench(*QUICK, "--models", "mlp,conv_relu", "--threads", "1", "--openvino", "--json", str(report_path))
    assert result.returncode == 0, result.stderr
    assert re.search(r"rounds\s+OV ms\s+mlc/OV\s+max\|diff OV\|$", result.stdout, re.M), result.stdout
    precisions = {}
    for workload in ("mlp", "conv_relu"):
        assert re.search(rf"^{workload}\s+1(\s+[\d.e+-]+){{16}}$", result.stdout, re.M), result.stdout
        stated = re.search(rf"^{workload}: OpenVINO computes in (f32|bf16) at 1 thread", result.stderr, re.M)
        assert stated is not None, result.stderr
        precisions[workload] = stated.group(1)
    report = json.loads(report_path.read_text())
    assert report["openvino"]
    assert report["settings"]["openvino"] == "default"
    for row in report["rows"]:
        assert row["errors"] == []
        assert row["minimlc_over_openvino"] == pytest.approx(row["minimlc_ms"] / row["openvino_ms"])
        # OpenVINO's default is bf16 on a CPU with AVX512-BF16 (Zen 4/5, Sapphire Rapids): 8-bit mantissas then
        # (the MLP's 784-deep sums were 0.010 off minimlc's float32 on Zen 5), else float32.
        assert row["max_abs_diff_vs_openvino"] < (1e-3 if precisions[row["workload"]] == "f32" else 5e-2)


def test_openvino_precision_is_stated_or_refused(tmp_path: Path) -> None:
    pytest.importorskip("openvino", reason="openvino is in the test extras")
    result = run_bench(*QUICK, "--models", "mlp", "--threads", "1", "--openvino", "--openvino-precision", "f32")
    assert result.returncode == 0, result.stderr
    assert "mlp: OpenVINO computes in f32 at 1 thread" in result.stderr
    bad = run_bench(*QUICK, "--models", "mlp", "--openvino", "--openvino-precision", "f16")
    assert bad.returncode == 2
    assert "argument --openvino-precision: invalid choice: 'f16'" in bad.stderr


def test_openvino_missing_is_refused(tmp_path: Path) -> None:
    env = hiding("openvino", tmp_path)
    result = run_bench(*QUICK, "--models", "mlp", "--openvino", env=env)
    assert result.returncode == 2
    assert "--openvino: openvino is not installed (pip install openvino)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "mlp,nope"], "unknown workload(s) nope; choose from mlp, matmul, conv_relu, bvlc_alexnet"),
        (["--threads", "0"], "argument --threads: expected comma-separated positive integers, got '0'"),
        (["--threads", "1,x"], "argument --threads: expected comma-separated positive integers, got '1,x'"),
        (["--clock", "cpu", "--threads", "1,2"], "--clock cpu times the calling thread only: use it with --threads 1"),
    ],
)
def test_bad_options_are_rejected(args: list[str], message: str) -> None:
    result = run_bench(*args)
    assert result.returncode == 2
    assert message in result.stderr


def _model(
    nodes: list[onnx.NodeProto], inputs: dict[str, list[int | str]], output: str, output_shape: list[int] | None = None
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "flops",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs.items()],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_flops_of_conv_gemm_matmul_and_nothing_else() -> None:
    conv = helper.make_node("Conv", ["x", "w"], ["c"], group=2, strides=[2, 2], pads=[1, 1, 1, 1])
    relu = helper.make_node("Relu", ["c"], ["r"])
    model = _model([conv, relu], {"x": [1, 8, 10, 10], "w": [6, 4, 3, 3]}, "r")
    assert count_flops(model) == 2 * (6 * 5 * 5) * (4 * 3 * 3)
    gemm = helper.make_node("Gemm", ["a", "b"], ["y"], transA=1)
    assert count_flops(_model([gemm], {"a": [7, 3], "b": [7, 5]}, "y")) == 2 * 3 * 5 * 7
    matmul = helper.make_node("MatMul", ["a", "b"], ["y"])
    assert count_flops(_model([matmul], {"a": [2, 3, 4], "b": [4, 5]}, "y")) == 2 * 2 * 3 * 5 * 4


def test_flops_need_known_shapes() -> None:
    matmul = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    with pytest.raises(ValueError, match="MatMul node 'mm': the shape of 'y' is unknown"):
        count_flops(_model([matmul], {"a": ["n", 4], "b": [4, 5]}, "y"))


def test_a_workload_that_does_not_compile_is_listed_with_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # bench_models sets them on import; monkeypatch restores them afterwards
    bench_models = importlib.import_module("bench_models")
    matmul = helper.make_node("MatMul", ["a", "b"], ["m"])
    coin = helper.make_node("Bernoulli", ["m"], ["y"], name="coin")
    model = _model([matmul, coin], {"a": [2, 3], "b": [3, 4]}, "y", [2, 4])
    settings = bench_models.Settings(threads=[1, 2], warmup=0, runs=1, budget_seconds=0.0)
    rows = bench_models.bench_workload("coin", lambda: model, settings, MachinePeak(100.0, 50.0, 16), None)
    assert [row.threads for row in rows] == [1, 2]
    for row in rows:
        assert row.gflop == pytest.approx(2 * 2 * 4 * 3 / 1e9)
        assert row.minimlc_ms is None
        assert row.errors == [
            "minimlc: UnsupportedOpsError: model has 1 unsupported operator type: Bernoulli (opset 17): coin"
        ]
    line, error = bench_models.table_row(rows[0]).splitlines()
    assert re.fullmatch(r"coin\s+1\s+4\.8e-08(\s+-){11}\s+0", line), line
    assert error == f"    error: {rows[0].errors[0]}"


@pytest.mark.slow
def test_transformer_workloads_build_and_match_onnxruntime() -> None:
    result = run_bench("--quick", "--models", "bert,vit,gpt", "--threads", "1", "--runs", "1")
    assert result.returncode == 0, result.stderr
    for workload in ("bert", "vit", "gpt"):
        line = re.search(rf"^{workload}\s+1(\s+[\d.e+-]+){{13}}$", result.stdout, re.M)
        assert line, result.stdout
        assert float(line.group(0).split()[-2]) < 1e-3  # max |minimlc - ONNX Runtime|


def test_the_cpu_clock_leaves_out_time_off_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A contender that sleeps 20 ms per call: 20 ms by the wall clock, next to nothing by the thread's CPU time (as
    for a call another process preempts)."""
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # bench_models sets them on import; monkeypatch restores them afterwards
    bench_models = importlib.import_module("bench_models")
    contenders = {"sleeper": lambda: time.sleep(0.02)}
    wall, _ = bench_models.interleaved_medians(contenders, 0, 3, 0.0, bench_models.CLOCKS["wall"])
    cpu, _ = bench_models.interleaved_medians(contenders, 0, 3, 0.0, bench_models.CLOCKS["cpu"])
    assert wall["sleeper"] >= 0.02
    assert cpu["sleeper"] < wall["sleeper"] / 4  # a sleep costs next to no CPU time, on a fast machine or a slow one


def test_random_weights_replace_the_light_models_constant_ones() -> None:
    """`--random-weights`: the light CNNs' weights, ConstantOfShape(0.02) fills, become seeded random constants (the
    same at every build); the other workloads are built as without it."""
    bench_models = importlib.import_module("bench_models")
    plain, random = bench_models.workloads(128)["squeezenet"](), bench_models.workloads(128, True)["squeezenet"]()
    assert sum(node.op_type == "ConstantOfShape" for node in plain.graph.node) > 20
    assert not any(node.op_type == "ConstantOfShape" for node in random.graph.node)
    constants = [node.attribute[0].t for node in random.graph.node if node.op_type == "Constant"]
    conv_weights = [onnx.numpy_helper.to_array(tensor) for tensor in constants if len(tensor.dims) == 4]
    assert len(conv_weights) == 26
    assert all(weight.std() > 0 for weight in conv_weights)
    again = bench_models.workloads(128, True)["squeezenet"]()
    assert again.SerializeToString() == random.SerializeToString()
    mlp, random_mlp = bench_models.workloads(128)["mlp"](), bench_models.workloads(128, True)["mlp"]()
    assert random_mlp.SerializeToString() == mlp.SerializeToString()
