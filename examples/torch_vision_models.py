"""torchvision's convolutional classifiers written in plain torch (torchvision's wheel needs a CUDA torch): ResNet-18
and ResNet-50, MobileNetV2, MobileNetV3-Small, EfficientNet-B0 and ConvNeXt-T, layer for layer as torchvision builds
them (its module names, so that its state dicts load), with a `width` multiplier for small test models.

    model = resnet18().eval()
    logits = model(torch.randn(1, 3, 224, 224))   # [1, 1000]

The transformers (ViT-B/16, Swin-T) are in `torch_vision_transformer_models.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn


def make_divisible(value: float, divisor: int = 8) -> int:
    """torchvision's `_make_divisible`: `value` rounded to a multiple of `divisor`, not below 90% of it."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def torchvision_init(model: nn.Module) -> None:
    """torchvision's initialisation of its CNNs: convolutions He-normal (fan out), norms one and zero, linear layers
    small normals (without it, deep stacks of default-initialised layers shrink activations to nothing)."""
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.BatchNorm2d | nn.GroupNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, 0, 0.01)
            nn.init.zeros_(module.bias)


def conv_norm_activation(
    channels_in: int,
    channels_out: int,
    kernel: int = 3,
    stride: int = 1,
    groups: int = 1,
    norm: Callable[[int], nn.Module] = nn.BatchNorm2d,
    activation: Callable[[], nn.Module] | None = nn.ReLU,
) -> nn.Sequential:
    """torchvision's `Conv2dNormActivation`: a bias-free convolution (padding keeps the size), a norm, an activation."""
    layers = [nn.Conv2d(channels_in, channels_out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False)]
    layers.append(norm(channels_out))
    if activation is not None:
        layers.append(activation())
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, channels_in: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class Bottleneck(nn.Module):
    """ResNet V1.5: the stride on the 3x3 convolution."""

    expansion = 4

    def __init__(self, channels_in: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet(nn.Module):
    def __init__(
        self, block: type[BasicBlock | Bottleneck], layers: list[int], num_classes: int = 1000, width: int = 64
    ):
        super().__init__()
        self.channels = width
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(block, width, layers[0], 1)
        self.layer2 = self._make_layer(block, width * 2, layers[1], 2)
        self.layer3 = self._make_layer(block, width * 4, layers[2], 2)
        self.layer4 = self._make_layer(block, width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * block.expansion, num_classes)
        torchvision_init(self)

    def _make_layer(self, block: type[BasicBlock | Bottleneck], planes: int, blocks: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.channels != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.channels, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.channels, planes, stride, downsample)]
        self.channels = planes * block.expansion
        layers += [block(self.channels, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18(num_classes: int = 1000, width: int = 64) -> ResNet:
    return ResNet(BasicBlock, [2, 2, 2, 2], num_classes, width)


def resnet50(num_classes: int = 1000, width: int = 64) -> ResNet:
    return ResNet(Bottleneck, [3, 4, 6, 3], num_classes, width)


class InvertedResidual(nn.Module):
    """MobileNetV2's block: expand 1x1 (ReLU6), depthwise 3x3 (ReLU6), linear projection; residual at stride 1."""

    def __init__(self, channels_in: int, channels_out: int, stride: int, expand_ratio: int):
        super().__init__()
        hidden = round(channels_in * expand_ratio)
        self.use_res_connect = stride == 1 and channels_in == channels_out
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(conv_norm_activation(channels_in, hidden, 1, activation=nn.ReLU6))
        layers += [
            conv_norm_activation(hidden, hidden, 3, stride, groups=hidden, activation=nn.ReLU6),
            nn.Conv2d(hidden, channels_out, 1, bias=False),
            nn.BatchNorm2d(channels_out),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    SETTINGS = (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    )

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0):
        super().__init__()
        channels = make_divisible(32 * width_mult)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult))
        features: list[nn.Module] = [conv_norm_activation(3, channels, 3, 2, activation=nn.ReLU6)]
        for expand, width, count, first_stride in self.SETTINGS:
            out = make_divisible(width * width_mult)
            for index in range(count):
                features.append(InvertedResidual(channels, out, first_stride if index == 0 else 1, expand))
                channels = out
        features.append(conv_norm_activation(channels, self.last_channel, 1, activation=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))
        torchvision_init(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


class SqueezeExcitation(nn.Module):
    """torchvision's `SqueezeExcitation`: pool, 1x1 down, activation, 1x1 up, gate (sigmoid or hardsigmoid)."""

    def __init__(
        self,
        channels: int,
        squeezed: int,
        activation: Callable[[], nn.Module] = nn.ReLU,
        gate: Callable[[], nn.Module] = nn.Sigmoid,
    ):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.activation = activation()
        self.scale_activation = gate()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))


