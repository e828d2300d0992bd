"""`minimlc quantize --weights int8|int4` on a small transformer-ish model (two MatMul layers with bias and GELU on
[batch, tokens, features], a residual, an output head): the rounding bound of the blocks, ONNX Runtime's own
MatMulNBits reading our packing, minimlc equal to ORT on the quantized model, and the quantized logits close to
the float model's.

Tolerances: minimlc against ORT on the same quantized model, 1e-4 of the largest |logit| (float32 sums in another
order). Quantized against float logits, max error over max |logit|: int8 under 2e-2, int4 under 0.25 (random
Gaussian weights, blocks of 32: measured int8 7e-3, int4 0.09 (zero points) to 0.13 (symmetric); trained weights
with outliers fare worse, which is why the blocks are small).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_run import assert_one_line_error, minimlc
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx_weight_quantization import dequantize_weight, quantize_model, quantize_weight

FEATURES, HIDDEN, VOCAB, TOKENS = 64, 96, 48, 5
LOGIT_TOLERANCE = {"int8": 2e-2, "int4": 0.25}


def transformer_ish_model() -> onnx.ModelProto:
    """x [1, TOKENS, FEATURES] -> x + W2 gelu(W1 x + b1) -> head (a MatMul with a bias-free weight of K=FEATURES)."""
    rng = np.random.default_rng(7)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Gelu", ["hb"], ["g"]),
        helper.make_node("MatMul", ["g", "w2"], ["o"]),
        helper.make_node("Add", ["x", "o"], ["r"]),
        helper.make_node("MatMul", ["r", "head"], ["logits"]),
    ]
    inits = [
        weight("w1", FEATURES, HIDDEN),
        numpy_helper.from_array(rng.standard_normal(HIDDEN).astype(np.float32), "b1"),
        weight("w2", HIDDEN, FEATURES),
        weight("head", FEATURES, VOCAB),
    ]
    graph = helper.make_graph(
        nodes,
        "transformer_ish",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, TOKENS, FEATURES])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, TOKENS, VOCAB])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zero_points", [False, True], ids=["symmetric", "zero-points"])
def test_quantize_weight_rounding_bound(bits: int, zero_points: bool) -> None:
    """Every dequantized value is within half its block's scale of the original (K=70: a partial last block)."""
    weight = np.random.default_rng(3).standard_normal((70, 24)).astype(np.float32)
    weight[:, 0] = 0.0  # all-zero blocks: scale 1, exact zeros
    quantized = quantize_weight(weight, bits, 32, zero_points)
    scales = np.repeat(quantized.scales.reshape(24, 3), 32, axis=1)[:, :70].T
    error = np.abs(dequantize_weight(quantized, bits, 70) - weight)
    assert np.all(error <= scales / 2 * (1 + 1e-6))
    assert not error[:, 0].any()


@pytest.mark.parametrize("weights", ["int8", "int4"])
@pytest.mark.parametrize("zero_points", [False, True], ids=["symmetric", "zero-points"])
def test_quantize_command(weights: str, zero_points: bool, tmp_path: Path) -> None:
    """The CLI turns the three MatMuls into MatMulNBits (the float weights dropped), minimlc equals ORT on the
    quantized model, and the logits stay near the float model's."""
    source, target = tmp_path / "model.onnx", tmp_path / f"model_{weights}.onnx"
    model = transformer_ish_model()
    onnx.save(model, source)
    flags = ["--zero-points"] if zero_points else []
    result = minimlc("quantize", "--weights", weights, "--block-size", "32", *flags, str(source), "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert "3 MatMuls -> MatMulNBits" in result.stderr
    quantized = onnx.load(target)
    assert [node.op_type for node in quantized.graph.node].count("MatMulNBits") == 3
    assert not {"w1", "w2", "head"} & {tensor.name for tensor in quantized.graph.initializer}

    x = np.random.default_rng(11).standard_normal((1, TOKENS, FEATURES)).astype(np.float32)
    expected = _ort(quantized, {"x": x})
    actual = InferenceSession(quantized).run(None, {"x": x})[0]
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-4 * scale)
    reference = _ort(model, {"x": x})
    assert np.abs(actual - reference).max() / float(np.abs(reference).max()) < LOGIT_TOLERANCE[weights]


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zero_points", [False, True], ids=["symmetric", "zero-points"])
def test_onnxruntime_reads_our_packing(bits: int, zero_points: bool) -> None:
    """ORT's MatMulNBits on `quantize_model`'s output computes `x @ dequantize_weight(...)` (K=70: a partial block,
    an odd number of blocks for the packed zero points)."""
    weight = np.random.default_rng(5).standard_normal((70, 24)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "one_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 70])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 24])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = quantize_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), bits, 32, zero_points)
    x = np.random.default_rng(6).standard_normal((3, 70)).astype(np.float32)
    expected = x.astype(np.float64) @ dequantize_weight(quantize_weight(weight, bits, 32, zero_points), bits, 70)
    np.testing.assert_allclose(_ort(model, {"x": x}), expected, rtol=1e-5, atol=1e-5)


def test_quantize_command_refuses_a_bad_block_size(tmp_path: Path) -> None:
    source = tmp_path / "model.onnx"
    onnx.save(transformer_ish_model(), source)
    result = minimlc("quantize", "--weights", "int4", "--block-size", "24", str(source), "-o", str(tmp_path / "q.onnx"))
    assert_one_line_error(result, "block_size=24 must be a power of two")


def test_quantize_command_accuracy_level(tmp_path: Path) -> None:
    """`--accuracy-level 4` writes the attribute on every MatMulNBits; minimlc then equals ORT's int8-activation
    kernels (1e-4 of the largest |logit|), which differ from the float-activation logits of the same weights."""
    source, level4 = tmp_path / "model.onnx", tmp_path / "int4_level4.onnx"
    onnx.save(transformer_ish_model(), source)
    result = minimlc("quantize", "--weights", "int4", "--accuracy-level", "4", str(source), "-o", str(level4))
    assert result.returncode == 0, result.stderr
    levels = [
        {attribute.name: attribute.i for attribute in node.attribute}.get("accuracy_level")
        for node in onnx.load(level4).graph.node
        if node.op_type == "MatMulNBits"
    ]
    assert levels == [4, 4, 4]
    x = np.random.default_rng(11).standard_normal((1, TOKENS, FEATURES)).astype(np.float32)
    expected = _ort(onnx.load(level4), {"x": x})
    actual = InferenceSession(onnx.load(level4)).run(None, {"x": x})[0]
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-4 * scale)
    plain = quantize_model(transformer_ish_model(), 4)
    assert np.abs(actual - _ort(plain, {"x": x})).max() > 1e-3 * scale


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dynamic", "--accuracy-level", "4"], "--accuracy-level applies to --weights only"),
        (["--weights", "int8", "--accuracy-level", "5"], "accuracy_level=5: one of 0, 1, 2, 3, 4"),
    ],
)
def test_quantize_command_refuses_a_bad_accuracy_level(flags: list[str], message: str, tmp_path: Path) -> None:
    source = tmp_path / "model.onnx"
    onnx.save(transformer_ish_model(), source)
    result = minimlc("quantize", *flags, str(source), "-o", str(tmp_path / "q.onnx"))
    assert_one_line_error(result, message)
