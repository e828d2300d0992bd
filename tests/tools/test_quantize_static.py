"""Static int8 QDQ quantization (`minimlc quantize --calibrate`, `minimlc.quantize_static`,
`InferenceSession(precision="int8")`, `minimlc compare --precision int8`) and dynamic (`--dynamic`) on a small
CNN (Conv-Relu-Conv-Add-Relu-pool-Gemm) and a small MatMul model.

Tolerances, as measured (random weights scaled by fan-in, 16 standard-normal calibration inputs):
- minimlc against ONNX Runtime on the same QDQ file (ORT with graph optimisations off, so that it computes ONNX's
  QDQ semantics in float): 1e-4 of max |out| (measured 2e-7 CNN, 0 MatMul: both quantize every activation to the
  same integers, only float sums differ in order; a value moved by one activation step would exceed the bound).
- int8 against float32, max |error| / max |out|: under 5e-2 (measured 7e-3 CNN, 2.6e-2 MatMul); the CNN's top-1
  agrees with float32 on at least 15 of 16 held-out inputs (measured 16).
- Dynamic (`--dynamic`, MatMulInteger): minimlc within 1e-4 of onnx.reference and of ONNX Runtime with 7-bit
  weights (measured 1.5e-7 and 0; with 8-bit weights ORT's u8 x s8 kernels saturate on x86 without VNNI, 0.2 off).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_run import assert_one_line_error, minimlc
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import minimlc as mlc
from minimlc import InferenceSession
from minimlc.driver.calibration import CalibrationError, collect_ranges, load_calibration
from minimlc.frontend.onnx_dynamic_quantization import quantize_dynamic
from minimlc.frontend.onnx_static_quantization import activation_params, prepare_for_quantization, weight_scales

FLOAT_TOLERANCE = 5e-2
ORT_TOLERANCE = 1e-4


def _weight(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 2 else shape[0]
    return numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name)


def _bias(rng: np.random.Generator, name: str, size: int) -> onnx.TensorProto:
    return numpy_helper.from_array((0.1 * rng.standard_normal(size)).astype(np.float32), name)


def small_cnn() -> onnx.ModelProto:
    """x [1, 3, 16, 16] -> Conv-Relu -> Conv + skip -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> [1, 10]."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Add", ["c2", "r1"], ["joined"]),
        helper.make_node("Relu", ["joined"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], transB=1, name="fc"),
    ]
    initializers = [
        _weight(rng, "w1", 8, 3, 3, 3),
        _bias(rng, "b1", 8),
        _weight(rng, "w2", 8, 8, 3, 3),
        _bias(rng, "b2", 8),
        _weight(rng, "wf", 10, 8),
        _bias(rng, "bf", 10),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def small_matmul_model() -> onnx.ModelProto:
    """x [1, 4, 32] -> MatMul + bias -> Relu -> MatMul -> + x -> MatMul (head) -> [1, 4, 16]."""
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["a"]),
        helper.make_node("MatMul", ["a", "w2"], ["o"]),
        helper.make_node("Add", ["x", "o"], ["r"]),
        helper.make_node("MatMul", ["r", "head"], ["y"]),
    ]
    initializers = [_weight(rng, "w1", 32, 48), _bias(rng, "b1", 48), _weight(rng, "w2", 48, 32)]
    initializers.append(_weight(rng, "head", 32, 16))
    graph = helper.make_graph(
        nodes,
        "small_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds(model: onnx.ModelProto, count: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    (vi,) = model.graph.input
    shape = [dim.dim_value for dim in vi.type.tensor_type.shape.dim]
    return [{vi.name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]


def _ort_outputs(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [session.run(None, feed)[0] for feed in feeds]


def _session_outputs(session: InferenceSession, feeds: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
    return [session.run(None, feed)[0] for feed in feeds]


def _relative(actual: list[np.ndarray], expected: list[np.ndarray]) -> float:
    return max(float(np.abs(a - e).max() / np.abs(e).max()) for a, e in zip(actual, expected))


@pytest.mark.parametrize("build", [small_cnn, small_matmul_model])
def test_qdq_runs_in_onnxruntime_like_minimlc_and_near_float(build) -> None:
    model = build()
    quantized = mlc.quantize_static(model, _feeds(model, 16, seed=1))
    onnx.checker.check_model(quantized)
    ops = [node.op_type for node in quantized.graph.node]
    assert ops.count("QuantizeLinear") >= 3
    assert "DequantizeLinear" in ops
    held_out = _feeds(model, 16, seed=2)
    int8 = _session_outputs(InferenceSession(quantized), held_out)
    assert _relative(int8, _ort_outputs(quantized, held_out)) < ORT_TOLERANCE
    float32 = _ort_outputs(model, held_out)  # ONNX Runtime's float32: one compile less than minimlc's
    error = _relative(int8, float32)
    assert 0 < error < FLOAT_TOLERANCE  # quantized, yet close
    if build is small_cnn:
        agree = sum(int(np.argmax(a) == np.argmax(f)) for a, f in zip(int8, float32))
        assert agree >= 15


def test_weights_are_int8_per_output_channel() -> None:
    weight = np.array([[[[0.5, -1.0]]], [[[0.25, 0.125]]], [[[0.0, 0.0]]]], dtype=np.float32)  # [3, 1, 1, 2]
    quantized, scale = weight_scales(weight, axis=0)
    np.testing.assert_array_equal(scale, np.float32([1.0 / 127, 0.25 / 127, 1.0]))
    np.testing.assert_array_equal(quantized.reshape(3, 2), [[64, -127], [127, 64], [0, 0]])
    assert quantized.dtype == np.int8
    _, per_tensor = weight_scales(weight, axis=None)
    assert per_tensor.shape == ()
    assert per_tensor == np.float32(1.0 / 127)
    reduced, _ = weight_scales(weight, axis=0, reduce_range=True)
    assert reduced.max() == 63
    assert reduced.min() == -63


def test_written_model_carries_the_scales_of_its_weights() -> None:
    model = small_cnn()
    quantized = mlc.quantize_static(model, _feeds(model, 2, seed=1), per_channel=True)
    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in quantized.graph.initializer}
    w1 = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "w1"))
    expected = np.abs(w1).max(axis=(1, 2, 3)) / 127
    np.testing.assert_allclose(constants["w1_conv1_scale"], expected, rtol=1e-6)
    assert constants["w1_conv1_quantized"].dtype == np.int8
    assert constants["b1_conv1_quantized"].dtype == np.int32
    props = {prop.key: prop.value for prop in quantized.metadata_props}
    assert props["minimlc.quantization"].startswith("int8 static QDQ, minmax, per-channel")


def test_percentile_clips_an_outlier_minmax_keeps() -> None:
    model = small_matmul_model()
    feeds = _feeds(model, 4, seed=3)
    feeds[2]["x"][0, 1, 5] = 1000.0
    minmax = collect_ranges(model, feeds, ["x"], "minmax")["x"]
    percentile = collect_ranges(model, feeds, ["x"], "percentile", percentile=99.0)["x"]
    assert minmax[1] == 1000.0
    everything = np.sort(np.concatenate([feed["x"].ravel() for feed in feeds]))
    rank = len(everything) // 100 + 1  # the values at and above the 99th percentile
    assert percentile == (everything[rank - 1], everything[-rank])
    assert percentile[1] < 10
    assert activation_params(*percentile)[0] < activation_params(*minmax)[0] / 50


def test_int8_session_is_the_quantized_model() -> None:
    model = small_matmul_model()
    feeds = _feeds(model, 4, seed=1)
    session = InferenceSession(model, precision="int8", calibration=feeds)
    (expected,) = InferenceSession(mlc.quantize_static(model, feeds)).run(None, feeds[0])
    np.testing.assert_array_equal(session.run(None, feeds[0])[0], expected)
    assert "minimlc.quantization" in session.get_modelmeta().custom_metadata_map


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"precision": "fp16"}, "precision must be one of 'fp32', 'bf16', 'int8', got 'fp16'"),
        ({"precision": "int8"}, "precision='int8' needs calibration="),
        ({"calibration": []}, "calibration is only used with precision='int8'"),
        ({"precision": "int8", "calibration": [{"y": np.zeros((1, 4, 32), np.float32)}]}, "unknown input 'y'"),
        ({"precision": "int8", "calibration": [{"x": np.zeros((1, 4, 8), np.float32)}]}, "has shape [1, 4, 8]"),
    ],
)
def test_session_refusals(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=r"^[^\n]*$") as raised:
        InferenceSession(small_matmul_model(), **options)
    assert message in str(raised.value)


