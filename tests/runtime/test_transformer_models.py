"""Transformer-era models as `torch.onnx.export` (dynamo, opset 18) writes them, built node by node with onnx.helper
(torch is not a dependency): an `nn.TransformerEncoderLayer` (erf-GELU and ReLU feed-forward), a ViT-style
classifier, a ConvNeXt block, and Conv1d + GroupNorm nets (the exporter's Reshape / InstanceNormalization / Reshape
pattern, and GroupNormalization-21). Each runs through `InferenceSession` with native kernels at O0 and O3 and
matches ONNX Runtime within 1e-4 relative.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from model_builder import ModelBuilder

from minimlc.runtime import InferenceSession

RTOL, ATOL = 1e-4, 1e-5
S, D, HEADS, FFN = 16, 32, 4, 64


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _scalar(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float32)


def _linear(b: ModelBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    """nn.Linear as the exporter writes it for 3-D input: MatMul by the transposed weight, then Add the bias."""
    weight = b.weight(f"{name}.weight_t", (d_in, d_out), scale=1.0 / np.sqrt(d_in))
    return b.node("Add", [b.node("MatMul", [x, weight], f"{name}.mm"), b.weight(f"{name}.bias", (d_out,), 0.1)], name)


def _layer_norm(b: ModelBuilder, x: str, d: int, name: str) -> str:
    scale = b.constant(f"{name}.weight", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
    return b.node("LayerNormalization", [x, scale, b.weight(f"{name}.bias", (d,), 0.1)], name, axis=-1, epsilon=1e-5)


def _gelu(b: ModelBuilder, x: str, name: str) -> str:
    """Exact GELU as the opset-18 exporter writes it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    scaled = b.node("Div", [x, b.constant(f"{name}.sqrt2", _scalar(1.4142135))], f"{name}.div")
    erf = b.node("Erf", [scaled], f"{name}.erf")
    shifted = b.node("Add", [erf, b.constant(f"{name}.one", _scalar(1.0))], f"{name}.add")
    return b.node("Mul", [b.node("Mul", [x, shifted], f"{name}.mul"), b.constant(f"{name}.half", _scalar(0.5))], name)


