"""The last-position rewrite (`generation/last_logits.py`): the rewritten model gives the exporter's logits of the
last position and its presents (ONNX Runtime runs both, float and 4-bit weights), computing the last layer after
its attention for that position only; `Generator` compiles it once and generates ONNX Runtime's tokens; a value
something else reads ends the tail there, and logits made any other way (after the projection, or by a product of
two activations) leave the model as it is."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from llama_cache import LlamaDims, cache_names, greedy_with_cache, llama_with_cache
from onnx import helper

from minimlc import Generator
from minimlc.frontend.onnx_weight_quantization import quantize_model
from minimlc.generation.last_logits import last_position_logits

DIMS = LlamaDims(hidden=32, heads=4, kv_heads=2, ffn=64, vocab=96, layers=2)


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return llama_with_cache(DIMS)


def gathered(model: onnx.ModelProto) -> set[str]:
    """The values the rewrite takes at the last position."""
    return {node.input[0] for node in model.graph.node if node.op_type == "Gather" and node.output[0].endswith(".last")}


def run_both(original: onnx.ModelProto, rewritten: onnx.ModelProto, past: int, new: int):
    rng = np.random.default_rng(0)
    feed = {
        "input_ids": rng.integers(0, DIMS.vocab, (2, new)),
        "attention_mask": np.ones((2, past + new), np.int64),
        "position_ids": np.tile(np.arange(past, past + new), (2, 1)),
    }
    feed.update({name: rng.standard_normal((2, 2, past, 8)).astype(np.float32) for name, _ in cache_names(DIMS.layers)})
    return (ort.InferenceSession(m.SerializeToString()).run(None, feed) for m in (original, rewritten))


@pytest.mark.parametrize("bits", [None, 4])
def test_the_rewritten_model_gives_the_last_position_s_logits_and_the_same_presents(model, bits):
    original = model if bits is None else quantize_model(model, bits)
    rewritten = last_position_logits(original, "logits")
    assert rewritten is not None
    onnx.checker.check_model(rewritten)
    logits = next(info for info in rewritten.graph.output if info.name == "logits")
    assert [d.dim_param or d.dim_value for d in logits.type.tensor_type.shape.dim] == ["batch", 1, DIMS.vocab]
    # The last layer's tail after attention; past a MatMulNBits, shape inference gives no ranks: the head alone.
    assert gathered(rewritten) == ({"layer1.attn.merged", "layer0.res2"} if bits is None else {"norm"})
    for past, new in ((0, 5), (4, 1)):
        before, after = run_both(original, rewritten, past, new)
        assert after[0].shape == (2, 1, DIMS.vocab)
        np.testing.assert_array_equal(after[0], before[0][:, -1:])
        for present_before, present_after in zip(before[1:], after[1:]):
            np.testing.assert_array_equal(present_after, present_before)


def test_the_generator_projects_one_position_compiles_once_and_generates_onnx_runtime_s_tokens(model):
    generator = Generator(model, max_length=40, num_threads=1)
    assert generator.last_logits_only
    prompt = [3, 91, 14, 15, 9, 2, 6, 53]
    oracle = ort.InferenceSession(model.SerializeToString())
    expected, _ = greedy_with_cache(lambda feed: oracle.run(None, feed), DIMS, prompt, 12)
    assert generator.generate(prompt, max_new_tokens=12) == expected
    assert generator.session.stats["compiles"] == 1


def test_a_value_the_model_also_outputs_ends_the_tail(model):
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    edited.graph.output.append(helper.make_tensor_value_info("layer1.res1", onnx.TensorProto.FLOAT, None))
    rewritten = last_position_logits(edited, "logits")
    assert gathered(rewritten) == {"layer1.res1"}
    before, after = run_both(edited, rewritten, 2, 3)
    np.testing.assert_array_equal(after[0], before[0][:, -1:])
    np.testing.assert_array_equal(after[-1], before[-1])  # layer1.res1: every position


def test_logits_not_made_by_a_matmul_of_a_weight_are_left_as_they_are(model):
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    head = next(node for node in edited.graph.node if node.output[0] == "logits")
    head.output[0] = "logits.projected"
    edited.graph.node.append(helper.make_node("Identity", ["logits.projected"], ["logits"]))
    assert last_position_logits(edited, "logits") is None
    activations = onnx.ModelProto()
    activations.CopyFrom(model)
    head = next(node for node in activations.graph.node if node.output[0] == "logits")
    weight = head.input[1]
    activations.graph.node.insert(0, helper.make_node("Identity", [weight], [f"{weight}.copy"]))
    head.input[1] = f"{weight}.copy"
    assert last_position_logits(activations, "logits") is None
