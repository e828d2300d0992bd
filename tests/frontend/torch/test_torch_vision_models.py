"""torchvision's classifiers (`examples/torch_vision_models.py`, `examples/torch_vision_transformer_models.py`:
ResNet-18/50, MobileNetV2, MobileNetV3-Small, EfficientNet-B0, ConvNeXt-T, ViT-B/16, Swin-T) through
`torch.export` (a dynamic batch) -> `from_exported_program` -> one compile, matching PyTorch eager at two batch sizes.

Every model keeps its full architecture (all stages and block kinds); the tests use reduced widths (and ConvNeXt, ViT
and Swin fewer blocks a stage) at 32x32 images (Swin: 56x56, so that windows of 7 are shifted and padded) to keep
compiles short; `bench/bench_torch.py` runs the full-size models. Tolerance: rtol 1e-4, atol 1e-4 times the largest
output magnitude (float32 sums reordered). Batch-norm statistics are calibrated on random images and affine
parameters, layer scales and class tokens randomised, so that the outputs depend on the inputs (checked).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
import torch_vision_models as cnn  # noqa: E402
import torch_vision_transformer_models as transformers  # noqa: E402

nn = torch.nn


def randomise(model: nn.Module, size: int) -> nn.Module:
    """Batch-norm statistics calibrated on random images (as training leaves them matched to the activations, which
    otherwise grow or vanish through a deep stack), affine parameters, ConvNeXt's layer scales and ViT's class
    token away from their initial identities (seeded)."""
    generator = torch.Generator().manual_seed(1)
    norms = [module for module in model.modules() if isinstance(module, nn.BatchNorm2d)]
    with torch.no_grad():
        model.eval()
        for norm in norms:
            norm.reset_running_stats()
            norm.momentum = None  # a cumulative average over the calibration batch
            norm.train()
        model(torch.randn(8, 3, size, size, generator=generator))
        for norm in norms:
            nn.init.uniform_(norm.weight, 0.5, 1.5, generator=generator)
            nn.init.uniform_(norm.bias, -0.5, 0.5, generator=generator)
        for module in model.modules():
            if isinstance(module, cnn.CNBlock):
                module.layer_scale.copy_(torch.rand(module.layer_scale.shape, generator=generator))
            if isinstance(module, transformers.VisionTransformer):
                module.class_token.copy_(torch.randn(module.class_token.shape, generator=generator))
    return model.eval()


MODELS: dict[str, tuple[Callable[[], nn.Module], int]] = {
    "resnet18": (lambda: cnn.resnet18(num_classes=10, width=16), 32),
    "resnet50": (lambda: cnn.resnet50(num_classes=10, width=8), 32),
    "mobilenet_v2": (lambda: cnn.MobileNetV2(num_classes=10, width_mult=0.25), 32),
    "mobilenet_v3_small": (lambda: cnn.MobileNetV3Small(num_classes=10, width_mult=0.25), 32),
    "efficientnet_b0": (lambda: cnn.EfficientNetB0(num_classes=10, width_mult=0.25), 32),
    "convnext_tiny": (lambda: cnn.ConvNeXtTiny(num_classes=10, width=16, depths=(1, 1, 2, 1)), 32),
    "vit_b_16": (
        lambda: transformers.VisionTransformer(32, 16, layers=2, heads=4, hidden=64, mlp=128, num_classes=10),
        32,
    ),
    # Swin: only the first stage's 14x14 map is larger than a window, so only its second block shifts; the later
    # stages' second blocks would repeat their first.
    "swin_t": (lambda: transformers.SwinTransformer(16, (2, 1, 1, 1), (2, 2, 4, 4), num_classes=10), 56),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_vision_model_matches_eager_at_two_batch_sizes(name: str) -> None:
    make, size = MODELS[name]
    torch.manual_seed(0)
    model = randomise(make(), size)
    batch = torch.export.Dim("batch", min=1, max=8)
    example = torch.randn(2, 3, size, size)
    imported = from_exported_program(torch.export.export(model, (example,), dynamic_shapes=({0: batch},)))
    assert imported.inputs[0].shape == ("batch", 3, size, size)
    session = InferenceSession.from_imported(imported, num_threads=1)
    for count in (1, 3):
        x = torch.randn(count, 3, size, size, generator=torch.Generator().manual_seed(count))
        (got,) = session.run(None, {imported.inputs[0].name: x.numpy()})
        with torch.no_grad():
            want = model(x).numpy()
        assert got.shape == want.shape == (count, 10)
        if count > 1:  # the inputs matter: activations neither saturate nor vanish
            assert np.ptp(want, axis=0).max() > 1e-2 * np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert session.stats["compiles"] == 1


@pytest.mark.slow
def test_full_size_architectures_match_torchvision_parameter_counts() -> None:
    """The published models' parameter counts (torchvision's documentation), which a wrong layer would change."""
    counts = {
        cnn.resnet18: 11_689_512,
        cnn.resnet50: 25_557_032,
        cnn.MobileNetV2: 3_504_872,
        cnn.MobileNetV3Small: 2_542_856,
        cnn.EfficientNetB0: 5_288_548,
        cnn.ConvNeXtTiny: 28_589_128,
        transformers.vit_b_16: 86_567_656,
        transformers.SwinTransformer: 28_288_354,
    }
    for make, count in counts.items():
        assert sum(parameter.numel() for parameter in make().parameters()) == count, make.__name__
