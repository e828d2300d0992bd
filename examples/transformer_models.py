"""Transformer models as `torch.onnx.export` (dynamo, opset 18) writes them, built node by node with onnx.helper
(torch is not a dependency), at any size: the runtime tests build them small, `bench/bench_models.py` at BERT/ViT/GPT
sizes.

    model = bert(Dims(tokens=128, hidden=256, heads=4, ffn=1024), layers=4, vocab=30522)   # input: int64 token ids
    model = gpt(Dims(tokens=128, hidden=256, heads=4, ffn=1024), vocab=50257)             # one causal decoder block

The pieces follow the modules they stand for: `linear` is nn.Linear on 3-D input (MatMul by the transposed weight,
then Add the bias), `gelu` nn.GELU() (x * 0.5 * (1 + erf(x / sqrt 2))), `attention` nn.MultiheadAttention or
Hugging Face's BertSelfAttention / nanoGPT's CausalSelfAttention (scores scaled by a Mul or a Div, a causal mask
as Trilu, Equal and Where).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from model_builder import ModelBuilder
from onnx import TensorProto, helper


@dataclass(frozen=True)
class Dims:
    """A transformer's sizes: sequence length, model width, attention heads, feed-forward width."""

    tokens: int
    hidden: int
    heads: int
    ffn: int

    @property
    def head_size(self) -> int:
        return self.hidden // self.heads


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def scalar(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float32)