def test_calibration_files(tmp_path: Path) -> None:
    model = small_matmul_model()
    feeds = _feeds(model, 3, seed=4)
    np.savez(tmp_path / "stacked.npz", x=np.concatenate([feed["x"] for feed in feeds]))
    stacked = load_calibration(tmp_path / "stacked.npz", model)
    assert len(stacked) == 3
    assert np.array_equal(stacked[1]["x"], feeds[1]["x"])
    folder = tmp_path / "feeds"
    folder.mkdir()
    for index, feed in enumerate(feeds):
        np.save(folder / f"{index}.npy", feed["x"])
    assert len(load_calibration(folder, model, count=2)) == 2
    np.savez(tmp_path / "odd.npz", x=np.zeros((3, 4, 32), np.float64))
    with pytest.raises(CalibrationError, match="input 'x' is float64, the model takes float32"):
        load_calibration(tmp_path / "odd.npz", model)
    np.savez(folder / "extra.npz", image=np.zeros((1, 4, 32), np.float32))
    with pytest.raises(CalibrationError, match=r"extra.npz: unknown input 'image' \(the model's inputs: x\)"):
        load_calibration(folder, model)
    np.savez(tmp_path / "ragged.npz", x=np.zeros((1, 4, 8), np.float32))
    with pytest.raises(CalibrationError, match=r"input 'x' has shape \[1, 4, 8\], the model takes \[1, 4, 32\]"):
        load_calibration(tmp_path / "ragged.npz", model)


