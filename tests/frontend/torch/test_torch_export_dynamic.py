"""`from_exported_program` on programs exported with dynamic shapes (`torch.export.Dim`): an MLP and a small CNN with
a dynamic batch, a transformer encoder block with dynamic batch and sequence, a GPT-style causal block with a
dynamic sequence, a class token concatenated to the sequence, indexing and slicing from its end. Each is compiled
once and matches PyTorch eager (float32: rtol 1e-4, atol 1e-5) at several sizes; a size beyond its Dim's max is
refused; sizes that cannot be expressed symbolically are refused naming the node."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.onnx_errors import UnsupportedFeatureError  # noqa: E402
from minimlc.frontend.onnx_symbolic_dims import Dim  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402
from minimlc.runtime.session import InvalidInputError  # noqa: E402

nn = torch.nn
F = torch.nn.functional
HIDDEN, HEADS, VOCABULARY = 32, 4, 50


def compile_once_and_check(
    module: nn.Module,
    example: torch.Tensor,
    dynamic_shapes: dict[int, torch.export.Dim],
    make: Callable[[Sequence[int]], torch.Tensor],
    shapes: Sequence[Sequence[int]],
) -> InferenceSession:
    """Export `module` once with `dynamic_shapes`, compile it once, and compare it with eager at every shape."""
    module = module.eval()
    program = torch.export.export(module, (example,), dynamic_shapes=(dynamic_shapes,))
    imported = from_exported_program(program)
    session = InferenceSession.from_imported(imported, num_threads=1)
    for shape in shapes:
        x = make(shape)
        (got,) = session.run(None, {imported.inputs[0].name: x.numpy()})
        with torch.no_grad():
            want = module(x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert session.stats["compiles"] == 1  # one compiled model (with run-time extents) ran every shape
    assert any(isinstance(size, str) for info in session.get_inputs() for size in info.shape)
    return session


def random_floats(shape: Sequence[int]) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def random_ids(shape: Sequence[int]) -> torch.Tensor:
    return torch.randint(0, VOCABULARY, tuple(shape), generator=torch.Generator().manual_seed(sum(shape)))


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def test_mlp_with_a_dynamic_batch() -> None:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(MLP().eval(), (random_floats((4, 16)),), dynamic_shapes=({0: batch},))
    imported = from_exported_program(program)
    assert imported.inputs[0].shape == ("batch", 16)
    assert imported.outputs[0].shape == ("batch", 8)
    assert imported.input_bounds == {"batch": (1, 64)}
    assert imported.symbolic_dims["x"] == (Dim.symbol("batch"), 16)
    assert 'minimlc.input_symbols = ["batch"]' in str(imported.module)
    session = compile_once_and_check(MLP(), random_floats((4, 16)), {0: batch}, random_floats, [(1, 16), (64, 16)])
    beyond = r"input 'x' axis 0 is dimension 'batch' = 65, outside its bounds \[1, 64\]"
    with pytest.raises(InvalidInputError, match=beyond):
        session.run(None, {"x": np.zeros((65, 16), np.float32)})


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.norm, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Linear(8, 5)
        self.norm.running_mean.uniform_(-0.5, 0.5)
        self.norm.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.max_pool2d(F.relu(self.norm(self.conv(x))), 2)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


def test_cnn_with_a_dynamic_batch() -> None:
    torch.manual_seed(1)
    batch = torch.export.Dim("batch", min=1, max=16)
    session = compile_once_and_check(
        SmallCNN(), random_floats((2, 3, 8, 8)), {0: batch}, random_floats, [(1, 3, 8, 8), (5, 3, 8, 8)]
    )
    with pytest.raises(InvalidInputError, match=r"'batch' = 17, outside its bounds \[1, 16\]"):
        session.run(None, {"x": np.zeros((17, 3, 8, 8), np.float32)})
    with pytest.raises(InvalidInputError, match=r"input 'x' axis 2: expected size 8"):
        session.run(None, {"x": np.zeros((2, 3, 9, 8), np.float32)})


def heads_of(x: torch.Tensor, batch: int, sequence: int) -> torch.Tensor:
    return x.view(batch, sequence, HEADS, HIDDEN // HEADS).transpose(1, 2)


class EncoderBlock(nn.Module):
    """Embedding, pre-norm multi-head attention (F.scaled_dot_product_attention) and a GELU MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, HIDDEN)
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.up, self.down = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        batch, sequence, _ = x.shape
        q, k, v = (heads_of(t, batch, sequence) for t in self.qkv(self.norm1(x)).split(HIDDEN, dim=-1))
        attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch, sequence, HIDDEN)
        x = x + self.proj(attended)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def test_encoder_block_with_dynamic_batch_and_sequence() -> None:
    torch.manual_seed(2)
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("sequence", min=2, max=32)}
    session = compile_once_and_check(EncoderBlock(), random_ids((2, 8)), dims, random_ids, [(1, 5), (3, 17), (8, 32)])
    with pytest.raises(InvalidInputError, match=r"'sequence' = 33, outside its bounds \[2, 32\]"):
        session.run(None, {"ids": np.zeros((2, 33), np.int64)})


