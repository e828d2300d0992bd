"""`torch.compile(model, backend="minimlc")` (`driver/torch_compile.py`): models in eval mode under `torch.no_grad()`
match PyTorch eager within rtol 1e-4, atol 1e-5 (float32), with minimlc compiling their graphs (a silent fall back to
eager fails); what it cannot run falls back to eager with a warning. Dynamic dimensions:
`test_torch_compile_dynamic.py`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

from minimlc.driver.session import InferenceSession  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()
    counters.clear()


def compiled_with_minimlc(model: nn.Module, *inputs: torch.Tensor, graphs: int = 1, **options: Any) -> torch.Tensor:
    """`model(*inputs)` through `torch.compile(backend="minimlc")`, checked against eager; minimlc must have compiled
    `graphs` graphs and left none to eager."""
    compiled = torch.compile(model, backend="minimlc", options=options or None)
    with torch.no_grad():
        result, expected = compiled(*inputs), model(*inputs)
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=RTOL, atol=ATOL)
    assert counters["minimlc"]["compiled_graphs"] == graphs
    assert counters["minimlc"]["eager_graphs"] == 0
    return result


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear0, self.linear1 = nn.Linear(64, 32), nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear1(torch.relu(self.linear0(x)))


def small_cnn() -> nn.Module:
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, stride=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )
    with torch.no_grad():  # running statistics other than 0 and 1, so that the test sees them used
        cnn[1].running_mean.uniform_(-0.5, 0.5)
        cnn[1].running_var.uniform_(0.5, 2.0)
    return cnn.eval()


class TransformerBlock(nn.Module):
    def __init__(self, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm0, self.norm1 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.projection = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        qkv = self.qkv(self.norm0(x)).reshape(batch, tokens, 3, self.heads, width // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (width // self.heads) ** -0.5
        attended = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).reshape(batch, tokens, width)
        x = x + self.projection(attended)
        return x + self.mlp(self.norm1(x))


def test_mlp_matches_eager() -> None:
    compiled_with_minimlc(Mlp().eval(), torch.randn(4, 64))


def test_cnn_matches_eager() -> None:
    compiled_with_minimlc(small_cnn(), torch.randn(2, 3, 16, 16))


def test_transformer_block_matches_eager() -> None:
    compiled_with_minimlc(TransformerBlock().eval(), torch.randn(2, 8, 32))


def test_options_reach_the_compiler() -> None:
    compiled_with_minimlc(Mlp().eval(), torch.randn(4, 64), opt_level=0, num_threads=1)


def test_unknown_option_is_refused() -> None:
    compiled = torch.compile(Mlp().eval(), backend="minimlc", options={"fast": True})
    with torch.no_grad(), pytest.raises(Exception, match=r"unknown minimlc backend option\(s\) \['fast'\]"):
        compiled(torch.randn(4, 64))


class Branchy(nn.Module):
    """A data-dependent branch: dynamo breaks the graph before it and compiles each side separately."""

    def __init__(self) -> None:
        super().__init__()
        self.linear0, self.linear1 = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.linear0(x))
        if h.sum() > 0:
            return self.linear1(h)
        return self.linear1(-h)


def test_graph_break_compiles_each_subgraph() -> None:
    compiled_with_minimlc(Branchy().eval(), torch.randn(4, 16), graphs=2)


def test_unsupported_op_runs_in_eager_with_a_warning() -> None:
    def running_total(x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(torch.relu(x), dim=1)

    x = torch.randn(3, 5)
    with torch.no_grad(), pytest.warns(UserWarning, match=r"eager: unsupported function torch\.cumsum \(node cumsum\)"):
        result = torch.compile(running_total, backend="minimlc")(x)
    np.testing.assert_allclose(result.numpy(), running_total(x).numpy(), rtol=RTOL, atol=ATOL)
    assert counters["minimlc"]["eager_graphs"] == 1
    assert counters["minimlc"]["compiled_graphs"] == 0


def test_autograd_needed_runs_in_eager_with_a_warning() -> None:
    model, x = Mlp().eval(), torch.randn(4, 64)
    with pytest.warns(UserWarning, match="autograd is needed"):
        result = torch.compile(model, backend="minimlc")(x)
    result.sum().backward()  # eager: gradients flow
    assert model.linear0.weight.grad is not None
    assert counters["minimlc"]["compiled_graphs"] == 0


def test_non_float32_input_runs_in_eager_with_a_warning() -> None:
    def doubled(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    x = torch.arange(6).reshape(2, 3)
    with torch.no_grad(), pytest.warns(UserWarning, match=r"input L_x_ is torch\.int64"):
        result = torch.compile(doubled, backend="minimlc")(x)
    assert torch.equal(result, x * 2)


def test_parameters_changed_in_place_are_followed() -> None:
    model, x = Mlp().eval(), torch.randn(4, 64)
    compiled = torch.compile(model, backend="minimlc")
    with torch.no_grad():
        before = compiled(x)
        model.linear1.bias.add_(1.0)
        after = compiled(x)
        np.testing.assert_allclose(after.numpy(), model(x).numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(after.numpy(), before.numpy() + 1.0, rtol=RTOL, atol=ATOL)


def test_outputs_wrap_the_arrays_minimlc_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[np.ndarray] = []
    run = InferenceSession.run

    def recording_run(self: InferenceSession, *args: Any, **kwargs: Any) -> list[Any]:
        results = run(self, *args, **kwargs)
        written.extend(results)
        return results

    monkeypatch.setattr(InferenceSession, "run", recording_run)
    result = compiled_with_minimlc(Mlp().eval(), torch.randn(4, 64))
    assert len(written) == 1
    assert np.shares_memory(result.numpy(), written[0])