def test_cli_writes_a_qdq_model_onnxruntime_runs(tmp_path: Path) -> None:
    model = small_cnn()
    source, output = tmp_path / "cnn.onnx", tmp_path / "cnn.int8.onnx"
    onnx.save(model, source)
    np.savez(tmp_path / "calib.npz", x=np.concatenate([feed["x"] for feed in _feeds(model, 8, seed=1)]))
    result = minimlc("quantize", str(source), "--calibrate", str(tmp_path / "calib.npz"), "-o", str(output))
    assert result.returncode == 0, result.stderr
    assert "int8 QDQ (minmax, per-channel, 8 calibration inputs): 6 weights and biases" in result.stderr
    (logits,) = _ort_outputs(onnx.load(output), _feeds(model, 1, seed=5))
    assert logits.shape == (1, 10)


def test_cli_refuses_a_folder_without_feeds(tmp_path: Path) -> None:
    source = tmp_path / "cnn.onnx"
    onnx.save(small_cnn(), source)
    (tmp_path / "calib").mkdir()
    result = minimlc("quantize", str(source), "--calibrate", str(tmp_path / "calib"), "-o", str(tmp_path / "o.onnx"))
    assert_one_line_error(result, f"calibration folder '{tmp_path / 'calib'}' holds no .npz or .npy files")


def test_compare_reports_int8_errors_and_agreement(tmp_path: Path) -> None:
    model = small_cnn()
    source = tmp_path / "cnn.onnx"
    onnx.save(model, source)
    held_out = _feeds(model, 8, seed=2)
    np.savez(tmp_path / "calib.npz", x=np.concatenate([feed["x"] for feed in _feeds(model, 8, seed=1)]))
    np.savez(tmp_path / "eval.npz", x=np.concatenate([feed["x"] for feed in held_out]))
    calibrate, evaluate = str(tmp_path / "calib.npz"), str(tmp_path / "eval.npz")
    result = minimlc("compare", str(source), "--precision", "int8", "--calibrate", calibrate, "--eval", evaluate)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "int8 (int8 static QDQ, minmax, per-channel weights, 8 calibration inputs) against float32, over 8 inputs"
    )
    row = lines[2].split()
    float32 = np.concatenate(_ort_outputs(model, held_out))
    assert row[:3] == ["logits", "[1,", "10]"]
    max_abs, max_rel = float(row[3]), float(row[5])
    assert 0 < max_abs < FLOAT_TOLERANCE * np.abs(float32).max()
    assert max_rel == pytest.approx(max_abs / np.abs(float32).max(), rel=1e-2)
    assert lines[3].startswith("top-1 agreement: ")
    assert "top-5 agreement: 8/8 (100.0%)" in lines[3]


def test_compare_int8_refuses_without_calibration(tmp_path: Path) -> None:
    source = tmp_path / "cnn.onnx"
    onnx.save(small_cnn(), source)
    refused = minimlc("compare", str(source), "--precision", "int8")
    assert_one_line_error(refused, "--precision int8 needs --calibrate DIR_OR_NPZ")


def test_batch_norm_folds_into_its_conv() -> None:
    rng = np.random.default_rng(5)
    norm_params = [numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "gamma")]
    norm_params += [_bias(rng, name, 8) for name in ("beta", "mean")]
    norm_params.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "var"))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["y"], epsilon=1e-3),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_bn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        [_weight(rng, "w", 8, 3, 3, 3), *norm_params],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    folded = prepare_for_quantization(model)
    assert [node.op_type for node in folded.graph.node] == ["Conv"]
    assert folded.opset_import[0].version == 13
    feeds = _feeds(model, 2, seed=6)
    np.testing.assert_allclose(_ort_outputs(folded, feeds)[1], _ort_outputs(model, feeds)[1], rtol=1e-5, atol=1e-5)


def test_dynamic_quantization_is_onnx_semantics_and_near_float(tmp_path: Path) -> None:
    model = small_matmul_model()
    quantized = quantize_dynamic(model, reduce_range=True)  # 7-bit weights: ORT's non-VNNI kernels do not saturate
    assert [node.op_type for node in quantized.graph.node].count("MatMulInteger") == 3
    held_out = _feeds(model, 4, seed=2)
    int8 = _session_outputs(InferenceSession(quantized), held_out)
    assert _relative(int8, [ReferenceEvaluator(quantized).run(None, feed)[0] for feed in held_out]) < ORT_TOLERANCE
    assert _relative(int8, _ort_outputs(quantized, held_out)) < ORT_TOLERANCE
    assert 0 < _relative(int8, _ort_outputs(model, held_out)) < FLOAT_TOLERANCE
    source = tmp_path / "mm.onnx"
    onnx.save(model, source)
    result = minimlc("quantize", str(source), "--dynamic", "-o", str(tmp_path / "mm.dynamic.onnx"))
    assert result.returncode == 0, result.stderr
    assert "int8 dynamic: 3 MatMuls -> DynamicQuantizeLinear + MatMulInteger" in result.stderr
