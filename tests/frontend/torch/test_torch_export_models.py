"""`from_exported_program` on small models written here: a ResNet-style net, a MobileNet-style block, a 2-layer
BERT-style encoder and a 2-layer GPT-2-style causal decoder (hidden 64, 4 heads, sequence 16) match PyTorch eager
(float32: rtol 1e-4, atol 1e-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402

nn = torch.nn
F = torch.nn.functional
HIDDEN, HEADS, SEQUENCE, VOCABULARY = 64, 4, 16, 100


def check_against_eager(module: nn.Module, *examples: torch.Tensor) -> None:
    module = module.eval()
    imported = from_exported_program(torch.export.export(module, examples))
    session = InferenceSession.from_imported(imported)
    outputs = session.run(None, {info.name: example.numpy() for info, example in zip(imported.inputs, examples)})
    with torch.no_grad():
        expected = module(*examples)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


def randomise_batch_norms(module: nn.Module) -> None:
    """Running statistics and affine parameters away from their identity defaults, so that they are tested."""
    for norm in module.modules():
        if isinstance(norm, nn.BatchNorm2d):
            norm.running_mean.uniform_(-0.5, 0.5)
            norm.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(norm.weight, 0.5, 1.5)
            nn.init.uniform_(norm.bias, -0.5, 0.5)


class BasicBlock(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride, bias=False), nn.BatchNorm2d(channels_out)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class TinyResNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.blocks = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2))
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


class MobileBlock(nn.Module):
    """An inverted residual: expand 1x1, depthwise 3x3 (groups = channels), squeeze-excite, project 1x1."""

    def __init__(self, channels: int = 16, expanded: int = 48):
        super().__init__()
        self.expand = nn.Sequential(
            nn.Conv2d(channels, expanded, 1, bias=False), nn.BatchNorm2d(expanded), nn.Hardswish()
        )
        self.depthwise = nn.Sequential(
            nn.Conv2d(expanded, expanded, 3, 1, 1, groups=expanded, bias=False),
            nn.BatchNorm2d(expanded),
            nn.Hardswish(),
        )
        self.squeeze = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Conv2d(expanded, 12, 1), nn.ReLU(), nn.Conv2d(12, expanded, 1), nn.Hardsigmoid()
        )
        self.project = nn.Sequential(nn.Conv2d(expanded, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.depthwise(self.expand(x))
        return x + self.project(y * self.squeeze(y))


class TinyMobileNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.block = MobileBlock()
        self.head = nn.Sequential(nn.Linear(16, 32), nn.Hardswish(), nn.Linear(32, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.stem(x)).mean((2, 3)))


class SelfAttention(nn.Module):
    """Multi-head attention, the scores by explicit matmul and softmax, or by scaled_dot_product_attention."""

    def __init__(self, fused: bool):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.fused = fused

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, causal: bool) -> torch.Tensor:
        batch, length, _ = x.shape
        q, k, v = (t.view(batch, length, HEADS, -1).transpose(1, 2) for t in self.qkv(x).split(HIDDEN, dim=-1))
        if self.fused:
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(HIDDEN // HEADS)
            if causal:
                allowed = torch.ones(length, length, dtype=torch.bool).tril()
                scores = scores.masked_fill(~allowed, float("-inf"))
            if mask is not None:
                scores = scores + mask
            context = scores.softmax(-1) @ v
        return self.out(context.transpose(1, 2).reshape(batch, length, HIDDEN))


class EncoderLayer(nn.Module):
    """Post-LN BERT layer: attention, residual, LayerNorm, GELU (erf) feed-forward, residual, LayerNorm."""

    def __init__(self, fused: bool):
        super().__init__()
        self.attention = SelfAttention(fused)
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN, eps=1e-12), nn.LayerNorm(HIDDEN, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(), nn.Linear(4 * HIDDEN, HIDDEN))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attention(x, mask, causal=False))
        return self.norm2(x + self.ffn(x))


class TinyBert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCABULARY, HIDDEN)
        self.positions = nn.Embedding(SEQUENCE, HIDDEN)
        self.types = nn.Embedding(2, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([EncoderLayer(fused=False), EncoderLayer(fused=True)])
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.tokens(ids) + self.positions(positions) + self.types(torch.zeros_like(ids)))
        additive = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, additive)
        return x, torch.tanh(self.pooler(x[:, 0]))


class DecoderBlock(nn.Module):
    """Pre-LN GPT-2 block: LayerNorm, causal attention, residual, LayerNorm, GELU (tanh) MLP, residual."""

    def __init__(self, fused: bool):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.attention = SelfAttention(fused)
        self.mlp = nn.Sequential(
            nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(approximate="tanh"), nn.Linear(4 * HIDDEN, HIDDEN)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x), None, causal=True)
        return x + self.mlp(self.norm2(x))


class TinyGpt2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCABULARY, HIDDEN)
        self.positions = nn.Embedding(SEQUENCE, HIDDEN)
        self.blocks = nn.ModuleList([DecoderBlock(fused=False), DecoderBlock(fused=True)])
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCABULARY, bias=False)
        self.head.weight = self.tokens.weight  # tied, as in GPT-2

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


@pytest.fixture(autouse=True)
def seeded() -> None:
    torch.manual_seed(0)


def test_resnet_style_net_matches_eager() -> None:
    model = TinyResNet()
    randomise_batch_norms(model)
    check_against_eager(model, torch.randn(2, 3, 32, 32))


def test_mobilenet_style_depthwise_block_matches_eager() -> None:
    model = TinyMobileNet()
    randomise_batch_norms(model)
    check_against_eager(model, torch.randn(2, 3, 32, 32))


def test_bert_style_encoder_matches_eager() -> None:
    ids = torch.randint(0, VOCABULARY, (2, SEQUENCE))
    attention_mask = torch.ones(2, SEQUENCE, dtype=torch.int64)
    attention_mask[1, 11:] = 0
    check_against_eager(TinyBert(), ids, attention_mask)


def test_gpt2_style_causal_decoder_matches_eager() -> None:
    check_against_eager(TinyGpt2(), torch.randint(0, VOCABULARY, (2, SEQUENCE)))
