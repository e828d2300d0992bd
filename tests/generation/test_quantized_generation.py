"""`Generator(model, precision="int8" | "int4")`: the MatMul weights quantized (weight-only MatMulNBits) and the
model compiled once with run-time rows: greedy tokens equal ONNX Runtime's over the same quantized model."""

from __future__ import annotations

import onnx
import onnxruntime as ort
import pytest
from llama_cache import LlamaDims, greedy_with_cache, llama_with_cache

from minimlc import Generator
from minimlc.frontend.onnx_weight_quantization import quantize_model

DIMS = LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=80, vocab=128, layers=1)  # 80: A padded along K to whole blocks
PROMPT = [3, 14, 15, 92, 65]


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return llama_with_cache(DIMS)


def onnx_runtime_greedy(model: onnx.ModelProto, prompt: list[int], steps: int) -> list[int]:
    """The greedy loop written out over ONNX Runtime: prefill the prompt, then one token per step."""
    oracle = ort.InferenceSession(model.SerializeToString())
    return greedy_with_cache(lambda feed: oracle.run(None, feed), DIMS, prompt, steps)[0]


@pytest.mark.parametrize(("precision", "bits"), [("int8", 8), ("int4", 4)])
def test_quantized_generation_equals_onnx_runtime_on_the_quantized_model(model, precision, bits):
    generator = Generator(model, max_length=64, num_threads=1, precision=precision)
    ours = generator.generate(PROMPT, max_new_tokens=24)
    assert ours == onnx_runtime_greedy(quantize_model(model, bits), PROMPT, 24)
    assert generator.session.stats["compiles"] == 1
    assert "symbolic_fallback" not in generator.session.stats
    assert generator.cache_in_place  # the cache is still read in place


def test_a_model_without_float_matmul_weights_has_nothing_to_quantize(model):
    quantized = quantize_model(model, 8)
    with pytest.raises(ValueError, match="precision 'int4': the model has no MatMul with a float32 weight"):
        Generator(quantized, precision="int4")
