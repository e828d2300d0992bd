"""A decoder whose MatMulNBits carry `accuracy_level=4` (A quantized to int8 per block, integer block dot products)
given to `Generator` as it is: compiled once with run-time rows (the prompt's rows, then one), its greedy tokens
equal ONNX Runtime's CompInt8 kernels' on the same file, and its logits after the prompt are ORT's within 1e-4 of
the largest, further from those of float activations over the same weights (the tokens alone do not tell them
apart on this model). `Generator(precision="int4", accuracy_level=4)` quantizes a float model the same way."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from llama_cache import LlamaDims, greedy_with_cache, llama_with_cache

from minimlc import Generator
from minimlc.frontend.onnx_weight_quantization import quantize_model

DIMS = LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=80, vocab=128, layers=1)  # 80: A padded along K to whole blocks
PROMPT = [3, 14, 15, 92, 65]


def onnx_runtime_greedy(model, steps: int) -> tuple[list[int], np.ndarray]:
    """ORT's greedy tokens and its logits after the prompt."""
    oracle = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    logits: list[np.ndarray] = []

    def run(feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        outputs = oracle.run(None, feed)
        logits.append(outputs[0][0, -1])
        return outputs

    return greedy_with_cache(run, DIMS, PROMPT, steps)[0], logits[0]


@pytest.mark.parametrize(("bits", "quantized_by"), [(8, "quantize_model"), (4, "quantize_model"), (4, "Generator")])
def test_int8_activation_generation_equals_onnx_runtime(bits: int, quantized_by: str) -> None:
    float_model = llama_with_cache(DIMS)
    model = quantize_model(float_model, bits, accuracy_level=4)
    if quantized_by == "Generator":
        generator = Generator(float_model, max_length=64, num_threads=1, precision=f"int{bits}", accuracy_level=4)
    else:
        generator = Generator(model, max_length=64, num_threads=1)
    tokens, logits = onnx_runtime_greedy(model, 16)
    assert generator.generate(PROMPT, max_new_tokens=16) == tokens
    assert generator.session.stats["compiles"] == 1
    assert "symbolic_fallback" not in generator.session.stats
    ours = generator.next_token_logits(PROMPT).reshape(-1)
    scale = float(np.abs(logits).max())
    np.testing.assert_allclose(ours, logits, rtol=0, atol=1e-4 * scale)
    float_activations = onnx_runtime_greedy(quantize_model(float_model, bits), 1)[1]
    assert np.abs(ours - float_activations).max() > 1e-3 * scale


def test_accuracy_level_needs_a_quantized_precision() -> None:
    with pytest.raises(ValueError, match="accuracy_level is for the quantized precisions"):
        Generator(llama_with_cache(DIMS), max_length=64, accuracy_level=4)