class InvertedResidualV3(nn.Module):
    """MobileNetV3's block: expand, depthwise (ReLU or hardswish), optional SE (hardsigmoid gate), projection."""

    def __init__(self, config: tuple[int, int, int, int, bool, str, int], width_mult: float):
        super().__init__()
        channels_in, kernel, expanded, channels_out, use_se, activation_name, stride = config
        channels_in, expanded, channels_out = (
            make_divisible(c * width_mult) for c in (channels_in, expanded, channels_out)
        )
        self.use_res_connect = stride == 1 and channels_in == channels_out
        norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        activation = nn.Hardswish if activation_name == "HS" else nn.ReLU
        layers: list[nn.Module] = []
        if expanded != channels_in:
            layers.append(conv_norm_activation(channels_in, expanded, 1, norm=norm, activation=activation))
        layers.append(conv_norm_activation(expanded, expanded, kernel, stride, expanded, norm, activation))
        if use_se:
            layers.append(SqueezeExcitation(expanded, make_divisible(expanded // 4), gate=nn.Hardsigmoid))
        layers.append(conv_norm_activation(expanded, channels_out, 1, norm=norm, activation=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x) if self.use_res_connect else self.block(x)


class MobileNetV3Small(nn.Module):
    SETTINGS = (  # input, kernel, expanded, output, SE, activation, stride
        (16, 3, 16, 16, True, "RE", 2),
        (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1),
        (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1),
        (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2),
        (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    )

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0):
        super().__init__()
        norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = make_divisible(16 * width_mult)
        features: list[nn.Module] = [conv_norm_activation(3, first, 3, 2, norm=norm, activation=nn.Hardswish)]
        features += [InvertedResidualV3(config, width_mult) for config in self.SETTINGS]
        last_in = make_divisible(96 * width_mult)
        features.append(conv_norm_activation(last_in, 6 * last_in, 1, norm=norm, activation=nn.Hardswish))
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last_channel = make_divisible(1024 * width_mult)
        self.classifier = nn.Sequential(
            nn.Linear(6 * last_in, last_channel), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(last_channel, num_classes)
        )
        torchvision_init(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class StochasticDepth(nn.Module):
    """torchvision's row-mode stochastic depth: drops whole samples in training, the identity in eval."""

    def __init__(self, probability: float):
        super().__init__()
        self.p = probability

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty((x.shape[0],) + (1,) * (x.dim() - 1), dtype=x.dtype).bernoulli_(1.0 - self.p)
        return x * keep / (1.0 - self.p)


class MBConv(nn.Module):
    """EfficientNet's block: expand 1x1 (SiLU), depthwise (SiLU), SE (SiLU, sigmoid), project; stochastic depth."""

    def __init__(self, expand: int, kernel: int, stride: int, channels_in: int, channels_out: int, drop: float):
        super().__init__()
        self.use_res_connect = stride == 1 and channels_in == channels_out
        expanded = make_divisible(channels_in * expand)
        layers: list[nn.Module] = []
        if expanded != channels_in:
            layers.append(conv_norm_activation(channels_in, expanded, 1, activation=nn.SiLU))
        layers.append(conv_norm_activation(expanded, expanded, kernel, stride, expanded, activation=nn.SiLU))
        layers.append(SqueezeExcitation(expanded, max(1, channels_in // 4), activation=nn.SiLU))
        layers.append(conv_norm_activation(expanded, channels_out, 1, activation=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.block(x)
        return self.stochastic_depth(result) + x if self.use_res_connect else result


class EfficientNetB0(nn.Module):
    SETTINGS = (  # expand, kernel, stride, input, output, layers
        (1, 3, 1, 32, 16, 1),
        (6, 3, 2, 16, 24, 2),
        (6, 5, 2, 24, 40, 2),
        (6, 3, 2, 40, 80, 3),
        (6, 5, 1, 80, 112, 3),
        (6, 5, 2, 112, 192, 4),
        (6, 3, 1, 192, 320, 1),
    )

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, stochastic_depth: float = 0.2):
        super().__init__()
        settings = [
            (e, k, s, make_divisible(i * width_mult), make_divisible(o * width_mult), n)
            for e, k, s, i, o, n in self.SETTINGS
        ]
        features: list[nn.Module] = [conv_norm_activation(3, settings[0][3], 3, 2, activation=nn.SiLU)]
        total, block_id = sum(setting[-1] for setting in settings), 0
        for expand, kernel, stride, channels_in, channels_out, count in settings:
            stage = []
            for index in range(count):
                drop = stochastic_depth * block_id / total
                stage.append(
                    MBConv(
                        expand,
                        kernel,
                        stride if index == 0 else 1,
                        channels_in if index == 0 else channels_out,
                        channels_out,
                        drop,
                    )
                )
                block_id += 1
            features.append(nn.Sequential(*stage))
        last_in = settings[-1][4]
        features.append(conv_norm_activation(last_in, 4 * last_in, 1, activation=nn.SiLU))
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2, inplace=True), nn.Linear(4 * last_in, num_classes))
        torchvision_init(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (channels-last inside)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Permute(nn.Module):
    def __init__(self, dims: list[int]):
        super().__init__()
        self.dims = dims

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.permute(x, self.dims)


class CNBlock(nn.Module):
    """ConvNeXt's block: depthwise 7x7, channels-last LayerNorm, 4x MLP (GELU), layer scale, residual."""

    def __init__(self, dim: int, layer_scale: float, drop: float):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, 7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),
            nn.LayerNorm(dim, eps=1e-6),
            nn.Linear(dim, 4 * dim),
            nn.GELU(),
            nn.Linear(4 * dim, dim),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(torch.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stochastic_depth(self.layer_scale * self.block(x)) + x


class ConvNeXtTiny(nn.Module):
    def __init__(self, num_classes: int = 1000, width: int = 96, depths: tuple[int, ...] = (3, 3, 9, 3)):
        super().__init__()
        norm = partial(LayerNorm2d, eps=1e-6)
        widths = [width, 2 * width, 4 * width, 8 * width]
        features: list[nn.Module] = [nn.Sequential(nn.Conv2d(3, width, 4, 4), norm(width))]
        total, block_id = sum(depths), 0
        for stage, (channels, depth) in enumerate(zip(widths, depths)):
            blocks = []
            for _ in range(depth):
                blocks.append(CNBlock(channels, 1e-6, 0.1 * block_id / (total - 1.0)))
                block_id += 1
            features.append(nn.Sequential(*blocks))
            if stage < 3:
                features.append(nn.Sequential(norm(channels), nn.Conv2d(channels, widths[stage + 1], 2, 2)))
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(norm(widths[-1]), nn.Flatten(1), nn.Linear(widths[-1], num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.avgpool(self.features(x)))
