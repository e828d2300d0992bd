"""LlamaForCausalLM with a KV cache, as Optimum's exporter writes it for text generation (`decoder_model_merged`):
one model serves the prompt's prefill (many new tokens, an empty cache) and every decode step (one new token).

    model = llama_with_cache(LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, layers=2))
    # inputs:  input_ids [batch, sequence] int64, attention_mask [batch, past + sequence] int64,
    #          position_ids [batch, sequence] int64,
    #          past_key_values.<l>.key / .value [batch, kv_heads, past, head_size] float32 per layer
    # outputs: logits [batch, sequence, vocab],
    #          present.<l>.key / .value [batch, kv_heads, past + sequence, head_size] per layer

Every shape is computed from the inputs' own at run time. The additive mask is Hugging Face's
`_prepare_4d_causal_attention_mask_with_cache_position`: over key positions Range(0, past + sequence), a query at
cache position `past + i` sees keys up to itself, and keys the attention mask pads are hidden (float32's min).
Grouped-query attention, rotary embeddings gathered at `position_ids`, RMSNorm and a SiLU-gated MLP as in
`llama_decode.py`; the new keys and values are concatenated to the cache (the presents) before attention.
`greedy_with_cache(run, dims, prompt, steps)` is the greedy loop written out around any session's `run`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import onnx
from dynamic_decoders import MIN, repeat_kv, scalar_dim, sdpa
from dynamic_transformers import shape_dims
from llama_decode import LlamaDims, _mlp, _project, _rms_norm, _rope_tables, _rotate
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from transformer_models import ints, scalar

__all__ = ["LlamaDims", "cache_names", "greedy_with_cache", "llama_with_cache"]


def cache_names(layers: int) -> list[tuple[str, str]]:
    """(past input, present output) name pairs, layer by layer, key before value."""
    return [
        (f"past_key_values.{layer}.{kind}", f"present.{layer}.{kind}")
        for layer in range(layers)
        for kind in ("key", "value")
    ]


def _cache_mask(b: ModelBuilder) -> str:
    """[batch, 1, sequence, past + sequence]: 0 where a query may attend, float32's min elsewhere."""
    past = scalar_dim(b, "past_key_values.0.key", 2, "mask.past")
    end = b.node("Add", [past, scalar_dim(b, "input_ids", 1, "mask.sequence")], "mask.end")
    one = b.constant("mask.one", np.array(1))
    cache_position = b.node("Range", [past, end, one], "mask.cache_position")
    total = scalar_dim(b, "attention_mask", 1, "mask.total")
    keys = b.node("Range", [b.constant("mask.zero", np.array(0)), total, one], "mask.keys")
    column = b.node("Reshape", [cache_position, b.constant("mask.column", ints(-1, 1))], "mask.query_column")
    later = b.node("Greater", [keys, column], "mask.later")
    causal = b.node("Where", [later, b.constant("mask.min", scalar(MIN)), b.constant("mask.fzero", scalar(0.0))],
                    "mask.causal")
    causal = b.node("Unsqueeze", [causal, b.constant("mask.causal_axes", ints(0, 1))], "mask.causal_4d")
    padded = b.node("Equal", ["attention_mask", b.constant("mask.izero", np.array(0))], "mask.padded")
    padded = b.node("Unsqueeze", [padded, b.constant("mask.padding_axes", ints(1, 2))], "mask.padded_4d")
    return b.node("Where", [padded, b.constant("mask.pad_min", scalar(MIN)), causal], "mask.bias")


def _heads(b: ModelBuilder, x: str, size: int, name: str) -> str:
    """[batch, sequence, heads * size] -> [batch, heads, sequence, size] (view(*input_shape, -1, size), transpose)."""
    shape = b.node("Concat", [shape_dims(b, x, 0, 2, f"{name}.leading"), b.constant(f"{name}.rest", ints(-1, size))],
                   f"{name}.shape", axis=0)
    return b.node("Transpose", [b.node("Reshape", [x, shape], f"{name}.split")], f"{name}.heads", perm=[0, 2, 1, 3])