class CausalBlock(nn.Module):
    """GPT-style: token and position embeddings (positions by arange of the sequence), causal attention
    (is_causal=True), GELU MLP, final norm and a vocabulary head."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens, self.positions = nn.Embedding(VOCABULARY, HIDDEN), nn.Embedding(64, HIDDEN)
        self.norm1, self.norm2, self.final = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.up, self.down = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCABULARY, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        batch, sequence = ids.shape
        x = self.tokens(ids) + self.positions(torch.arange(sequence))
        q, k, v = (heads_of(t, batch, sequence) for t in self.qkv(self.norm1(x)).split(HIDDEN, dim=-1))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).contiguous().view(batch, sequence, HIDDEN))
        x = x + self.down(F.gelu(self.up(self.norm2(x))))
        return self.head(self.final(x))


def test_causal_block_with_a_dynamic_sequence() -> None:
    torch.manual_seed(3)
    sequence = torch.export.Dim("sequence", min=2, max=64)
    session = compile_once_and_check(
        CausalBlock(), random_ids((1, 8)), {1: sequence}, random_ids, [(1, 3), (1, 20), (1, 64)]
    )
    with pytest.raises(InvalidInputError, match=r"'sequence' = 65, outside its bounds \[2, 64\]"):
        session.run(None, {"ids": np.zeros((1, 65), np.int64)})
    with pytest.raises(InvalidInputError, match=r"input 'ids' axis 0: expected size 1"):
        session.run(None, {"ids": np.zeros((2, 8), np.int64)})


def test_bounds_given_to_the_session_override_the_dims() -> None:
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(MLP().eval(), (random_floats((4, 16)),), dynamic_shapes=({0: batch},))
    session = InferenceSession.from_imported(from_exported_program(program), input_bounds={"batch": (1, 4)})
    with pytest.raises(InvalidInputError, match=r"'batch' = 5, outside its bounds \[1, 4\]"):
        session.run(None, {"x": np.zeros((5, 16), np.float32)})


def test_a_dim_without_a_name_is_named_s0() -> None:
    program = torch.export.export(MLP().eval(), (random_floats((4, 16)),), dynamic_shapes=({0: torch.export.Dim.AUTO},))
    imported = from_exported_program(program)
    assert imported.inputs[0].shape == ("s0", 16)
    assert 'minimlc.input_symbols = ["s0"]' in str(imported.module)


class ScaledBySequence(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x.shape[1]


class AllButLast(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :-1]


class LastTokens(nn.Module):
    """Indexing from the end of the sequence, a slice to its end and a concatenation along it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x[:, -1] * 2.0, x[:, 1:].sum(dim=1), x[:, :2].mean(dim=1)], dim=-1)


class ClassToken(nn.Module):
    """A learned token put before the sequence (ViT's class token): expanded to the batch, concatenated."""

    def __init__(self) -> None:
        super().__init__()
        self.token, self.fc = nn.Parameter(torch.randn(1, 1, 3)), nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = torch.cat([self.token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.fc(tokens).softmax(dim=1)


def test_class_token_concatenated_to_a_dynamic_batch_and_sequence() -> None:
    torch.manual_seed(4)
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("sequence", min=1, max=16)}
    compile_once_and_check(ClassToken(), random_floats((2, 4, 3)), dims, random_floats, [(1, 1, 3), (3, 7, 3)])


def test_indexing_from_the_end_and_slicing_to_the_end_of_a_dynamic_sequence() -> None:
    sequence = torch.export.Dim("sequence", min=3, max=16)  # torch's own minimum, x[:, 1:] having 2 at least
    shapes = [(2, 3, 3), (2, 9, 3), (2, 16, 3)]
    compile_once_and_check(LastTokens(), random_floats((2, 4, 3)), {1: sequence}, random_floats, shapes)


@pytest.mark.parametrize(
    ("module", "message"),
    [
        (ScaledBySequence(), r"node 'mul\w*' \(aten\.mul\.Tensor.*the size 'sym_size_int\w*' = sequence as a tensor"),
        (AllButLast(), r"node 'slice\w*' \(aten\.slice\.Tensor.*no value has the size sequence - 1 to broadcast"),
    ],
)
def test_what_cannot_be_expressed_symbolically_is_refused(module: nn.Module, message: str) -> None:
    sequence = torch.export.Dim("sequence", min=3, max=16)
    program = torch.export.export(module, (random_floats((2, 4, 3)),), dynamic_shapes=({1: sequence},))
    with pytest.raises(UnsupportedFeatureError, match=message):
        from_exported_program(program)
