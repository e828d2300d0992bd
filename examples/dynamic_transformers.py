"""Transformers with dynamic batch and sequence axes, as `torch.onnx.export(..., dynamic_shapes=...)` (dynamo) writes
them: inputs declare `dim_param`s (`batch`, `sequence`), and every shape the graph needs is computed from them at run
time (Shape -> Slice/Gather -> Concat -> Reshape), never a constant. Built with onnx.helper (torch is not a
dependency); the runtime tests run them at several shapes from one session.

    model = bert(Dims(tokens=64, hidden=32, heads=4, ffn=64), layers=2, vocab=100)
    # inputs: input_ids [batch, sequence] int64, attention_mask [batch, sequence] int64
    # output: last_hidden_state [batch, sequence, 32]

Hugging Face's BertModel, piece by piece: position ids and token type ids are slices of constant [1, max_positions]
buffers cut at the run's sequence length (`buffer[:, :seq]`, the slice then broadcast to the batch with Expand);
the attention mask becomes an additive bias (1 - mask) * finfo.min, unsqueezed to [batch, 1, 1, sequence].
"""

from __future__ import annotations

import numpy as np
import onnx
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from transformer_models import Dims, gelu, ints, layer_norm, linear, scalar


def shape_dims(b: ModelBuilder, x: str, start: int, end: int, name: str) -> str:
    """`x.shape[start:end]` as an int64 tensor (Shape with start and end, opset 15+)."""
    return b.node("Shape", [x], name, start=start, end=end)


def heads_of(b: ModelBuilder, x: str, count: int, size: int, name: str) -> str:
    """[batch, S, count * size] -> [batch, count, S, size], the split shape computed from x's own."""
    leading = shape_dims(b, x, 0, 2, f"{name}.leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.split_dims", ints(count, size))], f"{name}.shape", axis=0)
    return b.node("Transpose", [b.node("Reshape", [x, shape], f"{name}.split")], f"{name}.heads", perm=[0, 2, 1, 3])


def merge_heads(b: ModelBuilder, context: str, width: int, name: str) -> str:
    """[batch, H, S, size] -> [batch, S, width]: Transpose, Reshape to x.shape[:2] + (width,)."""
    merged = b.node("Transpose", [context], f"{name}.merge", perm=[0, 2, 1, 3])
    leading = shape_dims(b, merged, 0, 2, f"{name}.merge_leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.width", ints(width))], f"{name}.merge_shape", axis=0)
    return b.node("Reshape", [merged, shape], f"{name}.merged")


def attention(b: ModelBuilder, x: str, bias: str, dims: Dims, name: str) -> str:
    """BertSelfAttention + BertSelfOutput's dense: scores divided by sqrt(head size), plus the mask's bias."""
    q, k, v = (heads_of(b, linear(b, x, dims.hidden, dims.hidden, f"{name}.{p}"), dims.heads, dims.head_size,
                        f"{name}.{p}") for p in "qkv")
    scores = b.node("MatMul", [q, b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])], f"{name}.scores")
    scores = b.node("Div", [scores, b.constant(f"{name}.scale", scalar(np.sqrt(dims.head_size)))], f"{name}.scaled")
    weights = b.node("Softmax", [b.node("Add", [scores, bias], f"{name}.masked")], f"{name}.softmax", axis=-1)
    context = b.node("MatMul", [weights, v], f"{name}.context")
    return linear(b, merge_heads(b, context, dims.hidden, name), dims.hidden, dims.hidden, f"{name}.out")


def mask_bias(b: ModelBuilder, mask: str) -> str:
    """[batch, S] int64 mask -> [batch, 1, 1, S] float bias: 0 where attended, float32's min where masked."""
    expanded = b.node("Unsqueeze", [mask, b.constant("mask.axes", ints(1, 2))], "mask.expanded")
    ones = b.node("Cast", [expanded], "mask.float", to=TensorProto.FLOAT)
    inverted = b.node("Sub", [b.constant("mask.one", scalar(1.0)), ones], "mask.inverted")
    return b.node("Mul", [inverted, b.constant("mask.min", scalar(float(np.finfo(np.float32).min)))], "mask.bias")


