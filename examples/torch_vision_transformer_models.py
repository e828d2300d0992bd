"""torchvision's vision transformers written in plain torch: ViT-B/16 (class token, position embedding,
`nn.MultiheadAttention` encoder) and Swin-T (shifted windows, relative position bias, patch merging), layer for layer
as torchvision builds them, with smaller widths and depths for test models.

    model = vit_b_16(image_size=64).eval()
    logits = model(torch.randn(1, 3, 64, 64))   # [1, 1000]
"""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from torch_vision_models import Permute, StochasticDepth


class MLPBlock(nn.Sequential):
    """Linear, GELU, dropout, linear, dropout (torchvision's `MLPBlock` / `MLP`)."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.0):
        super().__init__(
            nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim), nn.Dropout(dropout)
        )


class EncoderBlock(nn.Module):
    """Pre-LN transformer block: LayerNorm, multi-head self-attention, residual, LayerNorm, MLP, residual."""

    def __init__(self, heads: int, hidden: int, mlp: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.dropout = nn.Dropout(0.0)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-6)
        self.mlp = MLPBlock(hidden, mlp)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = self.dropout(y) + x
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, sequence: int, layers: int, heads: int, hidden: int, mlp: int):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.empty(1, sequence, hidden).normal_(std=0.02))
        self.dropout = nn.Dropout(0.0)
        self.layers = nn.Sequential(*[EncoderBlock(heads, hidden, mlp) for _ in range(layers)])
        self.ln = nn.LayerNorm(hidden, eps=1e-6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(
        self,
        image_size: int = 224,
        patch_size: int = 16,
        layers: int = 12,
        heads: int = 12,
        hidden: int = 768,
        mlp: int = 3072,
        num_classes: int = 1000,
    ):
        super().__init__()
        self.patch_size, self.hidden = patch_size, hidden
        self.conv_proj = nn.Conv2d(3, hidden, patch_size, patch_size)
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.encoder = Encoder((image_size // patch_size) ** 2 + 1, layers, heads, hidden, mlp)
        self.heads = nn.Sequential(nn.Linear(hidden, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch = x.shape[0]
        x = self.conv_proj(x).reshape(batch, self.hidden, -1).permute(0, 2, 1)
        x = torch.cat([self.class_token.expand(batch, -1, -1), x], dim=1)
        return self.heads(self.encoder(x)[:, 0])


def vit_b_16(image_size: int = 224, num_classes: int = 1000) -> VisionTransformer:
    return VisionTransformer(image_size, 16, 12, 12, 768, 3072, num_classes)


def relative_position_index(window: int) -> torch.Tensor:
    """For every pair of positions in a window, the row of their offset in the relative position bias table."""
    coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
    relative = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
    relative[:, :, 0] += window - 1
    relative[:, :, 1] += window - 1
    relative[:, :, 0] *= 2 * window - 1
    return relative.sum(-1).flatten()


def shifted_window_attention(
    x: torch.Tensor, attention: ShiftedWindowAttention, bias: torch.Tensor, window: int, shift: int
) -> torch.Tensor:
    """torchvision's `shifted_window_attention`: pad to whole windows, roll by the shift, attend within each window
    (masking pairs that the roll brought from different regions), then undo the roll and the padding."""
    batch, height, width, channels = x.shape
    x = F.pad(x, (0, 0, 0, (window - width % window) % window, 0, (window - height % window) % window))
    _, padded_h, padded_w, _ = x.shape
    shifts = [0 if window >= padded_h else shift, 0 if window >= padded_w else shift]
    if sum(shifts) > 0:
        x = torch.roll(x, shifts=(-shifts[0], -shifts[1]), dims=(1, 2))
    windows = (padded_h // window) * (padded_w // window)
    x = x.view(batch, padded_h // window, window, padded_w // window, window, channels)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(batch * windows, window * window, channels)
    heads = attention.num_heads
    qkv = F.linear(x, attention.qkv.weight, attention.qkv.bias)
    qkv = qkv.reshape(x.size(0), x.size(1), 3, heads, channels // heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    q = q * (channels // heads) ** -0.5
    scores = q.matmul(k.transpose(-2, -1)) + bias
    if sum(shifts) > 0:
        mask = x.new_zeros((padded_h, padded_w))
        h_slices = ((0, -window), (-window, -shifts[0]), (-shifts[0], None))
        w_slices = ((0, -window), (-window, -shifts[1]), (-shifts[1], None))
        region = 0
        for h in h_slices:
            for w in w_slices:
                mask[h[0] : h[1], w[0] : w[1]] = region
                region += 1
        mask = mask.view(padded_h // window, window, padded_w // window, window)
        mask = mask.permute(0, 2, 1, 3).reshape(windows, window * window)
        mask = mask.unsqueeze(1) - mask.unsqueeze(2)
        mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
        scores = scores.view(x.size(0) // windows, windows, heads, x.size(1), x.size(1))
        scores = (scores + mask.unsqueeze(1).unsqueeze(0)).view(-1, heads, x.size(1), x.size(1))
    x = F.softmax(scores, dim=-1).matmul(v).transpose(1, 2).reshape(x.size(0), x.size(1), channels)
    x = F.linear(x, attention.proj.weight, attention.proj.bias)
    x = x.view(batch, padded_h // window, padded_w // window, window, window, channels)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(batch, padded_h, padded_w, channels)
    if sum(shifts) > 0:
        x = torch.roll(x, shifts=(shifts[0], shifts[1]), dims=(1, 2))
    return x[:, :height, :width, :].contiguous()


class ShiftedWindowAttention(nn.Module):
    def __init__(self, dim: int, window: int, shift: int, heads: int):
        super().__init__()
        self.window, self.shift, self.num_heads = window, shift, heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.relative_position_bias_table = nn.Parameter(torch.zeros((2 * window - 1) ** 2, heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        self.register_buffer("relative_position_index", relative_position_index(window))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = self.window * self.window
        bias = self.relative_position_bias_table[self.relative_position_index].view(size, size, -1)
        bias = bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        return shifted_window_attention(x, self, bias, self.window, self.shift)


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, window: int, shift: int, drop: float):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = ShiftedWindowAttention(dim, window, shift, heads)
        self.stochastic_depth = StochasticDepth(drop)
        self.norm2 = nn.LayerNorm(dim, eps=1e-5)
        self.mlp = MLPBlock(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class PatchMerging(nn.Module):
    """Each 2x2 patch's four pixels concatenated, LayerNorm, linear down to twice the channels."""

    def __init__(self, dim: int):
        super().__init__()
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        height, width = x.shape[-3:-1]
        x = F.pad(x, (0, 0, 0, width % 2, 0, height % 2))
        x = torch.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]], -1)
        return self.reduction(self.norm(x))


class SwinTransformer(nn.Module):
    def __init__(
        self,
        embed_dim: int = 96,
        depths: tuple[int, ...] = (2, 2, 6, 2),
        heads: tuple[int, ...] = (3, 6, 12, 24),
        window: int = 7,
        stochastic_depth: float = 0.2,
        num_classes: int = 1000,
    ):
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-5)
        layers: list[nn.Module] = [nn.Sequential(nn.Conv2d(3, embed_dim, 4, 4), Permute([0, 2, 3, 1]), norm(embed_dim))]
        total, block_id = sum(depths), 0
        for stage, (depth, stage_heads) in enumerate(zip(depths, heads)):
            dim = embed_dim * 2**stage
            blocks = []
            for index in range(depth):
                drop = stochastic_depth * block_id / (total - 1)
                blocks.append(
                    SwinTransformerBlock(dim, stage_heads, window, 0 if index % 2 == 0 else window // 2, drop)
                )
                block_id += 1
            layers.append(nn.Sequential(*blocks))
            if stage < len(depths) - 1:
                layers.append(PatchMerging(dim))
        self.features = nn.Sequential(*layers)
        features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm(features)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))
