"""Causal transformers with dynamic batch and sequence axes, as `torch.onnx.export(..., dynamo=True)` writes Hugging
Face's models (opset 18): GPT-2, LLaMA and Qwen2 prefill, CLIP's text tower. Built with onnx.helper like
`dynamic_transformers.py` (its encoders), every shape computed from the inputs' own at run time.

    model = gpt2(Dims(tokens=96, hidden=32, heads=4, ffn=128), layers=2, vocab=100)
    model = llama(LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, layers=2), qwen2=True)
    model = clip_text(Dims(tokens=96, hidden=32, heads=4, ffn=64), layers=2, vocab=100)
    # inputs: input_ids [batch, sequence] int64, attention_mask [batch, sequence] int64

The causal mask is the one `_prepare_4d_causal_attention_mask_with_cache_position` builds: a [sequence, sequence]
matrix of float32's min (ConstantOfShape), Trilu(k=1), zeroed where Range(0, sequence) > cache_position, expanded
to [batch, 1, sequence, sequence] and filled with min where the attention mask pads (Add, Equal 0, Where). SDPA
with a float mask is torchlib's: Q and K^T each scaled by sqrt(1 / sqrt(head size)), MatMul, Add the mask,
Softmax, MatMul.
"""

from __future__ import annotations

import numpy as np
import onnx
from dynamic_transformers import finish, heads_of, merge_heads, shape_dims
from llama_decode import LlamaDims, _mlp, _project, _rms_norm, _rotate
from model_builder import ModelBuilder
from onnx import TensorProto
from transformer_models import Dims, ints, layer_norm, scalar

MIN = float(np.finfo(np.float32).min)


def scalar_dim(b: ModelBuilder, x: str, axis: int, name: str) -> str:
    """`x.shape[axis]` as an int64 scalar (Shape, Gather at a scalar index), as torch's SymInts export."""
    return b.node("Gather", [b.node("Shape", [x], f"{name}.shape"), b.constant(f"{name}.axis", np.array(axis))],
                  name, axis=0)


def cache_position(b: ModelBuilder) -> tuple[str, str]:
    """cache_position = Range(0, sequence) and position_ids = cache_position.unsqueeze(0) ([1, sequence])."""
    sequence = scalar_dim(b, "input_ids", 1, "seq_len")
    positions = b.node("Range", [b.constant("range.start", np.array(0)), sequence,
                                 b.constant("range.delta", np.array(1))], "cache_position")
    return positions, b.node("Unsqueeze", [positions, b.constant("position_ids.axes", ints(0))], "position_ids")


def causal_mask(b: ModelBuilder, positions: str) -> str:
    """The [batch, 1, sequence, sequence] additive mask of Hugging Face's causal models (module docstring)."""
    side = shape_dims(b, "input_ids", 1, 2, "causal.side")
    square = b.node("Concat", [side, side], "causal.square_shape", axis=0)
    filled = b.node("ConstantOfShape", [square], "causal.full",
                    value=onnx.numpy_helper.from_array(np.array([MIN], np.float32)))
    upper = b.node("Trilu", [filled, b.constant("causal.k", np.array(1))], "causal.triu", upper=1)
    later = b.node("Greater", [positions, b.node("Reshape", [positions, b.constant("causal.column", ints(-1, 1))],
                                                 "causal.cache_column")], "causal.later")
    causal = b.node("Mul", [upper, b.node("Cast", [later], "causal.later_float", to=TensorProto.FLOAT)], "causal.mask")
    causal = b.node("Unsqueeze", [causal, b.constant("causal.axes", ints(0, 1))], "causal.4d")
    batch = shape_dims(b, "input_ids", 0, 1, "causal.batch")
    sizes = b.node("Concat", [batch, b.constant("causal.keep", ints(1, -1, -1))], "causal.expand_sizes", axis=0)
    causal = b.node("Expand", [causal, b.node("Abs", [sizes], "causal.expand_shape")], "causal.expanded")
    length = shape_dims(b, "attention_mask", 1, 2, "causal.mask_length")
    zero, three = b.constant("causal.zero", ints(0)), b.constant("causal.last_axis", ints(3))
    cut = b.node("Slice", [causal, zero, length, three], "causal.cut")
    padding = b.node("Unsqueeze", [b.node("Cast", ["attention_mask"], "causal.attention_float", to=TensorProto.FLOAT),
                                   b.constant("causal.mask_axes", ints(1, 2))], "causal.padding_4d")
    padded = b.node("Equal", [b.node("Add", [cut, padding], "causal.sum"), b.constant("causal.fzero", scalar(0.0))],
                    "causal.padded")
    return b.node("Where", [padded, b.constant("causal.min", scalar(MIN)), cut], "causal.bias")


