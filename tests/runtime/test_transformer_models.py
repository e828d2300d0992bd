"""Transformer-era models as `torch.onnx.export` (dynamo, opset 18) writes them, built node by node with onnx.helper
(torch is not a dependency): an `nn.TransformerEncoderLayer` (erf-GELU and ReLU feed-forward; post- and pre-norm
with the exporter's packed in-projection and SDPA decomposition), a shifted-window Swin block, a ViT-style
classifier, BERT and a GPT decoder block fed int64 token ids (`examples/transformer_models.py`), a ConvNeXt block,
and Conv1d + GroupNorm nets (the exporter's Reshape / InstanceNormalization / Reshape
pattern, and GroupNormalization-21). Each runs through `InferenceSession` with native kernels at O0 and O3 and
matches ONNX Runtime within 1e-4 relative.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from model_builder import ModelBuilder
from transformer_models import (
    Dims,
    bert,
    gelu,
    gpt,
    ints,
    swin_block,
    swin_windows,
    torch_encoder_layer,
    transformer_encoder_layer,
    vit,
)

from minimlc import InferenceSession

RTOL, ATOL = 1e-4, 1e-5
DIMS = Dims(tokens=16, hidden=32, heads=4, ffn=64)


def convnext_block() -> onnx.ModelProto:
    """Depthwise 7x7 Conv, channels-last LayerNorm, MatMul FFN with erf-GELU, layer scale, back to NCHW, residual."""
    b = ModelBuilder(seed=3)
    c = 16
    depthwise = b.node("Conv", ["x", b.weight("dw.w", (c, 1, 7, 7), 0.1), b.weight("dw.b", (c,), 0.1)], "dw",
                       kernel_shape=[7, 7], pads=[3, 3, 3, 3], group=c)
    last = b.node("Transpose", [depthwise], "nhwc", perm=[0, 2, 3, 1])
    normed = b.node("LayerNormalization", [last, b.weight("ln.w", (c,), 0.5), b.weight("ln.b", (c,), 0.1)], "ln",
                    axis=-1, epsilon=1e-6)
    hidden = gelu(b, b.node("Add", [b.node("MatMul", [normed, b.weight("pw1.w", (c, 4 * c), 0.25)], "pw1.mm"),
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
        grouped = b.node("Reshape", [h, b.constant("g.shape", ints(1, groups, -1))], "grouped")
        ones, zeros = np.ones(groups, np.float32), np.zeros(groups, np.float32)
        normed = b.node("InstanceNormalization", [grouped, b.constant("g.ones", ones), b.constant("g.zeros", zeros)],
                        "instance", epsilon=1e-5)
        back = b.node("Reshape", [normed, b.constant("c.shape", ints(1, c, length))], "ungrouped")
        scaled = b.node("Mul", [back, b.weight("gn.w", (c, 1), 0.5)], "gn.scale")
        h = b.node("Add", [scaled, b.weight("gn.b", (c, 1), 0.1)], "gn")
    else:
        h = b.node("GroupNormalization", [h, b.weight("gn.w", (c,), 0.5), b.weight("gn.b", (c,), 0.1)], "gn",
                   num_groups=groups, epsilon=1e-5)
    y = b.node("Conv", [b.node("Relu", [h], "relu"), b.weight("c2.w", (4, c, 3), 0.3)], "c2", kernel_shape=[3],
               pads=[1, 1])
    return b.model([1, 4, length], y, [1, 4, length], opset=18 if exported else 21)


MODELS = {
    "encoder_layer_gelu": lambda: transformer_encoder_layer(DIMS, "gelu"),
    "encoder_layer_relu": lambda: transformer_encoder_layer(DIMS, "relu"),
    "torch_encoder_layer_post_norm": lambda: torch_encoder_layer(DIMS, "relu", norm_first=False),
    "torch_encoder_layer_pre_norm": lambda: torch_encoder_layer(DIMS, "gelu", norm_first=True),
    "swin_block": lambda: swin_block(side=8, window=4, dims=Dims(tokens=16, hidden=32, heads=2, ffn=64)),
    "vit": lambda: vit(Dims(tokens=17, hidden=32, heads=4, ffn=64), layers=1, image=32, patch=8, classes=10),
    "convnext_block": convnext_block,
    "conv1d_group_norm_exported": lambda: conv1d_group_norm(exported=True),
    "conv1d_group_norm_21": lambda: conv1d_group_norm(exported=False),
}


@pytest.mark.slow
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


TOKEN_MODELS = {
    "bert": lambda: bert(DIMS, layers=2, vocab=100),
    "gpt": lambda: gpt(DIMS, vocab=100),
}


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(TOKEN_MODELS))
def test_token_model_runs_natively_for_two_inputs(name: str, opt_level: int) -> None:
    """The ids flow at run time: one session, two inputs (negative ids included), both as ONNX Runtime computes."""
    model = TOKEN_MODELS[name]()
    ort = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    session = InferenceSession(model, opt_level=opt_level)
    assert session.stats["kernels"] > 0
    rng = np.random.default_rng(0)
    outputs = []
    for _ in range(2):
        feeds = {"x": rng.integers(-100, 100, (1, DIMS.tokens), dtype=np.int64)}
        (expected,) = ort.run(None, feeds)
        (actual,) = session.run(None, feeds)
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
        outputs.append(actual)
    assert not np.allclose(outputs[0], outputs[1])


def test_swin_windows_match_swin() -> None:
    """The relative position index and shifted-window mask, checked on a 4x4 image of 2x2 windows by hand."""
    index, mask = swin_windows(side=4, window=2)
    assert index.reshape(4, 4)[0].tolist() == [4, 3, 1, 0]  # token (0, 0) against (0, 0), (0, 1), (1, 0), (1, 1)
    assert index.reshape(4, 4).diagonal().tolist() == [4, 4, 4, 4]
    assert mask.shape == (4, 4, 4)
    assert not mask[0].any()  # the top-left window holds one region
    assert mask[3].tolist()[0] == [0.0, -100.0, -100.0, -100.0]  # the bottom-right window: four regions
