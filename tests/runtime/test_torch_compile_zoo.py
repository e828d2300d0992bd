"""`torch.compile(model, backend="minimlc")` on zoo models — a torchvision-style ResNet-18 (`examples/
torch_vision_models.py`, reduced width) and Hugging Face BERT from a small config — with dimensions marked dynamic:
one session serves every size, and the outputs match eager (rtol 1e-4, atol 1e-4 times the largest output)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import torch_vision_models as vision  # noqa: E402
from test_torch_compile import fresh_dynamo  # noqa: E402, F401
from torch._dynamo.utils import counters  # noqa: E402


class LastHiddenState(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids, return_dict=False)[0]


def resnet18() -> tuple[torch.nn.Module, Callable[[int], torch.Tensor], tuple[int, ...]]:
    model = vision.resnet18(num_classes=10, width=16)
    vision.torchvision_init(model)
    return model, lambda batch: torch.randn(batch, 3, 32, 32), (0,)


def bert() -> tuple[torch.nn.Module, Callable[[int], torch.Tensor], tuple[int, ...]]:
    config = transformers.BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=1000,
        max_position_embeddings=128,
        attn_implementation="sdpa",
    )
    model = LastHiddenState(transformers.BertModel(config, add_pooling_layer=False))
    return model, lambda size: torch.randint(3, 1000, (size, size + 5)), (0, 1)


@pytest.mark.slow
@pytest.mark.parametrize("build", [resnet18, bert], ids=["resnet18", "bert"])
def test_zoo_models_compile_once_with_dynamic_dims_and_match_eager(build) -> None:
    model, example, dynamic_axes = build()
    model.eval()
    compiled = torch.compile(model, backend="minimlc", options={"num_threads": 1})
    with torch.no_grad():
        for size in (2, 3, 5):
            x = example(size)
            for axis in dynamic_axes:
                torch._dynamo.mark_dynamic(x, axis)
            got, want = compiled(x).numpy(), model(x).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert counters["minimlc"]["compiled_graphs"] >= 1
    assert counters["minimlc"]["eager_graphs"] == 0
    assert counters["minimlc"]["sessions"] == counters["minimlc"]["compiled_graphs"]  # one session per graph
