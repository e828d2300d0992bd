"""`minimlc.Generator` against ONNX Runtime running the same decoder step by step: LLaMA-style models with a KV
cache, one taking whole prompts (`examples/llama_cache.py`, Optimum's names) and one a token per call
(`examples/llama_decode.py`), each compiled once for every prompt and cache length."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from llama_cache import LlamaDims, cache_names, greedy_with_cache, llama_with_cache
from llama_decode import llama_decode_step

from minimlc import Generator
from minimlc.generation import NotADecoderError

DIMS = LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, layers=2)
PROMPT = [5, 17, 42, 9, 200, 3]


@pytest.fixture(scope="module")
def prefill_model() -> onnx.ModelProto:
    return llama_with_cache(DIMS)


@pytest.fixture(scope="module")
def generator(prefill_model) -> Generator:
    return Generator(prefill_model, max_length=128, num_threads=1)


def onnx_runtime_greedy(model: onnx.ModelProto, prompt: list[int], steps: int) -> list[int]:
    """The greedy loop written out over ONNX Runtime: prefill the prompt, then one token per step."""
    oracle = ort.InferenceSession(model.SerializeToString())
    return greedy_with_cache(lambda feed: oracle.run(None, feed), DIMS, prompt, steps)[0]


def test_64_greedy_tokens_equal_onnx_runtime_from_one_compile(prefill_model, generator):
    ours = generator.generate(PROMPT, max_new_tokens=64)
    assert ours == onnx_runtime_greedy(prefill_model, PROMPT, 64)
    assert len(set(ours)) > 8  # the loop moves between tokens, so equal sequences mean something
    assert generator.generate([7, 7], max_new_tokens=3) == onnx_runtime_greedy(prefill_model, [7, 7], 3)
    assert generator.session.stats["compiles"] == 1
    assert "symbolic_fallback" not in generator.session.stats
    assert generator.stats["prompt_tokens"] == 2
    assert generator.stats["new_tokens"] == 3


def test_a_model_taking_one_token_per_call_is_fed_the_prompt_token_by_token(prefill_model, generator):
    """The decode-step model has other weights: compare it with its own ONNX Runtime loop, token by token."""
    model = llama_decode_step(DIMS)
    stepped = Generator(model, max_length=64, num_threads=1)
    assert not stepped.signature.whole_prompt
    oracle = ort.InferenceSession(model.SerializeToString())
    cache = {
        f"past_{kind}_{layer}": np.zeros((1, DIMS.kv_heads, 0, DIMS.head_size), np.float32)
        for layer in range(DIMS.layers)
        for kind in ("key", "value")
    }
    tokens, fed = [], list(PROMPT)
    for position in range(len(PROMPT) + 15):
        outputs = oracle.run(
            None,
            {
                "input_ids": np.array([[fed[position]]], np.int64),
                "position_ids": np.array([[position]], np.int64),
                **cache,
            },
        )
        cache = dict(zip(cache, outputs[1:]))
        if position >= len(PROMPT) - 1:
            tokens.append(int(outputs[0][0, -1].argmax()))
            fed.append(tokens[-1])
    assert stepped.generate(PROMPT, max_new_tokens=16) == tokens
    assert stepped.session.stats["compiles"] == 1


def test_sampling_is_reproducible_with_a_seed_and_top_k_1_is_greedy(generator):
    sampled = generator.generate(PROMPT, max_new_tokens=16, do_sample=True, top_p=0.95, temperature=1.5, seed=7)
    assert sampled == generator.generate(PROMPT, max_new_tokens=16, do_sample=True, top_p=0.95, temperature=1.5, seed=7)
    assert sampled != generator.generate(PROMPT, max_new_tokens=16, do_sample=True, top_p=0.95, temperature=1.5, seed=8)
    assert sampled != generator.generate(PROMPT, max_new_tokens=16)
    greedy = generator.generate(PROMPT, max_new_tokens=16)
    assert generator.generate(PROMPT, max_new_tokens=16, do_sample=True, top_k=1, seed=1) == greedy


def test_stream_yields_generate_s_ids_and_both_stop_after_the_eos_id(generator):
    greedy = generator.generate(PROMPT, max_new_tokens=12)
    assert list(generator.stream(PROMPT, max_new_tokens=12)) == greedy
    eos = greedy[4]
    stopped = greedy[: greedy.index(eos) + 1]
    assert generator.generate(PROMPT, max_new_tokens=12, eos_token_id=eos) == stopped
    assert list(generator.stream(PROMPT, max_new_tokens=12, eos_token_id=[eos, 10_000])) == stopped
    assert generator.stats["new_tokens"] == len(stopped)


def test_a_batch_of_prompts_gives_each_row_its_own_sequence(generator):
    rows = generator.generate([PROMPT, PROMPT[::-1]], max_new_tokens=6)
    assert rows == [generator.generate(PROMPT, max_new_tokens=6), generator.generate(PROMPT[::-1], max_new_tokens=6)]


def test_next_token_logits_are_onnx_runtime_s_after_the_prompt(prefill_model, generator):
    oracle = ort.InferenceSession(prefill_model.SerializeToString())
    empty = {past: np.zeros((2, DIMS.kv_heads, 0, DIMS.head_size), np.float32) for past, _ in cache_names(DIMS.layers)}
    prompts = np.array([PROMPT, PROMPT[::-1]], np.int64)
    feed = {
        "input_ids": prompts,
        "attention_mask": np.ones_like(prompts),
        "position_ids": np.tile(np.arange(len(PROMPT)), (2, 1)),
    }
    expected = oracle.run(None, {**feed, **empty})[0][:, -1]
    np.testing.assert_allclose(generator.next_token_logits(prompts), expected, rtol=1e-4, atol=1e-5)


def test_stats_give_prefill_and_decode_tokens_per_second(generator):
    generator.generate(PROMPT, max_new_tokens=10)
    stats = generator.stats
    assert stats["prompt_tokens"] == len(PROMPT)
    assert stats["new_tokens"] == 10
    assert stats["prefill_tokens_per_second"] > 0
    assert stats["decode_tokens_per_second"] > 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda g: g.generate(list(range(100)), max_new_tokens=29),
            r"100 tokens and 29 new ones exceed max_length 128",
        ),
        (lambda g: g.generate([], max_new_tokens=2), "non-empty"),
        (lambda g: g.next_token_logits(list(range(129))), r"129 tokens and 0 new ones exceed max_length 128"),
        (lambda g: g.generate([1.5, 2.0]), "must be integers"),
        (lambda g: g.generate([1], do_sample=True, temperature=0), "temperature must be positive"),
        (lambda g: g.generate([1], do_sample=True, top_p=1.5), r"top_p must be in \(0, 1\]"),
        (lambda g: list(g.stream([[1, 2]])), "stream takes one prompt"),
    ],
)
def test_bad_arguments_are_refused(generator, call, message):
    with pytest.raises(ValueError, match=message):
        call(generator)


def test_a_model_without_a_cache_is_not_a_decoder():
    with pytest.raises(NotADecoderError, match="no input 'input_ids'"):
        Generator("examples/mlp.onnx")


def test_an_unsupported_precision_is_refused(prefill_model):
    with pytest.raises(ValueError, match="precision 'int3' is not supported"):
        Generator(prefill_model, precision="int3")


def test_memory_stays_flat_over_1000_generated_tokens():
    """A soak: three 1,000-token generations; the resident set after the last is within 8 MiB of after the first
    (each step's presents are dropped when the next are made; nothing accumulates across generations)."""
    long_dims = LlamaDims(hidden=32, heads=2, kv_heads=1, ffn=64, vocab=64, layers=1, max_positions=1024)
    soak = Generator(llama_with_cache(long_dims), max_length=1024, num_threads=1)

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096

    soak.generate([1, 2, 3], max_new_tokens=1000)
    first = resident()
    for seed in range(2):
        assert len(soak.generate([1, 2, 3], max_new_tokens=1000, do_sample=True, seed=seed)) == 1000
    assert resident() - first < 8 << 20