def embeddings(b: ModelBuilder, dims: Dims, vocab: int) -> str:
    """Word + position + token type embeddings, positions and token types cut from [1, max] buffers at the run's
    sequence length."""
    max_positions = dims.tokens
    sequence = shape_dims(b, "input_ids", 1, 2, "embeddings.sequence")
    zero, one = b.constant("embeddings.zero", ints(0)), b.constant("embeddings.axis", ints(1))
    positions = b.constant("embeddings.position_ids", np.arange(max_positions, dtype=np.int64).reshape(1, -1))
    position_ids = b.node("Slice", [positions, zero, sequence, one], "embeddings.position_slice")
    types = b.constant("embeddings.token_type_buffer", np.zeros((1, max_positions), np.int64))
    type_slice = b.node("Slice", [types, zero, sequence, one], "embeddings.type_slice")
    type_ids = b.node("Expand", [type_slice, shape_dims(b, "input_ids", 0, 2, "embeddings.ids_shape")],
                      "embeddings.token_type_ids")
    words = b.node("Gather", [b.weight("embeddings.word", (vocab, dims.hidden), 0.5), "input_ids"], "embeddings.words")
    where = b.node("Gather", [b.weight("embeddings.position", (max_positions, dims.hidden), 0.5), position_ids],
                   "embeddings.positions")
    kinds = b.node("Gather", [b.weight("embeddings.token_type", (2, dims.hidden), 0.5), type_ids], "embeddings.types")
    return b.node("Add", [b.node("Add", [words, kinds], "embeddings.sum"), where], "embeddings")


def bert(dims: Dims, layers: int, vocab: int, seed: int = 5) -> onnx.ModelProto:
    """A BERT encoder over [batch, sequence] token ids and attention mask (sequence up to `dims.tokens`); post-norm
    layers with erf-GELU. Output `last_hidden_state` [batch, sequence, hidden]."""
    b = ModelBuilder(seed=seed)
    x = layer_norm(b, embeddings(b, dims, vocab), dims.hidden, "embeddings.norm")
    return finish(b, "bert_dynamic", ["input_ids", "attention_mask"],
                  {"last_hidden_state": (post_norm_layers(b, x, dims, layers), ["batch", "sequence", dims.hidden])})


def post_norm_layers(b: ModelBuilder, x: str, dims: Dims, layers: int) -> str:
    """BertLayer (RobertaLayer) x `layers`: attention with the mask's bias, Add & LayerNorm, erf-GELU FFN, Add &
    LayerNorm."""
    bias = mask_bias(b, "attention_mask")
    for layer in range(layers):
        name = f"layer{layer}"
        attended = layer_norm(b, b.node("Add", [x, attention(b, x, bias, dims, f"{name}.attn")], f"{name}.res1"),
                              dims.hidden, f"{name}.norm1")
        hidden = gelu(b, linear(b, attended, dims.hidden, dims.ffn, f"{name}.ffn1"), f"{name}.gelu")
        fed = linear(b, hidden, dims.ffn, dims.hidden, f"{name}.ffn2")
        x = layer_norm(b, b.node("Add", [attended, fed], f"{name}.res2"), dims.hidden, f"{name}.norm2")
    return x