def _attention(b: ModelBuilder, x: str, cos: str, sin: str, mask: str, layer: int, dims: LlamaDims) -> str:
    name, size, kv_width = f"layer{layer}.attn", dims.head_size, dims.kv_heads * dims.head_size
    q = _heads(b, _project(b, x, dims.hidden, dims.hidden, f"{name}.q"), size, f"{name}.q")
    k = _heads(b, _project(b, x, dims.hidden, kv_width, f"{name}.k"), size, f"{name}.k")
    v = _heads(b, _project(b, x, dims.hidden, kv_width, f"{name}.v"), size, f"{name}.v")
    q, k = _rotate(b, q, cos, sin, size, f"{name}.q_rope"), _rotate(b, k, cos, sin, size, f"{name}.k_rope")
    keys = b.node("Concat", [f"past_key_values.{layer}.key", k], f"present.{layer}.key", axis=2)
    values = b.node("Concat", [f"past_key_values.{layer}.value", v], f"present.{layer}.value", axis=2)
    k, v = repeat_kv(b, keys, dims, f"{name}.rk"), repeat_kv(b, values, dims, f"{name}.rv")
    context = b.node("Transpose", [sdpa(b, q, k, v, mask, size, name)], f"{name}.merge", perm=[0, 2, 1, 3])
    shape = b.node("Concat", [shape_dims(b, x, 0, 2, f"{name}.merge_leading"), b.constant(f"{name}.all", ints(-1))],
                   f"{name}.merge_shape", axis=0)
    return _project(b, b.node("Reshape", [context, shape], f"{name}.merged"), dims.hidden, dims.hidden, f"{name}.o")


def llama_with_cache(dims: LlamaDims, seed: int = 29) -> onnx.ModelProto:
    """The model of the module docstring, `dims.layers` layers with seeded random weights."""
    b = ModelBuilder(seed=seed)
    x = b.node("Gather", [b.weight("embed.weight", (dims.vocab, dims.hidden), 0.5), "input_ids"], "embed")
    cos, sin = _rope_tables(b, dims)
    mask = _cache_mask(b)
    for layer in range(dims.layers):
        attended = _attention(b, _rms_norm(b, x, dims.hidden, f"layer{layer}.norm1"), cos, sin, mask, layer, dims)
        x = b.node("Add", [x, attended], f"layer{layer}.res1")
        x = b.node("Add", [x, _mlp(b, _rms_norm(b, x, dims.hidden, f"layer{layer}.norm2"), layer, dims)],
                   f"layer{layer}.res2")
    _project(b, _rms_norm(b, x, dims.hidden, "norm"), dims.hidden, dims.vocab, "logits")
    ids = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ids),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "past_sequence + sequence"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ids),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", dims.vocab])]
    for past, present in cache_names(dims.layers):
        inputs.append(helper.make_tensor_value_info(
            past, TensorProto.FLOAT, ["batch", dims.kv_heads, "past_sequence", dims.head_size]))
        outputs.append(helper.make_tensor_value_info(
            present, TensorProto.FLOAT, ["batch", dims.kv_heads, "past_sequence + sequence", dims.head_size]))
    graph = helper.make_graph(b.nodes, "llama_with_cache", inputs, outputs, b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def greedy_with_cache(
    run: Callable[[dict[str, np.ndarray]], list[np.ndarray]], dims: LlamaDims, prompt: list[int], steps: int
) -> tuple[list[int], list[float]]:
    """The greedy loop a caller writes around a session's `run` (ONNX Runtime's, say) over `llama_with_cache`: the
    prompt in one call from an empty cache, then one token per call, each call's presents fed back as pasts. Returns
    the `steps` chosen ids and each call's seconds."""
    pasts = [past for past, _ in cache_names(dims.layers)]
    cache = {name: np.zeros((1, dims.kv_heads, 0, dims.head_size), np.float32) for name in pasts}
    ids, length, tokens, seconds = np.array([prompt], np.int64), 0, [], []
    for _ in range(steps):
        count = ids.shape[1]
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones((1, length + count), np.int64),
            "position_ids": np.arange(length, length + count, dtype=np.int64).reshape(1, -1),
        }
        start = time.perf_counter()
        outputs = run({**feed, **cache})
        seconds.append(time.perf_counter() - start)
        tokens.append(int(outputs[0][0, -1].argmax()))
        cache = dict(zip(pasts, outputs[1:]))
        ids, length = np.array([[tokens[-1]]], np.int64), length + count
    return tokens, seconds