def linear(b: ModelBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    """nn.Linear on 3-D input: MatMul by the transposed weight, then Add the bias."""
    weight = b.weight(f"{name}.weight_t", (d_in, d_out), scale=1.0 / np.sqrt(d_in))
    return b.node("Add", [b.node("MatMul", [x, weight], f"{name}.mm"), b.weight(f"{name}.bias", (d_out,), 0.1)], name)


def layer_norm(b: ModelBuilder, x: str, d: int, name: str) -> str:
    scale = b.constant(f"{name}.weight", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
    return b.node("LayerNormalization", [x, scale, b.weight(f"{name}.bias", (d,), 0.1)], name, axis=-1, epsilon=1e-5)


def gelu(b: ModelBuilder, x: str, name: str) -> str:
    """Exact GELU as the opset-18 exporter writes it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    scaled = b.node("Div", [x, b.constant(f"{name}.sqrt2", scalar(1.4142135))], f"{name}.div")
    erf = b.node("Erf", [scaled], f"{name}.erf")
    shifted = b.node("Add", [erf, b.constant(f"{name}.one", scalar(1.0))], f"{name}.add")
    return b.node("Mul", [b.node("Mul", [x, shifted], f"{name}.mul"), b.constant(f"{name}.half", scalar(0.5))], name)


def heads(b: ModelBuilder, x: str, dims: Dims, name: str) -> str:
    """[1, S, D] -> [1, H, S, D / H]."""
    split = b.node("Reshape", [x, b.constant(f"{name}.shape", ints(1, dims.tokens, dims.heads, dims.head_size))],
                   f"{name}.split")
    return b.node("Transpose", [split], f"{name}.heads", perm=[0, 2, 1, 3])


def causal_mask(b: ModelBuilder, scores: str, tokens: int, name: str) -> str:
    """masked_fill(tril(ones) == 0, -inf): Trilu of ones, Equal to zero, Where."""
    ones = b.constant(f"{name}.ones", np.ones((tokens, tokens), np.float32))
    lower = b.node("Trilu", [ones], f"{name}.tril", upper=0)
    future = b.node("Equal", [lower, b.constant(f"{name}.zero", scalar(0.0))], f"{name}.future")
    return b.node("Where", [future, b.constant(f"{name}.ninf", scalar(-np.inf)), scores], name)


def attention(b: ModelBuilder, x: str, dims: Dims, name: str, scale_by: str = "Mul", causal: bool = False) -> str:
    """Self-attention: projections, scaled dot product per head (scale as a Mul by 1/sqrt(d), as
    nn.MultiheadAttention, or a Div by sqrt(d), as BERT and nanoGPT), an optional causal mask, output projection."""
    q, k, v = (heads(b, linear(b, x, dims.hidden, dims.hidden, f"{name}.{p}"), dims, f"{name}.{p}") for p in "qkv")
    keys = b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, keys], f"{name}.scores")
    root = np.sqrt(dims.head_size)
    scale = b.constant(f"{name}.scale", scalar(1.0 / root if scale_by == "Mul" else root))
    scores = b.node(scale_by, [scores, scale], f"{name}.scaled")
    if causal:
        scores = causal_mask(b, scores, dims.tokens, f"{name}.mask")
    weights = b.node("Softmax", [scores], f"{name}.softmax", axis=-1)
    context = b.node("MatMul", [weights, v], f"{name}.context")
    context = b.node("Transpose", [context], f"{name}.merge", perm=[0, 2, 1, 3])
    merged = b.node("Reshape", [context, b.constant(f"{name}.shape", ints(1, dims.tokens, dims.hidden))],
                    f"{name}.merged")
    return linear(b, merged, dims.hidden, dims.hidden, f"{name}.out")


def feed_forward(b: ModelBuilder, x: str, dims: Dims, activation: str, name: str) -> str:
    hidden = linear(b, x, dims.hidden, dims.ffn, f"{name}.linear1")
    active = gelu(b, hidden, f"{name}.gelu") if activation == "gelu" else b.node("Relu", [hidden], f"{name}.relu")
    return linear(b, active, dims.ffn, dims.hidden, f"{name}.linear2")


def encoder_layer(
    b: ModelBuilder, x: str, dims: Dims, activation: str, name: str, norm_first: bool = False, scale_by: str = "Mul"
) -> str:
    """nn.TransformerEncoderLayer(batch_first=True): post-norm (the default, and BERT's layer) or pre-norm (ViT)."""
    d = dims.hidden
    if norm_first:
        attended = b.node("Add", [x, attention(b, layer_norm(b, x, d, f"{name}.norm1"), dims, f"{name}.attn")],
                          f"{name}.res1")
        fed = feed_forward(b, layer_norm(b, attended, d, f"{name}.norm2"), dims, activation, f"{name}.ffn")
        return b.node("Add", [attended, fed], f"{name}.res2")
    attended = attention(b, x, dims, f"{name}.attn", scale_by=scale_by)
    attended = layer_norm(b, b.node("Add", [x, attended], f"{name}.res1"), d, f"{name}.norm1")
    fed = feed_forward(b, attended, dims, activation, f"{name}.ffn")
    return layer_norm(b, b.node("Add", [attended, fed], f"{name}.res2"), d, f"{name}.norm2")


def transformer_encoder_layer(dims: Dims, activation: str, seed: int = 1) -> onnx.ModelProto:
    """One nn.TransformerEncoderLayer on a float [1, S, D] input."""
    b = ModelBuilder(seed=seed)
    y = encoder_layer(b, "x", dims, activation, "layer")
    return b.model([1, dims.tokens, dims.hidden], y, [1, dims.tokens, dims.hidden], opset=18)


def embeddings(b: ModelBuilder, dims: Dims, vocab: int, name: str) -> str:
    """Token embedding Gather of the int64 ids `x` plus a position embedding Gather of the constant positions."""
    tokens = b.node("Gather", [b.weight(f"{name}.word", (vocab, dims.hidden), 0.5), "x"], f"{name}.tokens")
    positions = b.constant(f"{name}.position_ids", np.arange(dims.tokens, dtype=np.int64).reshape(1, -1))
    where = b.node("Gather", [b.weight(f"{name}.position", (dims.tokens, dims.hidden), 0.5), positions],
                   f"{name}.positions")
    return b.node("Add", [tokens, where], name)


def bert(dims: Dims, layers: int, vocab: int, seed: int = 5) -> onnx.ModelProto:
    """A BERT encoder (Hugging Face's BertModel, last hidden state): embeddings and their LayerNorm, then post-norm
    layers with erf-GELU and the scores divided by sqrt(head size)."""
    b = ModelBuilder(seed=seed)
    x = layer_norm(b, embeddings(b, dims, vocab, "embeddings"), dims.hidden, "embeddings.norm")
    for layer in range(layers):
        x = encoder_layer(b, x, dims, "gelu", f"layer{layer}", scale_by="Div")
    return b.model([1, dims.tokens], x, [1, dims.tokens, dims.hidden], opset=18, input_type=TensorProto.INT64)


def gpt(dims: Dims, vocab: int, seed: int = 6) -> onnx.ModelProto:
    """A GPT decoder block (nanoGPT's Block between its embeddings and final LayerNorm): pre-norm causal
    self-attention with Q, K and V from one Linear and a Split, and an erf-GELU MLP."""
    b = ModelBuilder(seed=seed)
    d = dims.hidden
    x = embeddings(b, dims, vocab, "wte")
    qkv = linear(b, layer_norm(b, x, d, "ln_1"), d, 3 * d, "c_attn")
    parts = ["q", "k", "v"]
    b.nodes.append(helper.make_node("Split", [qkv, b.constant("c_attn.sizes", ints(d, d, d))], parts, axis=2))
    q, k, v = (heads(b, part, dims, f"attn.{part}") for part in parts)
    scores = b.node("MatMul", [q, b.node("Transpose", [k], "attn.kt", perm=[0, 1, 3, 2])], "attn.scores")
    scores = b.node("Div", [scores, b.constant("attn.scale", scalar(np.sqrt(dims.head_size)))], "attn.scaled")
    weights = b.node("Softmax", [causal_mask(b, scores, dims.tokens, "attn.mask")], "attn.softmax", axis=-1)
    context = b.node("Transpose", [b.node("MatMul", [weights, v], "attn.context")], "attn.merge", perm=[0, 2, 1, 3])
    merged = b.node("Reshape", [context, b.constant("attn.shape", ints(1, dims.tokens, d))], "attn.merged")
    x = b.node("Add", [x, linear(b, merged, d, d, "c_proj")], "res1")
    fed = feed_forward(b, layer_norm(b, x, d, "ln_2"), dims, "gelu", "mlp")
    y = layer_norm(b, b.node("Add", [x, fed], "res2"), d, "ln_f")
    return b.model([1, dims.tokens], y, [1, dims.tokens, d], opset=18, input_type=TensorProto.INT64)


def vit(dims: Dims, layers: int, image: int, patch: int, classes: int, seed: int = 2) -> onnx.ModelProto:
    """A ViT classifier: patch embedding (a patch x patch Conv of stride patch), tokens, class token, position
    embedding, pre-norm encoder layers with erf-GELU, the final LayerNorm, the class token (Gather at a constant
    index) and a Gemm head. `dims.tokens` must be (image / patch)^2 + 1."""
    b = ModelBuilder(seed=seed)
    d, patches = dims.hidden, (image // patch) ** 2
    assert dims.tokens == patches + 1, f"a {image}x{image} image in {patch}x{patch} patches has {patches + 1} tokens"
    embedded = b.conv("x", 3, d, "patch", size=patch, strides=[patch, patch], pads=[0, 0, 0, 0])
    flat = b.node("Reshape", [embedded, b.constant("flat.shape", ints(1, d, patches))], "flat")
    tokens = b.node("Transpose", [flat], "tokens", perm=[0, 2, 1])
    joined = b.node("Concat", [b.weight("cls_token", (1, 1, d), 0.02), tokens], "joined", axis=1)
    x = b.node("Add", [joined, b.weight("pos_embedding", (1, dims.tokens, d), 0.02)], "embedded")
    for layer in range(layers):
        x = encoder_layer(b, x, dims, "gelu", f"block{layer}", norm_first=True)
    encoded = layer_norm(b, x, d, "norm")
    cls = b.node("Gather", [encoded, b.constant("cls.index", ints(0).reshape(()))], "cls", axis=1)
    head = b.node("Gemm", [cls, b.weight("head.weight", (classes, d), 0.2), b.weight("head.bias", (classes,), 0.1)],
                  "head", transB=1)
    return b.model([1, 3, image, image], head, [1, classes], opset=18)


def sdpa_self_attention(b: ModelBuilder, x: str, dims: Dims, name: str) -> str:
    """nn.MultiheadAttention as the dynamo exporter writes it: one packed in-projection (MatMul by the [D, 3D]
    transposed in_proj_weight, Add, Reshape to [1, S, 3, D], Transpose, Split into q, k, v, Squeeze), then
    scaled_dot_product_attention as torchlib decomposes it (Q and the transposed K each multiplied by
    sqrt(1 / sqrt(head size)), MatMul, Softmax, MatMul), heads merged and the out-projection."""
    d, s = dims.hidden, dims.tokens
    packed = linear(b, x, d, 3 * d, f"{name}.in_proj")
    packed = b.node("Reshape", [packed, b.constant(f"{name}.unflatten_shape", ints(1, s, 3, d))], f"{name}.unflatten")
    packed = b.node("Transpose", [packed], f"{name}.packed", perm=[2, 0, 1, 3])
    parts = [f"{name}.{p}.packed" for p in "qkv"]
    b.nodes.append(helper.make_node("Split", [packed, b.constant(f"{name}.split", ints(1, 1, 1))], parts, axis=0))
    q, k, v = (
        heads(b, b.node("Squeeze", [part, b.constant(f"{part}.axes", ints(0))], f"{part}.squeezed"), dims, part)
        for part in parts
    )
    root_scale = b.constant(f"{name}.sqrt_scale", scalar(np.sqrt(1.0 / np.sqrt(dims.head_size))))
    q = b.node("Mul", [q, root_scale], f"{name}.q_scaled")
    keys = b.node("Mul", [b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2]), root_scale], f"{name}.kt_scaled")
    weights = b.node("Softmax", [b.node("MatMul", [q, keys], f"{name}.scores")], f"{name}.softmax", axis=-1)
    context = b.node("Transpose", [b.node("MatMul", [weights, v], f"{name}.context")], f"{name}.merge",
                     perm=[0, 2, 1, 3])
    merged = b.node("Reshape", [context, b.constant(f"{name}.shape", ints(1, s, d))], f"{name}.merged")
    return linear(b, merged, d, d, f"{name}.out_proj")


def torch_encoder_layer(dims: Dims, activation: str, norm_first: bool, seed: int = 7) -> onnx.ModelProto:
    """nn.TransformerEncoderLayer(batch_first=True, norm_first=...) on a float [1, S, D] input, its attention as
    the dynamo exporter writes nn.MultiheadAttention (`sdpa_self_attention`)."""
    b = ModelBuilder(seed=seed)
    d = dims.hidden
    if norm_first:
        x = b.node("Add", ["x", sdpa_self_attention(b, layer_norm(b, "x", d, "norm1"), dims, "attn")], "res1")
        y = b.node("Add", [x, feed_forward(b, layer_norm(b, x, d, "norm2"), dims, activation, "ffn")], "res2")
    else:
        x = layer_norm(b, b.node("Add", ["x", sdpa_self_attention(b, "x", dims, "attn")], "res1"), d, "norm1")
        y = layer_norm(b, b.node("Add", [x, feed_forward(b, x, dims, activation, "ffn")], "res2"), d, "norm2")
    return b.model([1, dims.tokens, d], y, [1, dims.tokens, d], opset=18)


def roll(b: ModelBuilder, x: str, shift: int, size: int, axis: int, name: str) -> str:
    """torch.roll by `shift` along `axis` (of extent `size`) as the exporter writes it: two Slices and a Concat."""
    cut = -shift % size
    axes = b.constant(f"{name}.axes", ints(axis))
    tail = b.node("Slice", [x, b.constant(f"{name}.tail_start", ints(cut)), b.constant(f"{name}.end", ints(size)),
                            axes], f"{name}.tail")
    head = b.node("Slice", [x, b.constant(f"{name}.head_start", ints(0)), b.constant(f"{name}.cut", ints(cut)),
                            axes], f"{name}.head")
    return b.node("Concat", [tail, head], name, axis=axis)


def swin_windows(side: int, window: int) -> tuple[np.ndarray, np.ndarray]:
    """A shifted-window block's constants as Swin computes them in `__init__`: the relative position index
    ([N * N] rows of the bias table, N = window^2) and the attention mask of the shifted windows ([nW, N, N],
    -100 between tokens from different regions of the rolled image)."""
    coords = np.stack(np.meshgrid(np.arange(window), np.arange(window), indexing="ij")).reshape(2, -1)
    relative = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (window - 1)
    index = (relative[:, :, 0] * (2 * window - 1) + relative[:, :, 1]).reshape(-1).astype(np.int64)
    shift = window // 2
    regions = np.zeros((side, side), np.int64)
    bounds = (slice(0, -window), slice(-window, -shift), slice(-shift, None))
    for label, (rows, cols) in enumerate((r, c) for r in bounds for c in bounds):
        regions[rows, cols] = label
    count = side // window
    windows = regions.reshape(count, window, count, window).transpose(0, 2, 1, 3).reshape(-1, window * window)
    mask = np.where(windows[:, None, :] != windows[:, :, None], -100.0, 0.0).astype(np.float32)
    return index, mask


def swin_block(side: int, window: int, dims: Dims, seed: int = 8) -> onnx.ModelProto:
    """A shifted-window Swin block (torchvision's SwinTransformerBlock, shift = window // 2) on a float
    [1, side, side, C] input: LayerNorm, cyclic shift (Slice + Concat), window partition (Reshape, Transpose),
    window attention with the relative position bias (a Gather of the bias table at the constant index) and the
    shifted-window mask added, window merge, reverse shift, residual, then the LayerNorm + GELU MLP and its
    residual. `dims.tokens` must be window^2."""
    b = ModelBuilder(seed=seed)
    c, n, count, shift = dims.hidden, window * window, (side // window) ** 2, window // 2
    assert dims.tokens == n, f"a {window}x{window} window has {n} tokens"
    index, mask = swin_windows(side, window)
    x = layer_norm(b, "x", c, "norm1")
    for axis in (1, 2):
        x = roll(b, x, -shift, side, axis, f"shift{axis}")
    grid = ints(1, side // window, window, side // window, window, c)
    x = b.node("Reshape", [x, b.constant("partition.grid_shape", grid)], "partition.grid")
    x = b.node("Transpose", [x], "partition.order", perm=[0, 1, 3, 2, 4, 5])
    x = b.node("Reshape", [x, b.constant("partition.shape", ints(count, n, c))], "windows")
    qkv_shape = b.constant("qkv.shape", ints(count, n, 3, dims.heads, dims.head_size))
    qkv = b.node("Reshape", [linear(b, x, c, 3 * c, "qkv"), qkv_shape], "qkv.split")
    qkv = b.node("Transpose", [qkv], "qkv.packed", perm=[2, 0, 3, 1, 4])
    parts = ["q.packed", "k.packed", "v.packed"]
    b.nodes.append(helper.make_node("Split", [qkv, b.constant("qkv.sizes", ints(1, 1, 1))], parts, axis=0))
    q, k, v = (b.node("Squeeze", [part, b.constant(f"{part}.axes", ints(0))], part[0]) for part in parts)
    q = b.node("Mul", [q, b.constant("attn.scale", scalar(dims.head_size**-0.5))], "q.scaled")
    scores = b.node("MatMul", [q, b.node("Transpose", [k], "kt", perm=[0, 1, 3, 2])], "scores")
    table = b.weight("relative_position_bias_table", ((2 * window - 1) ** 2, dims.heads), 0.02)
    bias = b.node("Gather", [table, b.constant("relative_position_index", index)], "bias.rows", axis=0)
    bias = b.node("Reshape", [bias, b.constant("bias.shape", ints(n, n, dims.heads))], "bias.square")
    bias = b.node("Transpose", [bias], "bias", perm=[2, 0, 1])
    scores = b.node("Add", [scores, bias], "scores.biased")
    per_image = b.node("Reshape", [scores, b.constant("scores.grouped_shape", ints(1, count, dims.heads, n, n))],
                       "scores.grouped")
    masked = b.node("Add", [per_image, b.constant("attn_mask", mask.reshape(1, count, 1, n, n))], "scores.masked")
    masked = b.node("Reshape", [masked, b.constant("scores.shape", ints(count, dims.heads, n, n))], "scores.windows")
    weights = b.node("Softmax", [masked], "softmax", axis=-1)
    context = b.node("Transpose", [b.node("MatMul", [weights, v], "context")], "context.order", perm=[0, 2, 1, 3])
    x = linear(b, b.node("Reshape", [context, b.constant("context.shape", ints(count, n, c))], "context.merged"),
               c, c, "proj")
    merge_grid = ints(1, side // window, side // window, window, window, c)
    x = b.node("Reshape", [x, b.constant("merge.grid_shape", merge_grid)], "merge.grid")
    x = b.node("Transpose", [x], "merge.order", perm=[0, 1, 3, 2, 4, 5])
    x = b.node("Reshape", [x, b.constant("merge.shape", ints(1, side, side, c))], "merged")
    for axis in (1, 2):
        x = roll(b, x, shift, side, axis, f"unshift{axis}")
    x = b.node("Add", ["x", x], "res1")
    y = b.node("Add", [x, feed_forward(b, layer_norm(b, x, c, "norm2"), dims, "gelu", "mlp")], "res2")
    return b.model([1, side, side, c], y, [1, side, side, c], opset=18)