def distilbert(dims: Dims, layers: int, vocab: int, seed: int = 31) -> onnx.ModelProto:
    """DistilBertModel: word + position embeddings (positions cut from a buffer), LayerNorm; eager attention (q
    divided by sqrt(head size), heads as view(batch, -1, H, size), the mask (mask == 0) viewed as [batch, 1, 1,
    sequence] and expanded to the scores' shape for a masked_fill with min), sa_layer_norm, GELU FFN,
    output_layer_norm. Output `last_hidden_state`."""
    b, d = ModelBuilder(seed=seed), dims.hidden
    length = shape_dims(b, "input_ids", 1, 2, "embed.length")
    buffer = b.constant("embed.position_ids", np.arange(dims.tokens, dtype=np.int64).reshape(1, -1))
    positions = b.node("Slice", [buffer, b.constant("embed.zero", ints(0)), length,
                                 b.constant("embed.axis", ints(1))], "embed.position_slice")
    x = b.node("Add", [b.node("Gather", [b.weight("embed.word", (vocab, d), 0.5), "input_ids"], "embed.words"),
                       b.node("Gather", [b.weight("embed.position", (dims.tokens, d), 0.5), positions],
                              "embed.positions")], "embed")
    x = layer_norm(b, x, d, "embed.norm")
    batch = shape_dims(b, "input_ids", 0, 1, "mask.batch")
    mask_shape = b.node("Concat", [batch, b.constant("mask.ones", ints(1, 1)), length], "mask.shape", axis=0)
    padded = b.node("Equal", ["attention_mask", b.constant("mask.zero", np.array(0))], "mask.padded")
    padded = b.node("Reshape", [padded, mask_shape], "mask.viewed")
    for layer in range(layers):
        name = f"layer{layer}"
        leading = b.node("Concat", [batch, b.constant(f"{name}.split", ints(-1, dims.heads, dims.head_size))],
                         f"{name}.split_shape", axis=0)
        q, k, v = (b.node("Transpose", [b.node("Reshape", [linear(b, x, d, d, f"{name}.{p}"), leading],
                                               f"{name}.{p}.split")], f"{name}.{p}.heads", perm=[0, 2, 1, 3])
                   for p in "qkv")
        q = b.node("Div", [q, b.constant(f"{name}.root", scalar(np.sqrt(dims.head_size)))], f"{name}.q_scaled")
        scores = b.node("MatMul", [q, b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])], f"{name}.scores")
        expanded = b.node("Expand", [padded, b.node("Shape", [scores], f"{name}.scores_shape")], f"{name}.mask")
        scores = b.node("Where", [expanded, b.constant(f"{name}.min", scalar(float(np.finfo(np.float32).min))),
                                  scores], f"{name}.masked")
        weights = b.node("Softmax", [scores], f"{name}.softmax", axis=-1)
        context = b.node("Transpose", [b.node("MatMul", [weights, v], f"{name}.context")], f"{name}.merge",
                         perm=[0, 2, 1, 3])
        merged_shape = b.node("Concat", [batch, b.constant(f"{name}.rest", ints(-1, d))], f"{name}.merged_shape",
                              axis=0)
        attended = linear(b, b.node("Reshape", [context, merged_shape], f"{name}.merged"), d, d, f"{name}.out")
        x = layer_norm(b, b.node("Add", [attended, x], f"{name}.res1"), d, f"{name}.sa_norm")
        fed = linear(b, gelu(b, linear(b, x, d, dims.ffn, f"{name}.lin1"), f"{name}.gelu"), dims.ffn, d,
                     f"{name}.lin2")
        x = layer_norm(b, b.node("Add", [fed, x], f"{name}.res2"), d, f"{name}.out_norm")
    return finish(b, "distilbert_dynamic", ["input_ids", "attention_mask"],
                  {"last_hidden_state": (x, ["batch", "sequence", d])})


def roberta(dims: Dims, layers: int, vocab: int, padding_idx: int = 1, seed: int = 33) -> onnx.ModelProto:
    """RobertaModel: position ids from the ids, cumsum(ids != padding_idx) * mask + padding_idx (Not, Equal, Cast,
    CumSum, Mul, Add), token types cut from a buffer and expanded, then BERT's layers. Ids equal to `padding_idx`
    are padding. Output `last_hidden_state`."""
    b, d = ModelBuilder(seed=seed), dims.hidden
    keep = b.node("Cast", [b.node("Not", [b.node("Equal", ["input_ids", b.constant("pos.pad", np.array(padding_idx))],
                                                 "pos.is_pad")], "pos.kept")], "pos.mask", to=TensorProto.INT32)
    running = b.node("Cast", [b.node("CumSum", [keep, b.constant("pos.axis", np.array(1))], "pos.cumsum")],
                     "pos.cumsum32", to=TensorProto.INT32)
    counted = b.node("Mul", [b.node("Add", [running, b.constant("pos.past", np.array(0, np.int32))], "pos.shifted"),
                             keep], "pos.incremental")
    position_ids = b.node("Add", [b.node("Cast", [counted], "pos.long", to=TensorProto.INT64),
                                  b.constant("pos.offset", np.array(padding_idx))], "position_ids")
    length = shape_dims(b, "input_ids", 1, 2, "embed.length")
    types = b.constant("embed.token_type_buffer", np.zeros((1, dims.tokens + padding_idx + 1), np.int64))
    type_slice = b.node("Slice", [types, b.constant("embed.zero", ints(0)), length, b.constant("embed.axis", ints(1))],
                        "embed.type_slice")
    type_ids = b.node("Expand", [type_slice, shape_dims(b, "input_ids", 0, 2, "embed.ids_shape")], "embed.type_ids")
    table = b.weight("embed.position", (dims.tokens + padding_idx + 1, d), 0.5)
    x = b.node("Add", [b.node("Add", [
        b.node("Gather", [b.weight("embed.word", (vocab, d), 0.5), "input_ids"], "embed.words"),
        b.node("Gather", [b.weight("embed.token_type", (1, d), 0.5), type_ids], "embed.types")], "embed.sum"),
        b.node("Gather", [table, position_ids], "embed.positions")], "embed")
    x = layer_norm(b, x, d, "embed.norm")
    return finish(b, "roberta_dynamic", ["input_ids", "attention_mask"],
                  {"last_hidden_state": (post_norm_layers(b, x, dims, layers), ["batch", "sequence", d])})