def _heads(b: ModelBuilder, x: str, tokens: int, name: str) -> str:
    """[1, S, D] -> [1, H, S, D / H]."""
    split = b.node("Reshape", [x, b.constant(f"{name}.shape", _ints(1, tokens, HEADS, D // HEADS))], f"{name}.split")
    return b.node("Transpose", [split], f"{name}.heads", perm=[0, 2, 1, 3])


def _attention(b: ModelBuilder, x: str, tokens: int, name: str) -> str:
    """nn.MultiheadAttention (self-attention, no mask): projections, scaled dot product per head, output projection."""
    q, k, v = (_heads(b, _linear(b, x, D, D, f"{name}.{p}"), tokens, f"{name}.{p}") for p in "qkv")
    keys = b.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, keys], f"{name}.scores")
    scaled = b.node("Mul", [scores, b.constant(f"{name}.scale", _scalar(1.0 / np.sqrt(D // HEADS)))], f"{name}.scaled")
    weights = b.node("Softmax", [scaled], f"{name}.softmax", axis=-1)
    context = b.node("MatMul", [weights, v], f"{name}.context")
    context = b.node("Transpose", [context], f"{name}.merge", perm=[0, 2, 1, 3])
    merged = b.node("Reshape", [context, b.constant(f"{name}.shape", _ints(1, tokens, D))], f"{name}.merged")
    return _linear(b, merged, D, D, f"{name}.out")


def _feed_forward(b: ModelBuilder, x: str, activation: str, name: str) -> str:
    hidden = _linear(b, x, D, FFN, f"{name}.linear1")
    active = _gelu(b, hidden, f"{name}.gelu") if activation == "gelu" else b.node("Relu", [hidden], f"{name}.relu")
    return _linear(b, active, FFN, D, f"{name}.linear2")


def _encoder_layer(b: ModelBuilder, x: str, tokens: int, activation: str, name: str, norm_first: bool = False) -> str:
    """nn.TransformerEncoderLayer(batch_first=True): post-norm (the default) or pre-norm (ViT)."""
    if norm_first:
        attended = b.node("Add", [x, _attention(b, _layer_norm(b, x, D, f"{name}.norm1"), tokens, f"{name}.attn")],
                          f"{name}.res1")
        fed = _feed_forward(b, _layer_norm(b, attended, D, f"{name}.norm2"), activation, f"{name}.ffn")
        return b.node("Add", [attended, fed], f"{name}.res2")
    attended = _layer_norm(b, b.node("Add", [x, _attention(b, x, tokens, f"{name}.attn")], f"{name}.res1"), D,
                           f"{name}.norm1")
    fed = _feed_forward(b, attended, activation, f"{name}.ffn")
    return _layer_norm(b, b.node("Add", [attended, fed], f"{name}.res2"), D, f"{name}.norm2")


def transformer_encoder_layer(activation: str) -> onnx.ModelProto:
    b = ModelBuilder(seed=1)
    y = _encoder_layer(b, "x", S, activation, "layer")
    return b.model([1, S, D], y, [1, S, D], opset=18)


def vit() -> onnx.ModelProto:
    """Patch embedding (8x8 stride-8 Conv), tokens, class token, position embedding, a pre-norm encoder layer, the
    final LayerNorm, the class token (Gather at a constant index) and a Gemm head."""
    b = ModelBuilder(seed=2)
    patches = b.conv("x", 3, D, "patch", size=8, strides=[8, 8], pads=[0, 0, 0, 0])
    flat = b.node("Reshape", [patches, b.constant("flat.shape", _ints(1, D, 16))], "flat")
    tokens = b.node("Transpose", [flat], "tokens", perm=[0, 2, 1])
    joined = b.node("Concat", [b.weight("cls_token", (1, 1, D), 0.02), tokens], "joined", axis=1)
    embedded = b.node("Add", [joined, b.weight("pos_embedding", (1, 17, D), 0.02)], "embedded")
    encoded = _layer_norm(b, _encoder_layer(b, embedded, 17, "gelu", "block", norm_first=True), D, "norm")
    cls = b.node("Gather", [encoded, b.constant("cls.index", _ints(0).reshape(()))], "cls", axis=1)
    head = b.node("Gemm", [cls, b.weight("head.weight", (10, D), 0.2), b.weight("head.bias", (10,), 0.1)], "head",
                  transB=1)
    return b.model([1, 3, 32, 32], head, [1, 10], opset=18)


def convnext_block() -> onnx.ModelProto:
    """Depthwise 7x7 Conv, channels-last LayerNorm, MatMul FFN with erf-GELU, layer scale, back to NCHW, residual."""
    b = ModelBuilder(seed=3)
    c = 16
    depthwise = b.node("Conv", ["x", b.weight("dw.w", (c, 1, 7, 7), 0.1), b.weight("dw.b", (c,), 0.1)], "dw",
                       kernel_shape=[7, 7], pads=[3, 3, 3, 3], group=c)
    last = b.node("Transpose", [depthwise], "nhwc", perm=[0, 2, 3, 1])
    normed = b.node("LayerNormalization", [last, b.weight("ln.w", (c,), 0.5), b.weight("ln.b", (c,), 0.1)], "ln",
                    axis=-1, epsilon=1e-6)
    hidden = _gelu(b, b.node("Add", [b.node("MatMul", [normed, b.weight("pw1.w", (c, 4 * c), 0.25)], "pw1.mm"),
                                     b.weight("pw1.b", (4 * c,), 0.1)], "pw1"), "gelu")
    out = b.node("Add", [b.node("MatMul", [hidden, b.weight("pw2.w", (4 * c, c), 0.12)], "pw2.mm"),
                         b.weight("pw2.b", (c,), 0.1)], "pw2")
    scaled = b.node("Mul", [out, b.weight("gamma", (c,), 0.5)], "layer_scale")
    back = b.node("Transpose", [scaled], "nchw", perm=[0, 3, 1, 2])
    y = b.node("Add", ["x", back], "residual")
    return b.model([1, c, 14, 14], y, [1, c, 14, 14], opset=18)


def conv1d_group_norm(exported: bool) -> onnx.ModelProto:
    """Conv1d -> GroupNorm(2 groups) -> ReLU -> Conv1d: the group norm as the exporter writes it (Reshape to
    [N, G, -1], InstanceNormalization with unit scale, Reshape back, per-channel Mul and Add) or as
    GroupNormalization-21."""
    b = ModelBuilder(seed=4)
    c, groups, length = 8, 2, 32
    h = b.node("Conv", ["x", b.weight("c1.w", (c, 4, 3), 0.3), b.weight("c1.b", (c,), 0.1)], "c1", kernel_shape=[3],
               pads=[1, 1])
    if exported:
        grouped = b.node("Reshape", [h, b.constant("g.shape", _ints(1, groups, -1))], "grouped")
        ones, zeros = np.ones(groups, np.float32), np.zeros(groups, np.float32)
        normed = b.node("InstanceNormalization", [grouped, b.constant("g.ones", ones), b.constant("g.zeros", zeros)],
                        "instance", epsilon=1e-5)
        back = b.node("Reshape", [normed, b.constant("c.shape", _ints(1, c, length))], "ungrouped")
        scaled = b.node("Mul", [back, b.weight("gn.w", (c, 1), 0.5)], "gn.scale")
        h = b.node("Add", [scaled, b.weight("gn.b", (c, 1), 0.1)], "gn")
    else:
        h = b.node("GroupNormalization", [h, b.weight("gn.w", (c,), 0.5), b.weight("gn.b", (c,), 0.1)], "gn",
                   num_groups=groups, epsilon=1e-5)
    y = b.node("Conv", [b.node("Relu", [h], "relu"), b.weight("c2.w", (4, c, 3), 0.3)], "c2", kernel_shape=[3],
               pads=[1, 1])
    return b.model([1, 4, length], y, [1, 4, length], opset=18 if exported else 21)


MODELS = {
    "encoder_layer_gelu": lambda: transformer_encoder_layer("gelu"),
    "encoder_layer_relu": lambda: transformer_encoder_layer("relu"),
    "vit": vit,
    "convnext_block": convnext_block,
    "conv1d_group_norm_exported": lambda: conv1d_group_norm(exported=True),
    "conv1d_group_norm_21": lambda: conv1d_group_norm(exported=False),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_onnxruntime(name: str, opt_level: int) -> None:
    model = MODELS[name]()
    shape = [dim.dim_value for dim in model.graph.input[0].type.tensor_type.shape.dim]
    feeds = {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    ort = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = ort.run(None, feeds)
    session = InferenceSession(model, opt_level=opt_level)
    (actual,) = session.run(None, feeds)
    assert session.stats["kernels"] > 0
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
