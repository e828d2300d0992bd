"""`torch.compile(model, backend="minimlc")` with dimensions dynamo makes dynamic (`mark_dynamic`, a second size,
`dynamic=True`): one session for every size, matching PyTorch eager within rtol 1e-4, atol 1e-5 (float32); what
cannot stay symbolic compiles per input shapes, and what minimlc cannot run falls back to eager with a warning."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_torch_compile import ATOL, RTOL, Mlp, TransformerBlock, fresh_dynamo, small_cnn  # noqa: E402, F401
from torch import nn  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from xdsl.utils.exceptions import VerifyException  # noqa: E402

from minimlc.driver.session import InferenceSession  # noqa: E402


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[InferenceSession]:
    """Every session `InferenceSession.from_imported` compiles during the test."""
    compiled: list[InferenceSession] = []
    from_imported = InferenceSession.from_imported.__func__  # type: ignore[attr-defined]

    def recording(cls: type[InferenceSession], *args: Any, **kwargs: Any) -> InferenceSession:
        compiled.append(from_imported(cls, *args, **kwargs))
        return compiled[-1]

    monkeypatch.setattr(InferenceSession, "from_imported", classmethod(recording))
    return compiled


def run_at_sizes(
    model: Callable[..., torch.Tensor],
    shapes: Sequence[tuple[int, ...]],
    dynamic_axes: Sequence[int] = (),
    **compile_options: Any,
) -> None:
    """`model` through `torch.compile(backend="minimlc")` at each of `shapes` (`dynamic_axes` marked dynamic),
    checked against eager."""
    compiled = torch.compile(model, backend="minimlc", **compile_options)
    with torch.no_grad():
        for shape in shapes:
            x = torch.randn(*shape)
            for axis in dynamic_axes:
                torch._dynamo.mark_dynamic(x, axis)
            np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=RTOL, atol=ATOL)


def assert_one_symbolic_session(sessions: list[InferenceSession], symbols: int) -> None:
    """One session, compiled once, whose one input has `symbols` dynamic sizes (named after export's symbols)."""
    assert counters["minimlc"]["sessions"] == 1
    assert counters["minimlc"]["symbolic_fallbacks"] == 0
    assert counters["minimlc"]["eager_graphs"] == counters["minimlc"]["eager_shapes"] == 0
    assert len(sessions) == 1
    assert sessions[0].stats["compiles"] == 1
    assert len(sessions[0].get_inputs()) == 1  # the sizes dynamo passes are not inputs
    named = [size for size in sessions[0].get_inputs()[0].shape if isinstance(size, str)]
    assert len(named) == symbols
    assert all(re.fullmatch(r"s\d+", name) for name in named)


@pytest.mark.parametrize(
    ("model", "shapes", "dynamic_axes"),
    [
        (Mlp, [(4, 64), (7, 64), (2, 64)], (0,)),
        (small_cnn, [(2, 3, 16, 16), (5, 3, 16, 16), (3, 3, 16, 16)], (0,)),
        (TransformerBlock, [(2, 8, 32), (3, 5, 32), (4, 11, 32)], (0, 1)),
    ],
    ids=["mlp", "cnn", "encoder"],
)
def test_dimensions_marked_dynamic_compile_one_session(
    model: Callable[[], nn.Module],
    shapes: list[tuple[int, ...]],
    dynamic_axes: tuple[int, ...],
    sessions: list[InferenceSession],
) -> None:
    run_at_sizes(model().eval(), shapes, dynamic_axes)
    assert counters["stats"]["unique_graphs"] == 1
    assert_one_symbolic_session(sessions, len(dynamic_axes))


def test_dynamic_true_compiles_one_session(sessions: list[InferenceSession]) -> None:
    model = nn.Sequential(nn.Linear(64, 32), nn.LayerNorm(32), nn.ReLU()).eval()
    run_at_sizes(model, [(4, 64), (9, 64), (3, 64)], dynamic=True)
    assert_one_symbolic_session(sessions, 1)  # the features specialised to the weight's 64
    model[1].eps = 0.5  # a number dynamo passes as an input (not guarded): the session is compiled for its new value
    run_at_sizes(model, [(5, 64)], dynamic=True)
    assert counters["minimlc"]["sessions"] == 2


def test_new_batch_size_compiles_the_dynamic_graph_once() -> None:
    run_at_sizes(Mlp().eval(), [(2, 64), (5, 64), (3, 64), (5, 64)])
    assert counters["stats"]["unique_graphs"] == 2  # static for batch 2, then dynamic in the batch
    assert counters["minimlc"]["sessions"] == 2  # batch 2, then every other batch
    assert counters["minimlc"]["eager_graphs"] == 0


class Chatty(nn.Module):
    """A `print` in the middle: dynamo breaks the graph there and compiles the two sides separately, the first
    returning the sizes printed."""

    def __init__(self) -> None:
        super().__init__()
        self.linear0, self.linear1 = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.linear0(x))
        print("hidden", tuple(h.shape), 2 * h.shape[0])
        return self.linear1(h)


