"""Text generation over a decoder ONNX model with a KV cache, compiled once: `Generator`.

    generator = Generator("llama.onnx", max_length=256, num_threads=1)
    ids = generator.generate([1, 2, 3], max_new_tokens=64)                   # greedy: the 64 new ids
    ids = generator.generate([1, 2, 3], do_sample=True, top_p=0.9, seed=0)   # sampled, reproducible by its seed
    for token in generator.stream([1, 2, 3], max_new_tokens=8): ...          # one id at a time
    generator.stats   # {'prefill_tokens_per_second': ..., 'decode_tokens_per_second': ..., ...}

The model (`signature.DecoderSignature`) is compiled once with run-time sequence and cache lengths, the caches'
lengths bounded by `max_length`; a generation starts from an empty cache. A model whose `input_ids` take a whole
prompt prefills it in one call; one that takes a token per call is fed the prompt token by token. Each step feeds
the ids chosen last, `position_ids` counting on and an all-ones `attention_mask` where the model takes them. Caches
the model grows by `Concat(past, new)` are read from buffers of `max_length` positions allocated once and written in
place (`cache_layout`, `kv_cache`); any other cache's present is fed back as the next past.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import onnx

from minimlc.driver.session import InferenceSession
from minimlc.frontend.onnx_declared import declared_inputs, declared_outputs
from minimlc.frontend.onnx_model_file import ReadModel, read_model
from minimlc.frontend.onnx_weight_quantization import quantize_model
from minimlc.generation.cache_layout import sequence_major_cache
from minimlc.generation.kv_cache import CacheBuffers, KVCache
from minimlc.generation.last_logits import last_position_logits
from minimlc.generation.sampling import SamplingOptions, choose
from minimlc.generation.signature import DecoderSignature

PRECISIONS = {"float32": None, "int8": 8, "int4": 4}
"""`Generator(precision=...)`: the model as it is, or its MatMul weights quantized (weight-only, blocks of 32 along K:
`frontend/onnx_weight_quantization.py`) to 8 or 4 bits, activations in float32."""


class Generator:
    def __init__(
        self,
        model: str | os.PathLike[str] | bytes | Any,
        *,
        max_length: int = 2048,
        num_threads: int | None = None,
        precision: str = "float32",
        accuracy_level: int | None = None,
        **session_options: Any,
    ):
        """Compile `model` (a path, bytes or an onnx.ModelProto of a decoder with a KV cache) for sequences of up to
        `max_length` tokens, prompt included, at `precision` (`PRECISIONS`: `int8` and `int4` quantize its MatMul
        weights first, with ONNX Runtime's `accuracy_level` on each MatMulNBits: 4 quantizes the activations to int8
        per block too, for integer dot products). `session_options` go to `InferenceSession` (`opt_level`, `cache`)."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r} is not supported: choose from {', '.join(PRECISIONS)}")
        if accuracy_level is not None and PRECISIONS[precision] is None:
            raise ValueError(f"accuracy_level is for the quantized precisions (int8, int4), not {precision!r}")
        self.precision = precision
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        read = read_model(model)
        graph = read.proto.graph
        self.max_length = max_length
        self.signature = DecoderSignature.of(declared_inputs(graph, {}), declared_outputs(graph))
        last = last_position_logits(read.proto, self.signature.logits)  # before quantizing: ranks of float ops
        self.last_logits_only = last is not None
        """Whether the model computes only the last position's logits (`last_logits`)."""
        read = read if last is None else ReadModel(last, read.external)
        layout = sequence_major_cache(_quantized(read, precision, accuracy_level), self.signature.cache)
        self.cache_in_place = sorted(layout.rewritten)
        """The caches read from and written into preallocated buffers (the others grow by the model's Concat)."""
        bounds = {symbol: max_length for symbol in self.signature.past_symbols}
        rewritten = ReadModel(layout.model, read.external)
        self.session = InferenceSession(rewritten, num_threads=num_threads, input_bounds=bounds, **session_options)
        self._buffers = CacheBuffers(max_length)
        dtypes = {info.name: info.dtype for info in self.session.get_inputs()}
        self._ids_dtype = dtypes["input_ids"]
        self._mask_dtype = dtypes.get(self.signature.attention_mask or "", np.dtype(np.int64))
        self._position_dtype = dtypes.get(self.signature.position_ids or "", np.dtype(np.int64))
        self._cache_dtypes = [dtypes[entry.past] for entry in self.signature.cache]
        names = [info.name for info in self.session.get_outputs()]
        self._logits_index = names.index(self.signature.logits)
        self._present_indices = [names.index(entry.present) for entry in self.signature.cache]
        self._stats: dict[str, float] = {}

    @property
    def stats(self) -> dict[str, float]:
        """The last generation's prompt and new token counts, prefill and decode seconds and tokens per second."""
        return dict(self._stats)

    def next_token_logits(self, prompt_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The logits after `prompt_ids` (one prompt, or a 2-D batch of one length), from an empty cache:
        `[batch, vocab]`."""
        prompt = _prompt(prompt_ids)
        self._check_length(prompt, 0)
        cache = KVCache(self.signature.cache, self._cache_dtypes, self.cache_in_place, self._buffers, prompt.shape[0])
        return self._prefill(prompt, cache)

    def generate(
        self,
        prompt_ids: Sequence[int] | np.ndarray,
        max_new_tokens: int = 64,
        do_sample: bool = False,
        top_k: int | None = None,
        top_p: float | None = None,
        temperature: float = 1.0,
        seed: int | None = None,
        eos_token_id: int | Sequence[int] | None = None,
    ) -> list[int] | list[list[int]]:
        """The new token ids after `prompt_ids` (a list for one prompt; a list per row for a 2-D batch of prompts
        of one length), up to `max_new_tokens` each, a row stopping after its `eos_token_id`."""
        batch = _prompt(prompt_ids).shape[0]
        steps = self._steps(prompt_ids, max_new_tokens, do_sample, top_k, top_p, temperature, seed, eos_token_id)
        rows = [list(tokens) for tokens in zip(*steps)] or [[] for _ in range(batch)]
        finished = _stopped(rows, eos_token_id)
        return finished if np.asarray(prompt_ids).ndim == 2 else finished[0]

    def stream(
        self,
        prompt_ids: Sequence[int],
        max_new_tokens: int = 64,
        do_sample: bool = False,
        top_k: int | None = None,
        top_p: float | None = None,
        temperature: float = 1.0,
        seed: int | None = None,
        eos_token_id: int | Sequence[int] | None = None,
    ) -> Iterator[int]:
        """The new ids of one prompt one by one, as each is chosen (`generate`'s arguments)."""
        if np.asarray(prompt_ids).ndim != 1:
            raise ValueError("stream takes one prompt (a 1-D sequence of ids); generate takes a batch")
        stops = _stop_ids(eos_token_id)
        for (token,) in self._steps(prompt_ids, max_new_tokens, do_sample, top_k, top_p, temperature, seed, stops):
            yield token
            if token in stops:
                return

    def _steps(
        self, prompt_ids, max_new_tokens, do_sample, top_k, top_p, temperature, seed, eos_token_id
    ) -> Iterator[tuple[int, ...]]:
        """Each step's chosen ids, one per row, until `max_new_tokens` or every row has stopped."""
        prompt = _prompt(prompt_ids)
        options = SamplingOptions(do_sample, top_k, top_p, temperature)
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be non-negative, got {max_new_tokens}")
        self._check_length(prompt, max_new_tokens)
        rng = np.random.default_rng(seed)
        stops = _stop_ids(eos_token_id)
        batch = prompt.shape[0]
        cache = KVCache(self.signature.cache, self._cache_dtypes, self.cache_in_place, self._buffers, batch)
        self._stats = {"prompt_tokens": prompt.shape[1], "new_tokens": 0}
        started = time.perf_counter()
        logits = self._prefill(prompt, cache)
        self._stats["prefill_seconds"] = time.perf_counter() - started
        length, done = prompt.shape[1], np.zeros(batch, bool)
        decode_started = time.perf_counter()
        for step in range(max_new_tokens):
            tokens = choose(logits, rng, options)
            self._stats["new_tokens"] = step + 1
            yield tuple(int(t) for t in tokens)
            done |= np.isin(tokens, list(stops))
            if step + 1 == max_new_tokens or done.all():
                break
            logits = self._call(tokens.reshape(batch, 1), length, cache)
            length += 1
        self._finish_stats(time.perf_counter() - decode_started)

    def _check_length(self, prompt: np.ndarray, new: int) -> None:
        if prompt.shape[1] + new > self.max_length:
            raise ValueError(
                f"the prompt's {prompt.shape[1]} tokens and {new} new ones exceed max_length {self.max_length}: "
                "make a Generator with a larger max_length"
            )

    def _prefill(self, prompt: np.ndarray, cache: KVCache) -> np.ndarray:
        if self.signature.whole_prompt:
            return self._call(prompt, 0, cache)
        logits = None
        for position in range(prompt.shape[1]):
            logits = self._call(prompt[:, position : position + 1], position, cache)
        assert logits is not None
        return logits

    def _call(self, ids: np.ndarray, past: int, cache: KVCache) -> np.ndarray:
        """Run the model on `ids` after `past` cached positions, `cache` taking the presents: the last position's
        logits."""
        batch, count = ids.shape
        feed: dict[str, np.ndarray] = {self.signature.input_ids: ids.astype(self._ids_dtype, copy=False)}
        if self.signature.attention_mask is not None:
            feed[self.signature.attention_mask] = np.ones((batch, past + count), self._mask_dtype)
        if self.signature.position_ids is not None:
            positions = np.arange(past, past + count, dtype=self._position_dtype)
            feed[self.signature.position_ids] = np.broadcast_to(positions, (batch, count))
        feed.update(cache.feeds(past))
        outputs = self.session.run(None, feed)
        cache.update([outputs[i] for i in self._present_indices], past)
        return outputs[self._logits_index][:, -1, :]

    def _finish_stats(self, decode_seconds: float) -> None:
        stats = self._stats
        stats["decode_seconds"] = decode_seconds
        stats["prefill_tokens_per_second"] = stats["prompt_tokens"] / max(stats["prefill_seconds"], 1e-9)
        decoded = stats["new_tokens"] - 1  # the first new token comes from the prefill's logits
        stats["decode_tokens_per_second"] = decoded / decode_seconds if decoded > 0 and decode_seconds > 0 else 0.0


def _quantized(read: ReadModel, precision: str, accuracy_level: int | None) -> onnx.ModelProto:
    """The model at `precision`: its MatMul weights quantized for int8 and int4 (none to quantize: ValueError)."""
    bits = PRECISIONS[precision]
    if bits is None:
        return read.proto
    quantized = quantize_model(read.proto, bits, read_array=read.external.array, accuracy_level=accuracy_level)
    if sum(node.op_type == "MatMul" for node in quantized.graph.node) == sum(
        node.op_type == "MatMul" for node in read.proto.graph.node
    ):
        raise ValueError(f"precision {precision!r}: the model has no MatMul with a float32 weight to quantize")
    return quantized


def _prompt(prompt_ids: Sequence[int] | np.ndarray) -> np.ndarray:
    prompt = np.asarray(prompt_ids)
    if prompt.ndim == 1:
        prompt = prompt.reshape(1, -1)
    if prompt.ndim != 2 or prompt.shape[1] == 0 or prompt.shape[0] == 0:
        raise ValueError(f"prompt_ids must be a non-empty sequence of ids (or a 2-D batch), got shape {prompt.shape}")
    if not np.issubdtype(prompt.dtype, np.integer):
        raise ValueError(f"prompt_ids must be integers, got {prompt.dtype}")
    return prompt.astype(np.int64)


def _stop_ids(eos_token_id: int | Sequence[int] | None) -> set[int]:
    if eos_token_id is None:
        return set()
    return {int(eos_token_id)} if isinstance(eos_token_id, int | np.integer) else {int(t) for t in eos_token_id}


def _stopped(rows: list[list[int]], eos_token_id: int | Sequence[int] | None) -> list[list[int]]:
    """Each row up to and including its first stop id."""
    stops = _stop_ids(eos_token_id)
    cut = []
    for row in rows:
        ends = [n for n, token in enumerate(row) if token in stops]
        cut.append(row[: ends[0] + 1] if ends else row)
    return cut