def t5_norm(b: ModelBuilder, x: str, d: int, name: str) -> str:
    """T5LayerNorm: x * rsqrt(mean(x^2) + eps) * weight, no mean subtraction, no bias."""
    mean = b.node("ReduceMean", [b.node("Pow", [x, b.constant(f"{name}.two", scalar(2.0))], f"{name}.pow"),
                                 b.constant(f"{name}.axes", ints(-1))], f"{name}.variance", keepdims=1)
    root = b.node("Sqrt", [b.node("Add", [mean, b.constant(f"{name}.eps", scalar(1e-6))], f"{name}.shift")],
                  f"{name}.sqrt")
    scaled = b.node("Mul", [x, b.node("Reciprocal", [root], f"{name}.rsqrt")], f"{name}.scaled")
    weight = b.constant(f"{name}.weight", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
    return b.node("Mul", [weight, scaled], name)


def t5_position_bias(b: ModelBuilder, heads: int, buckets: int = 32, max_distance: int = 128) -> str:
    """T5Attention.compute_bias (bidirectional): memory - context positions from two Ranges over the sequence,
    bucketed (sign, exact below buckets / 4, logarithmic above, capped), a Gather of the [buckets, heads] table,
    permuted to [1, heads, sequence, sequence]."""
    length = b.node("Gather", [b.node("Shape", ["input_ids"], "bias.shape"), b.constant("bias.axis", np.array(1))],
                    "bias.length", axis=0)
    ranges = [b.node("Range", [b.constant(f"bias.{n}_start", np.array(0)), length,
                               b.constant(f"bias.{n}_delta", np.array(1))], f"bias.{n}") for n in ("context", "memory")]
    context = b.node("Unsqueeze", [ranges[0], b.constant("bias.column", ints(1))], "bias.context_column")
    memory = b.node("Unsqueeze", [ranges[1], b.constant("bias.row", ints(0))], "bias.memory_row")
    relative = b.node("Sub", [memory, context], "bias.relative")
    half, exact = buckets // 2, buckets // 4
    later = b.node("Cast", [b.node("Greater", [relative, b.constant("bias.zero", np.array(0))], "bias.later")],
                   "bias.later_long", to=TensorProto.INT64)
    sign = b.node("Mul", [later, b.constant("bias.half", np.array(half))], "bias.sign")
    distance = b.node("Abs", [relative], "bias.distance")
    small = b.node("Less", [distance, b.constant("bias.exact", np.array(exact))], "bias.small")
    ratio = b.node("Div", [b.node("Cast", [distance], "bias.float", to=TensorProto.FLOAT),
                           b.constant("bias.exact_f", scalar(float(exact)))], "bias.ratio")
    logarithm = b.node("Div", [b.node("Log", [ratio], "bias.log"),
                               b.constant("bias.log_range", scalar(float(np.log(max_distance / exact))))],
                       "bias.log_scaled")
    large = b.node("Cast", [b.node("Mul", [logarithm, b.constant("bias.span", scalar(float(half - exact)))],
                                   "bias.spread")], "bias.large_long", to=TensorProto.INT64)
    large = b.node("Add", [b.constant("bias.exact_long", np.array(exact)), large], "bias.large")
    large = b.node("Min", [large, b.constant("bias.cap", np.array(half - 1))], "bias.capped")
    bucket = b.node("Add", [sign, b.node("Where", [small, distance, large], "bias.magnitude")], "bias.bucket")
    values = b.node("Gather", [b.weight("bias.table", (buckets, heads), 0.5), bucket], "bias.values")
    permuted = b.node("Transpose", [values], "bias.permuted", perm=[2, 0, 1])
    return b.node("Unsqueeze", [permuted, b.constant("bias.batch_axis", ints(0))], "bias.position")


def t5_encoder(dims: Dims, layers: int, vocab: int, seed: int = 35) -> onnx.ModelProto:
    """T5EncoderModel: token embeddings only, the relative position bias (`t5_position_bias`) plus the mask's bias
    shared by all layers, pre-norm T5LayerNorm, unscaled attention without biases, ReLU FFN, final norm. Output
    `last_hidden_state`."""
    b, d = ModelBuilder(seed=seed), dims.hidden
    x = b.node("Gather", [b.weight("shared", (vocab, d), 0.5), "input_ids"], "embed")
    bias = b.node("Add", [t5_position_bias(b, dims.heads), mask_bias(b, "attention_mask")], "position_bias")
    project = lambda v, n_in, n_out, name: b.node(  # noqa: E731
        "MatMul", [v, b.weight(f"{name}.weight_t", (n_in, n_out), 1.0 / np.sqrt(n_in))], name)
    for layer in range(layers):
        name = f"block{layer}"
        normed = t5_norm(b, x, d, f"{name}.norm1")
        q, k, v = (heads_of(b, project(normed, d, d, f"{name}.{p}"), dims.heads, dims.head_size, f"{name}.{p}")
                   for p in "qkv")
        scores = b.node("MatMul", [q, b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])], f"{name}.scores")
        weights = b.node("Softmax", [b.node("Add", [scores, bias], f"{name}.biased")], f"{name}.softmax", axis=-1)
        context = merge_heads(b, b.node("MatMul", [weights, v], f"{name}.context"), d, name)
        x = b.node("Add", [x, project(context, d, d, f"{name}.o")], f"{name}.res1")
        hidden = b.node("Relu", [project(t5_norm(b, x, d, f"{name}.norm2"), d, dims.ffn, f"{name}.wi")],
                        f"{name}.relu")
        x = b.node("Add", [x, project(hidden, dims.ffn, d, f"{name}.wo")], f"{name}.res2")
    return finish(b, "t5_encoder_dynamic", ["input_ids", "attention_mask"],
                  {"last_hidden_state": (t5_norm(b, x, d, "final_norm"), ["batch", "sequence", d])})