def test_print_breaks_the_graph_and_both_sides_compile(capsys: pytest.CaptureFixture[str]) -> None:
    run_at_sizes(Chatty().eval(), [(4, 16), (6, 16), (3, 16)], dynamic_axes=(0,))
    assert capsys.readouterr().out.splitlines() == [f"hidden ({n}, 16) {2 * n}" for n in (4, 4, 6, 6, 3, 3)]
    # before the print: dynamic from the start; after it: static for the first size (mark_dynamic marks x, not the
    # intermediate the resumed code takes), then dynamic
    assert counters["minimlc"]["compiled_graphs"] == 3
    assert counters["minimlc"]["sessions"] == 3
    assert counters["minimlc"]["eager_graphs"] == 0


def test_unsupported_op_in_a_dynamic_graph_runs_in_eager_with_a_warning() -> None:
    def running_product(x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(torch.relu(x), dim=1)

    with pytest.warns(UserWarning, match=r"eager: unsupported function torch\.cumprod \(node cumprod\)"):
        run_at_sizes(running_product, [(3, 5), (4, 5)], dynamic_axes=(0,))
    assert counters["minimlc"]["eager_graphs"] == 1
    assert counters["minimlc"]["symbolic_fallbacks"] == 1
    assert counters["minimlc"]["sessions"] == 0


def test_shapes_the_importer_refuses_run_in_eager_with_a_warning() -> None:
    def pooled(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.adaptive_avg_pool2d(torch.relu(x), 2)

    run_at_sizes(pooled, [(1, 2, 8, 8), (1, 2, 6, 6)])  # the second marks the image size dynamic
    assert counters["minimlc"]["symbolic_fallbacks"] == 1  # pooling windows of symbolic sizes: a session per size
    with pytest.warns(UserWarning, match=r"input shapes \[\(1, 2, 7, 7\)\].*uneven windows"):
        run_at_sizes(pooled, [(1, 2, 7, 7)])
    assert counters["stats"]["unique_graphs"] == 2
    assert counters["minimlc"]["sessions"] == 2
    assert counters["minimlc"]["eager_shapes"] == 1


def refusing(monkeypatch: pytest.MonkeyPatch, error: Exception, *, symbolic_only: bool) -> None:
    """Make `InferenceSession.from_imported` raise `error` (as a pass that cannot lower a graph would), for models
    with symbolic sizes only if `symbolic_only`."""
    from_imported = InferenceSession.from_imported.__func__  # type: ignore[attr-defined]

    def refusing(cls: type[InferenceSession], imported: Any, **kwargs: Any) -> InferenceSession:
        if not symbolic_only or any(isinstance(size, str) for info in imported.inputs for size in info.shape):
            raise error
        return from_imported(cls, imported, **kwargs)

    monkeypatch.setattr(InferenceSession, "from_imported", classmethod(refusing))


def test_symbolic_compile_refused_compiles_per_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    refusing(monkeypatch, VerifyException("run-time dims not lowered"), symbolic_only=True)
    run_at_sizes(Mlp().eval(), [(4, 64), (7, 64), (7, 64)], dynamic_axes=(0,))
    assert counters["minimlc"]["symbolic_fallbacks"] == 1
    assert counters["minimlc"]["sessions"] == 2
    assert counters["minimlc"]["eager_graphs"] == 0


def test_compile_refusal_runs_in_eager_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    refusing(monkeypatch, VerifyException("bad"), symbolic_only=False)
    with pytest.warns(UserWarning, match=r"eager: the compiler refused it: VerifyException: bad"):
        run_at_sizes(Mlp().eval(), [(4, 64)])
    assert counters["minimlc"]["eager_graphs"] == 1


def test_other_compile_errors_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    refusing(monkeypatch, RuntimeError("a compiler bug"), symbolic_only=False)
    with pytest.raises(Exception, match="a compiler bug"):
        run_at_sizes(Mlp().eval(), [(4, 64)], dynamic_axes=(0,))


def test_parameters_changed_in_place_recompile_the_symbolic_session() -> None:
    model = Mlp().eval()
    run_at_sizes(model, [(4, 64), (5, 64)], dynamic_axes=(0,))
    with torch.no_grad():
        model.linear1.bias.add_(1.0)
    run_at_sizes(model, [(6, 64), (3, 64)], dynamic_axes=(0,))
    assert counters["minimlc"]["sessions"] == 2
