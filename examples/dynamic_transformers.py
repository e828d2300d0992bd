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


def heads(b: ModelBuilder, x: str, dims: Dims, name: str) -> str:
    """[batch, S, D] -> [batch, H, S, D / H], the split shape computed from x's own."""
    leading = shape_dims(b, x, 0, 2, f"{name}.leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.split_dims", ints(dims.heads, dims.head_size))],
                   f"{name}.shape", axis=0)
    return b.node("Transpose", [b.node("Reshape", [x, shape], f"{name}.split")], f"{name}.heads", perm=[0, 2, 1, 3])


def attention(b: ModelBuilder, x: str, bias: str, dims: Dims, name: str) -> str:
    """BertSelfAttention + BertSelfOutput's dense: scores divided by sqrt(head size), plus the mask's bias."""
    q, k, v = (heads(b, linear(b, x, dims.hidden, dims.hidden, f"{name}.{p}"), dims, f"{name}.{p}") for p in "qkv")
    scores = b.node("MatMul", [q, b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])], f"{name}.scores")
    scores = b.node("Div", [scores, b.constant(f"{name}.scale", scalar(np.sqrt(dims.head_size)))], f"{name}.scaled")
    weights = b.node("Softmax", [b.node("Add", [scores, bias], f"{name}.masked")], f"{name}.softmax", axis=-1)
    context = b.node("Transpose", [b.node("MatMul", [weights, v], f"{name}.context")], f"{name}.merge",
                     perm=[0, 2, 1, 3])
    leading = shape_dims(b, context, 0, 2, f"{name}.merge_leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.hidden", ints(dims.hidden))], f"{name}.merge_shape", axis=0)
    return linear(b, b.node("Reshape", [context, shape], f"{name}.merged"), dims.hidden, dims.hidden, f"{name}.out")


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
    bias = mask_bias(b, "attention_mask")
    for layer in range(layers):
        name = f"layer{layer}"
        attended = layer_norm(b, b.node("Add", [x, attention(b, x, bias, dims, f"{name}.attn")], f"{name}.res1"),
                              dims.hidden, f"{name}.norm1")
        hidden = gelu(b, linear(b, attended, dims.hidden, dims.ffn, f"{name}.ffn1"), f"{name}.gelu")
        fed = linear(b, hidden, dims.ffn, dims.hidden, f"{name}.ffn2")
        x = layer_norm(b, b.node("Add", [attended, fed], f"{name}.res2"), dims.hidden, f"{name}.norm2")
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    axes = ["batch", "sequence"]
    graph = helper.make_graph(
        b.nodes,
        "bert_dynamic",
        [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*axes, dims.hidden])],
        b.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model)
    return model
