"""A LLaMA-style decode step with a KV cache, as the dynamo exporter writes it: symbolic `batch` and `past`
dimensions, every shape computed from the inputs' own (Shape -> Gather -> Concat -> Reshape), grouped-query
attention (key/value heads repeated with Expand), rotary position embeddings, RMSNorm and a SiLU-gated MLP.

    model = llama_decode_step(LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, layers=2))
    # inputs:  input_ids [batch, 1] int64, position_ids [batch, 1] int64,
    #          past_key_<l>, past_value_<l> [batch, kv_heads, past, head_size] float32 per layer
    # outputs: logits [batch, 1, vocab], present_key_<l>, present_value_<l> [batch, kv_heads, past + 1, head_size]

`greedy_decode(run, model_dims, steps, past)` runs the loop a caller writes: each step feeds the previous step's
presents back as pasts and the argmax token as the next input, so the cache grows by one position per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from transformer_models import ints, scalar


@dataclass(frozen=True)
class LlamaDims:
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    layers: int
    max_positions: int = 256

    @property
    def head_size(self) -> int:
        return self.hidden // self.heads


def _shape(b: ModelBuilder, x: str, start: int, end: int, name: str) -> str:
    return b.node("Shape", [x], name, start=start, end=end)


def _rms_norm(b: ModelBuilder, x: str, d: int, name: str) -> str:
    """x / sqrt(mean(x^2) + eps) * weight, as LlamaRMSNorm exports."""
    squared = b.node("Pow", [x, b.constant(f"{name}.two", scalar(2.0))], f"{name}.pow")
    mean = b.node("ReduceMean", [squared, b.constant(f"{name}.axes", ints(-1))], f"{name}.mean", keepdims=1)
    shifted = b.node("Add", [mean, b.constant(f"{name}.eps", scalar(1e-6))], f"{name}.eps_add")
    inverse = b.node("Reciprocal", [b.node("Sqrt", [shifted], f"{name}.sqrt")], f"{name}.rsqrt")
    weight = b.constant(f"{name}.weight", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
    return b.node("Mul", [b.node("Mul", [x, inverse], f"{name}.normed"), weight], name)


def _project(b: ModelBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    return b.node("MatMul", [x, b.weight(f"{name}.weight_t", (d_in, d_out), 1.0 / np.sqrt(d_in))], name)


def _split_heads(b: ModelBuilder, x: str, heads: int, size: int, name: str) -> str:
    """[batch, 1, heads * size] -> [batch, heads, 1, size], the shape computed from x's."""
    leading = _shape(b, x, 0, 2, f"{name}.leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.dims", ints(heads, size))], f"{name}.shape", axis=0)
    return b.node("Transpose", [b.node("Reshape", [x, shape], f"{name}.split")], f"{name}.heads", perm=[0, 2, 1, 3])


def _rotate(b: ModelBuilder, x: str, cos: str, sin: str, size: int, name: str) -> str:
    """x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x[..., half:], x[..., :half])."""
    half, end = b.constant(f"{name}.half", ints(size // 2)), b.constant(f"{name}.end", ints(size))
    start, axis = b.constant(f"{name}.start", ints(0)), b.constant(f"{name}.axis", ints(-1))
    first = b.node("Slice", [x, start, half, axis], f"{name}.first")
    second = b.node("Slice", [x, half, end, axis], f"{name}.second")
    rotated = b.node("Concat", [b.node("Neg", [second], f"{name}.neg"), first], f"{name}.rotated", axis=-1)
    return b.node(
        "Add",
        [b.node("Mul", [x, cos], f"{name}.cos_mul"), b.node("Mul", [rotated, sin], f"{name}.sin_mul")],
        name,
    )


def _repeat_kv(b: ModelBuilder, x: str, dims: LlamaDims, name: str) -> str:
    """[batch, kv, past, size] -> [batch, heads, past, size]: each key/value head repeated heads / kv times."""
    repeats = dims.heads // dims.kv_heads
    unsqueezed = b.node("Unsqueeze", [x, b.constant(f"{name}.axis", ints(2))], f"{name}.unsqueezed")
    batch, past = _shape(b, x, 0, 1, f"{name}.batch"), _shape(b, x, 2, 3, f"{name}.past")
    kv, reps, size = (b.constant(f"{name}.{n}", ints(v)) for n, v in
                      (("kv", dims.kv_heads), ("reps", repeats), ("size", dims.head_size)))
    target = b.node("Concat", [batch, kv, reps, past, size], f"{name}.target", axis=0)
    expanded = b.node("Expand", [unsqueezed, target], f"{name}.expanded")
    heads = b.constant(f"{name}.heads", ints(dims.heads))
    shape = b.node("Concat", [batch, heads, past, size], f"{name}.shape", axis=0)
    return b.node("Reshape", [expanded, shape], name)


def _attention(b: ModelBuilder, x: str, cos: str, sin: str, layer: int, dims: LlamaDims) -> str:
    name, size = f"layer{layer}.attn", dims.head_size
    q = _split_heads(b, _project(b, x, dims.hidden, dims.hidden, f"{name}.q"), dims.heads, size, f"{name}.q")
    k = _split_heads(b, _project(b, x, dims.hidden, dims.kv_heads * size, f"{name}.k"), dims.kv_heads, size,
                     f"{name}.k")
    v = _split_heads(b, _project(b, x, dims.hidden, dims.kv_heads * size, f"{name}.v"), dims.kv_heads, size,
                     f"{name}.v")
    q, k = _rotate(b, q, cos, sin, size, f"{name}.q_rope"), _rotate(b, k, cos, sin, size, f"{name}.k_rope")
    keys = b.node("Concat", [f"past_key_{layer}", k], f"present_key_{layer}", axis=2)
    values = b.node("Concat", [f"past_value_{layer}", v], f"present_value_{layer}", axis=2)
    keys_t = b.node("Transpose", [_repeat_kv(b, keys, dims, f"{name}.rk")], f"{name}.kt", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, keys_t], f"{name}.scores")
    scaled = b.node("Mul", [scores, b.constant(f"{name}.scale", scalar(1.0 / np.sqrt(size)))], f"{name}.scaled")
    weights = b.node("Softmax", [scaled], f"{name}.softmax", axis=-1)
    context = b.node("MatMul", [weights, _repeat_kv(b, values, dims, f"{name}.rv")], f"{name}.context")
    merged = b.node("Transpose", [context], f"{name}.merge", perm=[0, 2, 1, 3])
    leading = _shape(b, merged, 0, 2, f"{name}.merge_leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.hidden", ints(dims.hidden))], f"{name}.merge_shape", axis=0)
    return _project(b, b.node("Reshape", [merged, shape], f"{name}.merged"), dims.hidden, dims.hidden, f"{name}.o")