def sdpa(b: ModelBuilder, q: str, k: str, v: str, mask: str, head_size: int, name: str) -> str:
    """torchlib's scaled_dot_product_attention with a float mask, [batch, heads, sequence, head size]."""
    root = b.constant(f"{name}.root_scale", scalar(np.sqrt(1.0 / np.sqrt(head_size))))
    kt = b.node("Mul", [b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2]), root], f"{name}.kt_scaled")
    scores = b.node("MatMul", [b.node("Mul", [q, root], f"{name}.q_scaled"), kt], f"{name}.scores")
    weights = b.node("Softmax", [b.node("Add", [scores, mask], f"{name}.masked")], f"{name}.softmax", axis=-1)
    return b.node("MatMul", [weights, v], f"{name}.context")


# --- GPT-2 ---------------------------------------------------------------------------------------------------------


def conv1d(b: ModelBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    """GPT-2's Conv1D: addmm(bias, x.view(-1, d_in), weight).view(x.shape[:-1] + (d_out,)) -> Reshape, Gemm,
    Reshape to a shape computed from x's."""
    flat = b.node("Reshape", [x, b.constant(f"{name}.flat_shape", ints(-1, d_in))], f"{name}.flat")
    weight = b.weight(f"{name}.weight", (d_in, d_out), 1.0 / np.sqrt(d_in))
    product = b.node("Gemm", [flat, weight, b.weight(f"{name}.bias", (d_out,), 0.1)], f"{name}.addmm")
    leading = b.node("Shape", [x], f"{name}.leading", start=0, end=-1)
    size_out = b.node("Concat", [leading, b.constant(f"{name}.out", ints(d_out))], f"{name}.size_out", axis=0)
    return b.node("Reshape", [product, size_out], name)


def gelu_tanh(b: ModelBuilder, x: str, name: str) -> str:
    """gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))."""
    cubed = b.node("Pow", [x, b.constant(f"{name}.three", scalar(3.0))], f"{name}.cube")
    inner = b.node("Add", [x, b.node("Mul", [cubed, b.constant(f"{name}.c", scalar(0.044715))], f"{name}.cmul")],
                   f"{name}.inner")
    scaled = b.node("Mul", [inner, b.constant(f"{name}.k", scalar(np.sqrt(2.0 / np.pi)))], f"{name}.scaled")
    shifted = b.node("Add", [b.node("Tanh", [scaled], f"{name}.tanh"), b.constant(f"{name}.one", scalar(1.0))],
                     f"{name}.shifted")
    half = b.node("Mul", [x, b.constant(f"{name}.half", scalar(0.5))], f"{name}.half_x")
    return b.node("Mul", [half, shifted], name)


def gpt2(dims: Dims, layers: int, vocab: int, seed: int = 21) -> onnx.ModelProto:
    """GPT2Model: learned positions at Range(0, sequence), pre-norm blocks of Conv1D attention (q, k, v split from
    one c_attn) with the causal mask and gelu_new MLPs, ln_f. Output `last_hidden_state` [batch, sequence, hidden]."""
    b, d = ModelBuilder(seed=seed), dims.hidden
    positions, position_ids = cache_position(b)
    x = b.node("Add", [b.node("Gather", [b.weight("wte", (vocab, d), 0.5), "input_ids"], "wte.rows"),
                       b.node("Gather", [b.weight("wpe", (dims.tokens, d), 0.5), position_ids], "wpe.rows")], "embed")
    mask = causal_mask(b, positions)
    for layer in range(layers):
        name = f"h{layer}"
        qkv = conv1d(b, layer_norm(b, x, d, f"{name}.ln_1"), d, 3 * d, f"{name}.c_attn")
        parts = [f"{name}.{p}" for p in "qkv"]
        b.nodes.append(onnx.helper.make_node("Split", [qkv, b.constant(f"{name}.split", ints(d, d, d))], parts,
                                             axis=2))
        q, k, v = (heads_of(b, part, dims.heads, dims.head_size, part) for part in parts)
        context = sdpa(b, q, k, v, mask, dims.head_size, f"{name}.attn")
        x = b.node("Add", [x, conv1d(b, merge_heads(b, context, d, name), d, d, f"{name}.attn.c_proj")],
                   f"{name}.res1")
        hidden = gelu_tanh(b, conv1d(b, layer_norm(b, x, d, f"{name}.ln_2"), d, dims.ffn, f"{name}.c_fc"),
                           f"{name}.gelu")
        x = b.node("Add", [x, conv1d(b, hidden, dims.ffn, d, f"{name}.mlp.c_proj")], f"{name}.res2")
    y = layer_norm(b, x, d, "ln_f")
    return finish(b, "gpt2_dynamic", ["input_ids", "attention_mask"],
                  {"last_hidden_state": (y, ["batch", "sequence", d])})


# --- LLaMA and Qwen2 ---------------------------------------------------------------------------------------------


def rope_gathered(b: ModelBuilder, position_ids: str, dims: LlamaDims) -> tuple[str, str]:
    """LLaMA's cached rotary tables (transformers < 4.38): cos_cached[:sequence] then [position_ids], unsqueezed
    to [1, 1, sequence, head size]."""
    size = dims.head_size
    inverse = 1.0 / (10000.0 ** (np.arange(0, size, 2) / size))
    angles = np.outer(np.arange(dims.max_positions), inverse)
    angles = np.concatenate([angles, angles], axis=-1).astype(np.float32)
    length = shape_dims(b, "input_ids", 1, 2, "rope.length")
    tables = []
    for name, table in (("cos", np.cos(angles)), ("sin", np.sin(angles))):
        cached = b.node("Slice", [b.constant(f"rope.{name}_cached", table), b.constant(f"rope.{name}_zero", ints(0)),
                                  length], f"rope.{name}_cut")
        rows = b.node("Gather", [cached, position_ids], f"rope.{name}_rows")
        tables.append(b.node("Unsqueeze", [rows, b.constant(f"rope.{name}_axis", ints(1))], f"rope.{name}"))
    return tables[0], tables[1]


def rope_computed(b: ModelBuilder, position_ids: str, dims: LlamaDims) -> tuple[str, str]:
    """Qwen2's (and newer LLaMA's) rotary embedding: inv_freq[None, :, None] expanded to the batch of
    position_ids, MatMul by the float positions, Transpose, Concat with itself, Cos and Sin, unsqueezed at 1."""
    size = dims.head_size
    inverse = (1.0 / (10000.0 ** (np.arange(0, size, 2) / size))).astype(np.float32).reshape(1, -1, 1)
    batch = shape_dims(b, position_ids, 0, 1, "rope.batch")
    sizes = b.node("Concat", [batch, b.constant("rope.keep", ints(-1, 1))], "rope.expand_sizes", axis=0)
    frequencies = b.node("Expand", [b.constant("rope.inv_freq", inverse), b.node("Abs", [sizes], "rope.expand")],
                         "rope.inv_freq_expanded")
    where = b.node("Cast", [b.node("Unsqueeze", [position_ids, b.constant("rope.pos_axis", ints(1))],
                                   "rope.pos_3d")], "rope.pos_float", to=TensorProto.FLOAT)
    angles = b.node("Transpose", [b.node("MatMul", [frequencies, where], "rope.freqs_t")], "rope.freqs",
                    perm=[0, 2, 1])
    emb = b.node("Concat", [angles, angles], "rope.emb", axis=-1)
    tables = []
    for op in ("Cos", "Sin"):
        value = b.node("Mul", [b.node(op, [emb], f"rope.{op}"), b.constant(f"rope.{op}_scaling", scalar(1.0))],
                       f"rope.{op}_scaled")
        tables.append(b.node("Unsqueeze", [value, b.constant(f"rope.{op}_axis", ints(1))], f"rope.{op.lower()}"))
    return tables[0], tables[1]


def repeat_kv(b: ModelBuilder, x: str, dims: LlamaDims, name: str) -> str:
    """x[:, :, None].expand(batch, kv, n_rep, sequence, head size).reshape(batch, heads, sequence, head size)."""
    batch, length = shape_dims(b, x, 0, 1, f"{name}.batch"), shape_dims(b, x, 2, 3, f"{name}.length")
    kv, reps, size = (b.constant(f"{name}.{n}", ints(v)) for n, v in
                      (("kv", dims.kv_heads), ("reps", dims.heads // dims.kv_heads), ("size", dims.head_size)))
    target = b.node("Concat", [batch, kv, reps, length, size], f"{name}.target", axis=0)
    unsqueezed = b.node("Unsqueeze", [x, b.constant(f"{name}.axis", ints(2))], f"{name}.unsqueezed")
    expanded = b.node("Expand", [unsqueezed, target], f"{name}.expanded")
    shape = b.node("Concat", [batch, b.constant(f"{name}.heads", ints(dims.heads)), length, size], f"{name}.shape",
                   axis=0)
    return b.node("Reshape", [expanded, shape], name)


def llama_attention(b: ModelBuilder, x: str, cos: str, sin: str, mask: str, dims: LlamaDims, name: str,
                    bias: bool) -> str:
    """LlamaSdpaAttention / Qwen2's (q, k, v with biases): view(*input_shape, -1, head size), RoPE, repeat_kv,
    the mask cut to the keys' length, SDPA, reshape(*input_shape, -1), o_proj."""
    size = dims.head_size
    projected = []
    for p, width in (("q", dims.hidden), ("k", dims.kv_heads * size), ("v", dims.kv_heads * size)):
        value = _project(b, x, dims.hidden, width, f"{name}.{p}")
        if bias:
            value = b.node("Add", [value, b.weight(f"{name}.{p}.bias", (width,), 0.1)], f"{name}.{p}.biased")
        leading = shape_dims(b, x, 0, 2, f"{name}.{p}.leading")
        shape = b.node("Concat", [leading, b.constant(f"{name}.{p}.rest", ints(-1, size))], f"{name}.{p}.shape",
                       axis=0)
        split = b.node("Reshape", [value, shape], f"{name}.{p}.split")
        projected.append(b.node("Transpose", [split], f"{name}.{p}.heads", perm=[0, 2, 1, 3]))
    q, k, v = projected
    q, k = _rotate(b, q, cos, sin, size, f"{name}.q_rope"), _rotate(b, k, cos, sin, size, f"{name}.k_rope")
    k, v = repeat_kv(b, k, dims, f"{name}.rk"), repeat_kv(b, v, dims, f"{name}.rv")
    keys = shape_dims(b, k, 2, 3, f"{name}.keys")
    cut = b.node("Slice", [mask, b.constant(f"{name}.zero", ints(0)), keys, b.constant(f"{name}.axis3", ints(3))],
                 f"{name}.mask")
    context = b.node("Transpose", [sdpa(b, q, k, v, cut, size, name)], f"{name}.merge", perm=[0, 2, 1, 3])
    leading = shape_dims(b, x, 0, 2, f"{name}.merge_leading")
    shape = b.node("Concat", [leading, b.constant(f"{name}.rest", ints(-1))], f"{name}.merge_shape", axis=0)
    return _project(b, b.node("Reshape", [context, shape], f"{name}.merged"), dims.hidden, dims.hidden, f"{name}.o")


def llama(dims: LlamaDims, qwen2: bool = False, seed: int = 23) -> onnx.ModelProto:
    """LlamaForCausalLM's prefill (gathered rotary tables) or Qwen2ForCausalLM's (computed rotary embedding, q/k/v
    biases): GQA, RMSNorm, SiLU-gated MLP. Output `logits` [batch, sequence, vocab]."""
    b = ModelBuilder(seed=seed)
    x = b.node("Gather", [b.weight("embed.weight", (dims.vocab, dims.hidden), 0.5), "input_ids"], "embed")
    positions, position_ids = cache_position(b)
    mask = causal_mask(b, positions)
    cos, sin = (rope_computed if qwen2 else rope_gathered)(b, position_ids, dims)
    for layer in range(dims.layers):
        normed = _rms_norm(b, b.node("Cast", [x], f"layer{layer}.float", to=TensorProto.FLOAT), dims.hidden,
                           f"layer{layer}.norm1")
        x = b.node("Add", [x, llama_attention(b, normed, cos, sin, mask, dims, f"layer{layer}.attn", qwen2)],
                   f"layer{layer}.res1")
        x = b.node("Add", [x, _mlp(b, _rms_norm(b, x, dims.hidden, f"layer{layer}.norm2"), layer, dims)],
                   f"layer{layer}.res2")
    logits = _project(b, _rms_norm(b, x, dims.hidden, "norm"), dims.hidden, dims.vocab, "lm_head")
    name = "qwen2_dynamic" if qwen2 else "llama_dynamic"
    return finish(b, name, ["input_ids", "attention_mask"], {"logits": (logits, ["batch", "sequence", dims.vocab])})


# --- CLIP text ---------------------------------------------------------------------------------------------------


def clip_masks(b: ModelBuilder) -> tuple[str, str]:
    """CLIP's _create_4d_causal_attention_mask (min where Range < (Range + 1).view(-1, 1) is false, expanded to
    [batch, 1, sequence, sequence]) and _prepare_4d_attention_mask ((1 - mask) filled with min where set)."""
    side = shape_dims(b, "input_ids", 1, 2, "clip.side")
    filled = b.node("ConstantOfShape", [b.node("Concat", [side, side], "clip.square", axis=0)], "clip.full",
                    value=onnx.numpy_helper.from_array(np.array([MIN], np.float32)))
    count = scalar_dim(b, filled, -1, "clip.count")
    arange = b.node("Range", [b.constant("clip.start", np.array(0)), count, b.constant("clip.delta", np.array(1))],
                    "clip.mask_cond")
    column_shape = b.node("Concat", [shape_dims(b, filled, 1, 2, "clip.rows"), b.constant("clip.one", ints(1))],
                          "clip.column_shape", axis=0)
    next_row = b.node("Reshape", [b.node("Add", [arange, b.constant("clip.plus", np.array(1))], "clip.next"),
                                  column_shape], "clip.next_column")
    visible = b.node("Less", [arange, next_row], "clip.visible")
    causal = b.node("Where", [visible, b.constant("clip.zero", scalar(0.0)), filled], "clip.causal")
    sizes = b.node("Concat", [shape_dims(b, "input_ids", 0, 1, "clip.batch"), b.constant("clip.one_axis", ints(1)),
                              side, side], "clip.sizes", axis=0)
    causal = b.node("Expand", [b.node("Unsqueeze", [causal, b.constant("clip.axes", ints(0, 1))], "clip.causal_4d"),
                               sizes], "clip.causal_mask")
    padding = b.node("Unsqueeze", ["attention_mask", b.constant("clip.mask_axes", ints(1, 2))], "clip.mask_4d")
    expanded = b.node("Cast", [b.node("Expand", [padding, sizes], "clip.mask_expanded")], "clip.mask_float",
                      to=TensorProto.FLOAT)
    inverted = b.node("Sub", [b.constant("clip.fone", scalar(1.0)), expanded], "clip.inverted")
    flagged = b.node("Cast", [inverted], "clip.flagged", to=TensorProto.BOOL)
    return causal, b.node("Where", [flagged, b.constant("clip.min", scalar(MIN)), inverted], "clip.padding")


def clip_attention(b: ModelBuilder, x: str, causal: str, padding: str, dims: Dims, name: str) -> str:
    """CLIPAttention (eager): q scaled, heads as [batch * heads, -1, head size] for bmm, the weights viewed as
    [batch, heads, sequence, sequence] to add each mask and back, softmax, bmm, merged."""
    d, size = dims.hidden, dims.head_size
    batch = scalar_dim(b, x, 0, f"{name}.bsz")
    stacked = b.node("Unsqueeze", [b.node("Mul", [batch, b.constant(f"{name}.heads", np.array(dims.heads))],
                                          f"{name}.bsz_heads"), b.constant(f"{name}.zero", ints(0))],
                     f"{name}.bh")
    proj_shape = b.node("Concat", [stacked, b.constant(f"{name}.proj_rest", ints(-1, size))], f"{name}.proj", axis=0)
    parts = []
    for p in "qkv":
        value = linear_of(b, x, d, d, f"{name}.{p}")
        if p == "q":
            value = b.node("Mul", [value, b.constant(f"{name}.scale", scalar(size**-0.5))], f"{name}.q_scaled")
        heads = heads_of(b, value, dims.heads, size, f"{name}.{p}")
        parts.append(b.node("Reshape", [heads, proj_shape], f"{name}.{p}.flat"))
    q, k, v = parts
    weights = b.node("MatMul", [q, b.node("Transpose", [k], f"{name}.kt", perm=[0, 2, 1])], f"{name}.weights")
    batch_1d = shape_dims(b, x, 0, 1, f"{name}.batch")
    length = shape_dims(b, x, 1, 2, f"{name}.length")
    grouped_shape = b.node("Concat", [batch_1d, b.constant(f"{name}.heads_1d", ints(dims.heads)), length, length],
                           f"{name}.grouped_shape", axis=0)
    grouped = b.node("Reshape", [weights, grouped_shape], f"{name}.grouped")
    masked = b.node("Add", [b.node("Add", [grouped, causal], f"{name}.causal"), padding], f"{name}.padded")
    flat_shape = b.node("Concat", [stacked, length, length], f"{name}.flat_shape", axis=0)
    probs = b.node("Softmax", [b.node("Reshape", [masked, flat_shape], f"{name}.flat_weights")], f"{name}.softmax",
                   axis=-1)
    context = b.node("MatMul", [probs, v], f"{name}.context")
    out_shape = b.node("Concat", [batch_1d, b.constant(f"{name}.heads_2", ints(dims.heads)), length,
                                  b.constant(f"{name}.size", ints(size))], f"{name}.out_shape", axis=0)
    context = b.node("Transpose", [b.node("Reshape", [context, out_shape], f"{name}.context_4d")],
                     f"{name}.merge", perm=[0, 2, 1, 3])
    merged_shape = b.node("Concat", [batch_1d, length, b.constant(f"{name}.hidden", ints(d))], f"{name}.merged_shape",
                          axis=0)
    return linear_of(b, b.node("Reshape", [context, merged_shape], f"{name}.merged"), d, d, f"{name}.out")


def linear_of(b: ModelBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    """nn.Linear: MatMul by the transposed weight, Add the bias."""
    weight = b.weight(f"{name}.weight_t", (d_in, d_out), 1.0 / np.sqrt(d_in))
    return b.node("Add", [b.node("MatMul", [x, weight], f"{name}.mm"), b.weight(f"{name}.bias", (d_out,), 0.1)], name)


def clip_text(dims: Dims, layers: int, vocab: int, pooled: bool = True, seed: int = 25) -> onnx.ModelProto:
    """CLIPTextModel: token + position embeddings (position ids cut from a buffer), pre-norm layers with quick_gelu,
    the final LayerNorm, and the pooled output: the row of each sequence's largest token id (its end-of-text token)
    picked by GatherND at [Range(0, batch), ArgMax(input_ids)]. Outputs `last_hidden_state` [batch, sequence,
    hidden] and (with `pooled`) `pooler_output` [batch, hidden]."""
    b, d = ModelBuilder(seed=seed), dims.hidden
    length = shape_dims(b, "input_ids", 1, 2, "embed.length")
    buffer = b.constant("embed.position_ids", np.arange(dims.tokens, dtype=np.int64).reshape(1, -1))
    position_ids = b.node("Slice", [buffer, b.constant("embed.zero", ints(0)), length,
                                    b.constant("embed.axis", ints(1))], "embed.position_slice")
    x = b.node("Add", [b.node("Gather", [b.weight("token_embedding", (vocab, d), 0.5), "input_ids"], "embed.tokens"),
                       b.node("Gather", [b.weight("position_embedding", (dims.tokens, d), 0.5), position_ids],
                              "embed.positions")], "embed")
    causal, padding = clip_masks(b)
    for layer in range(layers):
        name = f"layer{layer}"
        x = b.node("Add", [x, clip_attention(b, layer_norm(b, x, d, f"{name}.ln1"), causal, padding, dims,
                                             f"{name}.attn")], f"{name}.res1")
        hidden = linear_of(b, layer_norm(b, x, d, f"{name}.ln2"), d, dims.ffn, f"{name}.fc1")
        gate = b.node("Sigmoid", [b.node("Mul", [hidden, b.constant(f"{name}.qg", scalar(1.702))], f"{name}.qg_x")],
                      f"{name}.qg_sigmoid")
        x = b.node("Add", [x, linear_of(b, b.node("Mul", [hidden, gate], f"{name}.quick_gelu"), dims.ffn, d,
                                        f"{name}.fc2")], f"{name}.res2")
    y = layer_norm(b, x, d, "final_layer_norm")
    outputs = {"last_hidden_state": (y, ["batch", "sequence", d])}
    if pooled:
        rows = b.node("Range", [b.constant("pool.start", np.array(0)), scalar_dim(b, y, 0, "pool.batch"),
                                b.constant("pool.delta", np.array(1))], "pool.rows")
        columns = b.node("ArgMax", [b.node("Cast", ["input_ids"], "pool.ids32", to=TensorProto.INT32)], "pool.eot",
                         axis=-1, keepdims=0)
        last = b.constant("pool.last", ints(-1))
        index = b.node("Concat", [b.node("Unsqueeze", [rows, last], "pool.row_col"),
                                  b.node("Unsqueeze", [columns, last], "pool.eot_col")], "pool.index", axis=-1)
        outputs["pooler_output"] = (b.node("GatherND", [y, index], "pool.pooled"), ["batch", d])
    return finish(b, "clip_text_dynamic", ["input_ids", "attention_mask"], outputs)
