"""The sequence-major cache rewrite (`generation/cache_layout.py`) and the in-place cache it gives `Generator`:
the rewritten model computes what the exporter's model does (ONNX Runtime runs both), and generation over
preallocated buffers gives the tokens of generation over the model's own presents."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from llama_cache import LlamaDims, cache_names, llama_with_cache
from onnx import helper

from minimlc import Generator
from minimlc.frontend.onnx_declared import declared_inputs, declared_outputs
from minimlc.generation.cache_layout import sequence_major_cache
from minimlc.generation.signature import DecoderSignature

DIMS = LlamaDims(hidden=32, heads=4, kv_heads=2, ffn=64, vocab=96, layers=2)


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return llama_with_cache(DIMS)


def signature_of(model: onnx.ModelProto) -> DecoderSignature:
    return DecoderSignature.of(declared_inputs(model.graph, {}), declared_outputs(model.graph))


def test_the_rewritten_model_computes_the_exporter_s_from_sequence_major_caches(model):
    layout = sequence_major_cache(model, signature_of(model).cache)
    assert layout.rewritten == {past for past, _ in cache_names(DIMS.layers)}
    onnx.checker.check_model(layout.model)
    declared = {
        info.name: [d.dim_param or d.dim_value for d in info.type.tensor_type.shape.dim]
        for info in [*layout.model.graph.input, *layout.model.graph.output]
    }
    assert declared["past_key_values.0.key"] == ["past_sequence", "batch", 2, 8]
    assert declared["present.1.value"] == [0, "batch", 2, 8]  # the new positions: unnamed
    rng = np.random.default_rng(0)
    past, new = 5, 3
    feed = {
        "input_ids": rng.integers(0, DIMS.vocab, (2, new)),
        "attention_mask": np.ones((2, past + new), np.int64),
        "position_ids": np.tile(np.arange(past, past + new), (2, 1)),
    }
    caches = {name: rng.standard_normal((2, 2, past, 8)).astype(np.float32) for name, _ in cache_names(DIMS.layers)}
    original = ort.InferenceSession(model.SerializeToString()).run(None, {**feed, **caches})
    sequence_major = {name: np.ascontiguousarray(cache.transpose(2, 0, 1, 3)) for name, cache in caches.items()}
    rewritten = ort.InferenceSession(layout.model.SerializeToString()).run(None, {**feed, **sequence_major})
    np.testing.assert_array_equal(rewritten[0], original[0])
    for present, new_positions in zip(original[1:], rewritten[1:]):
        np.testing.assert_array_equal(new_positions, present[:, :, past:].transpose(2, 0, 1, 3))


def test_a_present_that_is_not_a_concat_of_the_past_is_left_as_it_is(model):
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    concat = next(node for node in edited.graph.node if node.output[0] == "present.0.key")
    concat.output[0] = "present.0.key.concat"
    edited.graph.node.append(helper.make_node("Identity", ["present.0.key.concat"], ["present.0.key"]))
    layout = sequence_major_cache(edited, signature_of(edited).cache)
    assert "past_key_values.0.key" not in layout.rewritten
    assert len(layout.rewritten) == 2 * DIMS.layers - 1


def test_generation_over_buffers_allocated_once_equals_generation_over_presents(model):
    in_place = Generator(model, max_length=48, num_threads=1)
    assert len(in_place.cache_in_place) == 2 * DIMS.layers
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    for node in list(edited.graph.node):  # every present through an Identity: nothing rewritable
        if node.output[0].startswith("present."):
            name = node.output[0]
            node.output[0] = f"{name}.concat"
            for user in edited.graph.node:
                user.input[:] = [f"{name}.concat" if i == name else i for i in user.input]
            edited.graph.node.append(helper.make_node("Identity", [f"{name}.concat"], [name]))
    functional = Generator(edited, max_length=48, num_threads=1)
    assert functional.cache_in_place == []
    prompt = [4, 8, 15, 16, 23, 42]
    first = in_place.generate(prompt, max_new_tokens=20)
    buffers = dict(in_place._buffers.current)
    assert first == functional.generate(prompt, max_new_tokens=20)
    assert in_place.generate(prompt[:2], max_new_tokens=30) == functional.generate(prompt[:2], max_new_tokens=30)
    again = in_place._buffers.current
    assert all(again[name] is buffer for name, buffer in buffers.items())  # the same buffers, written again
    assert buffers["past_key_values.0.key"].shape == (48, 1, 2, 8)