def _mlp(b: ModelBuilder, x: str, layer: int, dims: LlamaDims) -> str:
    name = f"layer{layer}.mlp"
    gate = _project(b, x, dims.hidden, dims.ffn, f"{name}.gate")
    silu = b.node("Mul", [gate, b.node("Sigmoid", [gate], f"{name}.sigmoid")], f"{name}.silu")
    up = _project(b, x, dims.hidden, dims.ffn, f"{name}.up")
    return _project(b, b.node("Mul", [silu, up], f"{name}.gated"), dims.ffn, dims.hidden, f"{name}.down")


def _rope_tables(b: ModelBuilder, dims: LlamaDims) -> tuple[str, str]:
    """cos and sin of the positions, [batch, 1, 1, head_size], gathered from [max_positions, head_size] tables."""
    size = dims.head_size
    inverse = 1.0 / (10000.0 ** (np.arange(0, size, 2) / size))
    angles = np.outer(np.arange(dims.max_positions), inverse)
    angles = np.concatenate([angles, angles], axis=-1).astype(np.float32)
    tables = []
    for name, table in (("cos", np.cos(angles)), ("sin", np.sin(angles))):
        gathered = b.node("Gather", [b.constant(f"rope.{name}_table", table), "position_ids"], f"rope.{name}_rows")
        tables.append(b.node("Unsqueeze", [gathered, b.constant(f"rope.{name}_axis", ints(1))], f"rope.{name}"))
    return tables[0], tables[1]


def llama_decode_step(dims: LlamaDims, seed: int = 11) -> onnx.ModelProto:
    """One decode step of a `dims.layers`-layer LLaMA over one new token per sequence (see the module docstring)."""
    b = ModelBuilder(seed=seed)
    x = b.node("Gather", [b.weight("embed.weight", (dims.vocab, dims.hidden), 0.5), "input_ids"], "embed")
    cos, sin = _rope_tables(b, dims)
    for layer in range(dims.layers):
        attended = _attention(b, _rms_norm(b, x, dims.hidden, f"layer{layer}.norm1"), cos, sin, layer, dims)
        x = b.node("Add", [x, attended], f"layer{layer}.res1")
        x = b.node("Add", [x, _mlp(b, _rms_norm(b, x, dims.hidden, f"layer{layer}.norm2"), layer, dims)],
                   f"layer{layer}.res2")
    _project(b, _rms_norm(b, x, dims.hidden, "norm"), dims.hidden, dims.vocab, "logits")
    cache = ["batch", dims.kv_heads, "past", dims.head_size]
    grown = ["batch", dims.kv_heads, "present", dims.head_size]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", 1]) for name in ("input_ids",
                                                                                                "position_ids")]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1, dims.vocab])]
    for layer in range(dims.layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}_{layer}", TensorProto.FLOAT, cache))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{layer}", TensorProto.FLOAT, grown))
    graph = helper.make_graph(b.nodes, "llama_decode", inputs, outputs, b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def initial_cache(dims: LlamaDims, batch: int, past: int, seed: int = 3) -> dict[str, np.ndarray]:
    """A seeded random cache of `past` positions (as a prompt's prefill would leave it)."""
    rng = np.random.default_rng(seed)
    shape = (batch, dims.kv_heads, past, dims.head_size)
    return {
        f"past_{kind}_{layer}": rng.standard_normal(shape).astype(np.float32)
        for layer in range(dims.layers)
        for kind in ("key", "value")
    }


Run = Callable[[dict[str, np.ndarray]], list[np.ndarray]]
"""A session's run: feeds -> outputs in the model's output order (logits, then presents layer by layer)."""


def greedy_decode(run: Run, dims: LlamaDims, steps: int, past: int, first_token: int = 1) -> list[list[int]]:
    """`steps` greedy decode steps from a random cache of `past` positions (batch 1): each step's presents are the
    next step's pasts, its argmax the next token. Returns the tokens, one list per batch row."""
    cache = initial_cache(dims, 1, past)
    token = np.array([[first_token]], np.int64)
    tokens: list[int] = []
    for step in range(steps):
        outputs = run({"input_ids": token, "position_ids": np.array([[past + step]], np.int64), **cache})
        token = outputs[0][:, -1].argmax(-1).reshape(1, 1).astype(np.int64)
        tokens.append(int(token[0, 0]))
        names = [f"past_{kind}_{layer}" for layer in range(dims.layers) for kind in ("key", "value")]
        cache = dict(zip(names, outputs[1:]))
    return [tokens]