def pre_norm_layers(b: ModelBuilder, x: str, dims: Dims, layers: int, name: str) -> str:
    """ViTLayer / WhisperEncoderLayer x `layers`: LayerNorm, SDPA self-attention without a mask (torchlib's: Q and
    K^T each scaled by sqrt(1 / sqrt(head size))), residual, LayerNorm, erf-GELU MLP, residual."""
    d = dims.hidden
    root = b.constant(f"{name}.root_scale", scalar(np.sqrt(1.0 / np.sqrt(dims.head_size))))
    for layer in range(layers):
        at = f"{name}{layer}"
        normed = layer_norm(b, x, d, f"{at}.norm1")
        q, k, v = (heads_of(b, linear(b, normed, d, d, f"{at}.{p}"), dims.heads, dims.head_size, f"{at}.{p}")
                   for p in "qkv")
        kt = b.node("Mul", [b.node("Transpose", [k], f"{at}.kt", perm=[0, 1, 3, 2]), root], f"{at}.kt_scaled")
        scores = b.node("MatMul", [b.node("Mul", [q, root], f"{at}.q_scaled"), kt], f"{at}.scores")
        context = b.node("MatMul", [b.node("Softmax", [scores], f"{at}.softmax", axis=-1), v], f"{at}.context")
        x = b.node("Add", [x, linear(b, merge_heads(b, context, d, at), d, d, f"{at}.out")], f"{at}.res1")
        hidden = gelu(b, linear(b, layer_norm(b, x, d, f"{at}.norm2"), d, dims.ffn, f"{at}.fc1"), f"{at}.gelu")
        x = b.node("Add", [x, linear(b, hidden, dims.ffn, d, f"{at}.fc2")], f"{at}.res2")
    return x


def vit(dims: Dims, layers: int, image: int = 32, patch: int = 8, seed: int = 37) -> onnx.ModelProto:
    """ViTModel over pixel_values [batch, 3, image, image]: patch Conv, flatten(2) to a shape computed from the
    batch, transpose, the class token expanded to the batch (Expand to Abs([batch, -1, -1]), torchlib's expand),
    position embeddings, pre-norm layers, LayerNorm, pooler (tanh of a dense layer on token 0). Outputs
    `last_hidden_state` [batch, tokens, hidden], `pooler_output` [batch, hidden]."""
    b, d, patches = ModelBuilder(seed=seed), dims.hidden, (image // patch) ** 2
    embedded = b.conv("pixel_values", 3, d, "patch", size=patch, strides=[patch, patch], pads=[0, 0, 0, 0])
    batch = shape_dims(b, embedded, 0, 1, "embed.batch")
    flat_shape = b.node("Concat", [batch, b.constant("embed.flat_dims", ints(d, patches))], "embed.flat_shape", axis=0)
    tokens = b.node("Transpose", [b.node("Reshape", [embedded, flat_shape], "embed.flat")], "embed.tokens",
                    perm=[0, 2, 1])
    sizes = b.node("Abs", [b.node("Concat", [batch, b.constant("embed.keep", ints(-1, -1))], "embed.cls_sizes",
                                  axis=0)], "embed.cls_shape")
    cls = b.node("Expand", [b.weight("cls_token", (1, 1, d), 0.5), sizes], "embed.cls")
    joined = b.node("Concat", [cls, tokens], "embed.joined", axis=1)
    x = b.node("Add", [joined, b.weight("position_embeddings", (1, patches + 1, d), 0.5)], "embed")
    y = layer_norm(b, pre_norm_layers(b, x, dims, layers, "layer"), d, "norm")
    first = b.node("Gather", [y, b.constant("pool.index", np.array(0))], "pool.first", axis=1)
    pooled = b.node("Tanh", [linear(b, first, d, d, "pool.dense")], "pool.tanh")
    return finish(b, "vit_dynamic", ["pixel_values"],
                  {"last_hidden_state": (y, ["batch", patches + 1, d]), "pooler_output": (pooled, ["batch", d])},
                  input_type=TensorProto.FLOAT, input_shape=["batch", 3, image, image])


def whisper_encoder(dims: Dims, layers: int, mels: int = 16, frames: int = 64, seed: int = 39) -> onnx.ModelProto:
    """WhisperEncoder over input_features [batch, mels, frames]: Conv1d (k 3, pad 1), GELU, Conv1d (k 3, stride 2,
    pad 1), GELU, permute to [batch, frames / 2, hidden], sinusoidal positions sliced to that length and added,
    pre-norm layers, LayerNorm. Output `last_hidden_state` [batch, frames / 2, hidden]."""
    b, d, length = ModelBuilder(seed=seed), dims.hidden, frames // 2
    x = "input_features"
    for n, (c_in, stride) in enumerate(((mels, 1), (d, 2))):
        weight = b.weight(f"conv{n}.weight", (d, c_in, 3), 1.0 / np.sqrt(3 * c_in))
        conv = b.node("Conv", [x, weight, b.weight(f"conv{n}.bias", (d,), 0.1)], f"conv{n}", kernel_shape=[3],
                      pads=[1, 1], strides=[stride])
        x = gelu(b, conv, f"conv{n}.gelu")
    x = b.node("Transpose", [x], "embed.permuted", perm=[0, 2, 1])
    inverse = np.exp(-np.log(10000.0) / (d // 2 - 1) * np.arange(d // 2))
    angles = np.arange(dims.tokens)[:, None] * inverse[None, :]
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(np.float32)
    cut = b.node("Slice", [b.constant("embed.positions", table), b.constant("embed.zero", ints(0)),
                           shape_dims(b, x, 1, 2, "embed.length"), b.constant("embed.axis", ints(0))], "embed.cut")
    x = b.node("Add", [x, cut], "embed")
    y = layer_norm(b, pre_norm_layers(b, x, dims, layers, "layer"), d, "layer_norm")
    return finish(b, "whisper_encoder_dynamic", ["input_features"], {"last_hidden_state": (y, ["batch", length, d])},
                  input_type=TensorProto.FLOAT, input_shape=["batch", mels, frames])


def finish(b: ModelBuilder, name: str, inputs: list[str], outputs: dict[str, tuple[str, list[int | str]]],
           input_type: int = TensorProto.INT64, input_shape: list[int | str] | None = None) -> onnx.ModelProto:
    """The checked opset-18 model of `b`'s nodes: `inputs` of `input_shape` (default [batch, sequence]), each output
    an Identity of its value, declared with its dims (names for symbols)."""
    for output, (value, _) in outputs.items():
        b.nodes.append(helper.make_node("Identity", [value], [output]))
    graph = helper.make_graph(
        b.nodes,
        name,
        [helper.make_tensor_value_info(i, input_type, input_shape or ["batch", "sequence"]) for i in inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, dims) for output, (_, dims) in outputs.items()],
        b.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model)
    return model
