"""`from_exported_program`: torch.export programs compiled by minimlc match PyTorch eager (float32: rtol 1e-4,
atol 1e-5; integer and bool results exactly), converter group by converter group; unsupported ops are refused."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.onnx_errors import UnsupportedFeatureError  # noqa: E402
from minimlc.frontend.torch.aten_common import UnsupportedAtenOpsError  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402

nn = torch.nn
F = torch.nn.functional
aten = torch.ops.aten


def check_against_eager(module: nn.Module, *examples: torch.Tensor, **import_options: bool) -> None:
    """Export `module`, compile it with minimlc, and compare every output with eager PyTorch."""
    module = module.eval()
    program = torch.export.export(module, examples)
    imported = from_exported_program(program, **import_options)
    session = InferenceSession.from_imported(imported)
    feeds = {info.name: example.numpy() for info, example in zip(imported.inputs, examples)}
    if not import_options.get("keep_params_as_weights", True):
        state = {**dict(module.named_parameters()), **dict(module.named_buffers())}
        names = {spec.arg.name: spec.target for spec in program.graph_signature.input_specs}
        feeds |= {info.name: state[names[info.name]].detach().numpy() for info in imported.inputs[len(examples) :]}
    outputs = session.run(None, feeds)
    with torch.no_grad():
        expected = module(*examples)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        want = want.detach().numpy()
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


class Lambda(nn.Module):
    """A module computing `function` of its inputs (and of `weight`, a parameter of `weight_shape`)."""

    def __init__(self, function: Callable[..., object], weight_shape: tuple[int, ...] = (4,)):
        super().__init__()
        self.function = function
        self.weight = nn.Parameter(torch.randn(weight_shape))

    def forward(self, *inputs: torch.Tensor) -> object:
        return self.function(self, *inputs)


def x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


@pytest.fixture(autouse=True)
def seeded() -> None:
    torch.manual_seed(0)


def test_mlp_linear_relu_addmm_with_transposed_weight() -> None:
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8), nn.Softmax(-1))
    check_against_eager(model, x(4, 16))


def test_weights_are_named_by_qualified_names_and_share_the_parameters_memory() -> None:
    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32)).eval()
    imported = from_exported_program(torch.export.export(model, (x(4, 16),)))
    assert {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var"} <= set(imported.weights)
    assert np.shares_memory(imported.weights["0.weight"], model[0].weight.detach().numpy())
    assert np.shares_memory(imported.weights["1.running_var"], model[1].running_var.numpy())


def test_params_as_model_inputs_without_keep_params_as_weights() -> None:
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    check_against_eager(model, x(4, 16), keep_params_as_weights=False)


ARITHMETIC = {
    "add_sub_mul_div": lambda m, a, b: (a + b * m.weight - b / 3.0, a * 2 - 1, 1.5 - a, a / (b.abs() + 1)),
    "add_alpha_pow": lambda m, a, b: (torch.add(a, b, alpha=2.5), a.pow(2), a.pow(3), b.abs().pow(1.7), 2.0**a),
    "maximum_minimum": lambda m, a, b: (torch.maximum(a, b), torch.minimum(a, m.weight)),
    "unary_math": lambda m, a, b: (a.exp(), b.abs().sqrt(), b.abs().add(0.1).rsqrt(), a.tanh(), a.erf(), -a),
    "more_math": lambda m, a, b: (b.abs().add(1).log(), a.sin(), a.cos(), a.floor(), a.ceil(), 1 / (a.abs() + 1)),
    "comparisons": lambda m, a, b: (a < b, a <= 0.5, a > b, a >= m.weight, a == a.round(), a != b),
    "logical": lambda m, a, b: (~(a > 0), (a > 0) & (b > 0), (a > 0) | (b > 0), torch.logical_xor(a > 0, b > 0)),
    "int_arithmetic": lambda m, a, b: ((a * 10).long() + 3, (a * 10).long() * 2 - (b * 4).int(), (a > 0).sum(-1)),
    "casts": lambda m, a, b: (
        (a * 5).to(torch.int32).float() + b,
        (a > 0).float(),
        (a * 3).long(),
        (a * 10).long() * 0.5,
        (a > 0) + 1,
        torch.cat([(a * 4).int(), b], 0),
    ),
    "outputs_that_are_inputs_weights_or_constants": lambda m, a, b: (a, m.weight, torch.arange(3), a.clone()),
    "scalar_overloads": lambda m, a, b: (
        aten.add.Scalar(a, 2),
        aten.sub.Scalar(a, 0.5),
        aten.div.Scalar(a, 4),
        aten.ne.Scalar(a, 0.5),
        aten.lt.Scalar(a, 0.5),
        aten.ge.Scalar(a, 0.5),
        aten.le.Tensor(a, b),
        aten.alias(a) * 2,
    ),
    "pow_expm1_logical": lambda m, a, b: (
        a.abs().add(0.5) ** b,
        torch.expm1(a),
        torch.logical_and(a > 0, b),
        torch.logical_or(a, b > 0),
        (a > 0) ^ (b > 0),
    ),
    "where_masked_fill": lambda m, a, b: (
        torch.where(a > b, a, b),
        a.masked_fill(b > 0, -1e9),
        torch.where(a > 0, a, 0.0),
    ),
}


@pytest.mark.parametrize("name", list(ARITHMETIC))
def test_elementwise_arithmetic_comparisons_and_casts(name: str) -> None:
    check_against_eager(Lambda(ARITHMETIC[name]), x(3, 4), x(3, 4))


ACTIVATIONS = {
    "relu_sigmoid_silu": lambda m, a: (F.relu(a), torch.sigmoid(a), F.silu(a), F.mish(a)),
    "gelu_erf_and_tanh": lambda m, a: (F.gelu(a), F.gelu(a, approximate="tanh")),
    "hard_activations": lambda m, a: (F.hardtanh(a), F.relu6(a * 4), F.hardswish(a * 4), F.hardsigmoid(a * 4)),
    "clamp": lambda m, a: (
        a.clamp(-0.5, 0.5),
        a.clamp(min=0.1),
        a.clamp(max=m.weight),
        torch.clamp(a, m.weight, m.weight + 1),
    ),
    "leaky_elu_softplus": lambda m, a: (F.leaky_relu(a, 0.2), F.elu(a), F.softplus(a), F.log_softmax(a, 1)),
    "softmax_and_reductions": lambda m, a: (
        a.softmax(-1),
        a.sum(1),
        a.mean((0, 2), keepdim=True),
        a.amax(-1),
        a.amin(0),
        a.sum(),
        a.mean(),
        (a > 0).any(-1),
        (a > 0.5).any((0, 2)),
        a.prod(1),
        a[:, :1].squeeze(1),
    ),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_softmax_and_reductions(name: str) -> None:
    check_against_eager(Lambda(ACTIVATIONS[name]), x(2, 3, 4) * 3)


SHAPES = {
    "views_and_permutes": lambda m, a: (
        a.view(6, 4),
        a.reshape(-1),
        a.permute(2, 0, 1),
        a.transpose(0, 2),
        a.unsqueeze(1).squeeze(1),
        a[:, None].flatten(0, 1),
        a.mT,
    ),
    "expand_cat_slices": lambda m, a: (
        m.weight.expand(2, 3, 4),
        torch.cat([a, a * 2], 1),
        torch.cat([a, m.weight.expand(2, 1, 4)], 1),
        a[:, 1:3],
        a[..., ::2],
        a[-1, :, -2:],
        a[:, 1],
    ),
    "split_unbind_chunk": lambda m, a: (*a.split(2, -1), *a.split([1, 2], 1), *a.unbind(0), *a.chunk(2, -1)),
    "matmul_forms": lambda m, a: (
        a @ a.transpose(1, 2),
        a @ m.weight,
        (a @ m.weight.expand(4, 4)).relu(),
        a[0] @ a[1].t(),
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_views_permutes_slices_and_matmuls(name: str) -> None:
    check_against_eager(Lambda(SHAPES[name]), x(2, 3, 4))


SELECTIONS = {
    "arg_and_extremes": lambda m, a, i: (
        a.argmax(1),
        a.argmin(-1, keepdim=True),
        a.argmax(),
        *a.max(1),
        *a.min(-1, keepdim=True),
    ),
    "topk_gather_cumsum": lambda m, a, i: (
        *a.topk(2, -1),
        *a.topk(3, 1, largest=False),
        torch.gather(a, 1, i),
        a.cumsum(2),
        (a > 0).cumsum(-1),
    ),
    "rounding_division_and_remainders": lambda m, a, i: (
        torch.div(a, 0.7, rounding_mode="floor"),
        torch.div(a, -0.7, rounding_mode="trunc"),
        torch.div(i - 2, 3, rounding_mode="floor"),
        torch.div(i - 2, -3, rounding_mode="floor"),
        torch.div(i - 2, 3, rounding_mode="trunc"),
        (i - 2) // 2,
        torch.remainder(a, 0.5),
        torch.fmod(a, -0.5),
        torch.remainder(i - 2, 3),
        torch.fmod(i - 2, 3),
        torch.remainder(i - 2, -(i + 1)),
        torch.fmod(a, a.abs() + 0.5),
        a.trunc(),
        a.sign(),
    ),
    "variance_group_norm_repeat": lambda m, a, i: (
        a.var(1),
        a.var(-1, unbiased=False, keepdim=True),
        a.std((2, 3)),
        F.group_norm(a, 2, m.weight, -m.weight),
        F.group_norm(a, 4),
        a.repeat(2, 1, 1, 1),
        a[0, 0].repeat(2, 1, 3),
        a.triu(1),
        a.tril(),
    ),
}


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_selections_rounding_and_statistics(name: str) -> None:
    check_against_eager(Lambda(SELECTIONS[name]), x(2, 4, 3, 5) * 2, torch.randint(0, 4, (2, 2, 3, 5)))


def test_constants_arange_full_and_causal_mask_are_evaluated_at_import() -> None:
    def function(m: Lambda, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        seq = a.shape[1]
        mask = torch.ones(seq, seq).tril().bool()
        positions = torch.arange(seq)
        scores = (a @ a.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return scores.softmax(-1), positions + 1, a + torch.full((4,), 0.5) + torch.tensor([1.0, 2.0, 3.0, 4.0])

    check_against_eager(Lambda(function), x(2, 3, 4))


def test_embedding_and_index_by_int_tensor() -> None:
    table = nn.Embedding(10, 8)

    def function(m: Lambda, ids: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return table(ids), a[ids[0]], a[:, ids[1]], table.weight[torch.arange(3)]

    module = Lambda(function)
    module.table = table
    check_against_eager(module, torch.tensor([[1, 4, 9], [0, 2, 2]]), x(10, 6))


def test_layer_norm_with_and_without_affine() -> None:
    norms = nn.ModuleList([nn.LayerNorm(8), nn.LayerNorm([4, 8], elementwise_affine=False)])
    for parameter in norms[0].parameters():
        nn.init.uniform_(parameter)
    module = Lambda(lambda m, a: (norms[0](a), norms[1](a)))
    module.norms = norms
    check_against_eager(module, x(2, 4, 8))


CONVOLUTIONS = {
    "plain": dict(in_channels=3, out_channels=8, kernel_size=3),
    "stride_padding": dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1),
    "dilation_no_bias": dict(in_channels=4, out_channels=4, kernel_size=3, dilation=2, padding=2, bias=False),
    "depthwise": dict(in_channels=4, out_channels=8, kernel_size=3, groups=4, padding=(1, 0)),
}


@pytest.mark.parametrize("name", list(CONVOLUTIONS))
def test_convolutions(name: str) -> None:
    conv = nn.Conv2d(**CONVOLUTIONS[name])
    check_against_eager(conv, x(2, conv.in_channels, 9, 10))


def test_conv1d_and_batch_norm_with_and_without_affine() -> None:
    norms = [nn.BatchNorm2d(4), nn.BatchNorm2d(4, affine=False)]
    for norm in norms:
        norm.running_mean.uniform_(-1, 1)
        norm.running_var.uniform_(0.5, 2)
    nn.init.uniform_(norms[0].weight)
    conv1d = nn.Conv1d(4, 6, 3, padding=1)
    module = Lambda(lambda m, a: (m.norms[0](a), m.norms[1](a), conv1d(a.flatten(2))))
    module.norms = nn.ModuleList(norms)
    module.conv1d = conv1d
    check_against_eager(module, x(2, 4, 6, 6))


def test_pooling() -> None:
    def function(m: Lambda, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            F.max_pool2d(a, 2),
            F.max_pool2d(a, 3, stride=2, padding=1),
            F.max_pool2d(a, 3, stride=2, ceil_mode=True),
            F.avg_pool2d(a, 2),
            F.avg_pool2d(a, 3, stride=2, padding=1),
            F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False),
            F.avg_pool2d(a, 3, stride=2, padding=1, ceil_mode=True),
            F.avg_pool2d(a[..., 1:], 2, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            F.adaptive_avg_pool2d(a, 1),
            F.adaptive_avg_pool2d(a, (2, 4)),
            F.max_pool1d(a.flatten(2), 4),
            F.avg_pool1d(a.flatten(2), 3, stride=2, padding=1),
        )

    check_against_eager(Lambda(function), x(2, 3, 8, 8))


def test_norms_flip_roll_index_select_and_nearest_upsampling() -> None:
    def function(m: Lambda, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            F.normalize(a, dim=1),
            torch.linalg.vector_norm(a, 1, dim=(2, 3), keepdim=True),
            torch.linalg.vector_norm(a, float("inf"), dim=-1),
            a.norm(),
            torch.flip(a, [1, -1]),
            torch.roll(a, 2, 3),
            torch.index_select(a, 2, torch.tensor([2, 0, 0])),
            F.interpolate(a, scale_factor=2),
            F.interpolate(a, size=(12, 15)),
            F.instance_norm(a),
            m.norm(a),
            a.exp2(),
        )

    module = Lambda(function)
    module.norm = nn.InstanceNorm2d(4, affine=True)
    nn.init.uniform_(module.norm.weight)
    check_against_eager(module, x(2, 4, 6, 5))


def test_constant_pad() -> None:
    check_against_eager(Lambda(lambda m, a: (F.pad(a, (1, 2)), F.pad(a, (0, 1, 2, 0), value=-1.5))), x(2, 3, 4))


def test_scaled_dot_product_attention_causal_and_masked() -> None:
    def function(m: Lambda, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        mask = torch.ones(6, 6).tril().bool()
        return (
            F.scaled_dot_product_attention(q, k, v),
            F.scaled_dot_product_attention(q, k, v, is_causal=True),
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        )

    check_against_eager(Lambda(function), x(2, 4, 6, 8), x(2, 4, 6, 8), x(2, 4, 6, 8))


def test_unsupported_ops_are_listed_together_with_node_names_and_source_lines() -> None:
    module = Lambda(lambda m, a: torch.atan2(a, a + 1) + torch.sort(a).values)
    program = torch.export.export(module.eval(), (x(3, 4),))
    with pytest.raises(UnsupportedAtenOpsError) as raised:
        from_exported_program(program)
    message = str(raised.value)
    assert "2 unsupported ATen ops" in message
    assert "aten.atan2.default: atan2 (" in message
    assert "aten.sort.default: sort (" in message
    assert "test_torch_export.py:" in message
    assert set(raised.value.ops) == {"aten.atan2.default", "aten.sort.default"}


def test_unsupported_arguments_are_refused_before_building() -> None:
    module = nn.ConvTranspose2d(3, 4, 3)
    program = torch.export.export(module.eval(), (x(1, 3, 5, 5),))
    with pytest.raises(UnsupportedAtenOpsError, match=r"aten\.convolution\.default with transposed convolution"):
        from_exported_program(program)


def test_results_not_computed_random_ops_and_unsupported_dtypes_are_refused_before_building() -> None:
    def function(m: Lambda, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return F.max_pool2d(a, 2, return_indices=True)[1], a.half() * 2, a + torch.rand(4)

    program = torch.export.export(Lambda(function).eval(), (x(1, 2, 4, 4),))
    with pytest.raises(UnsupportedAtenOpsError) as raised:
        from_exported_program(program)
    assert "aten.max_pool2d_with_indices.default result 1 (not computed): getitem_" in str(raised.value)
    assert "with a torch.float16 result" in str(raised.value)
    assert "aten.rand.default: rand (" in str(raised.value)


def test_buffer_mutation_is_refused() -> None:
    class Counter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("count", torch.zeros(1))

        def forward(self, a: torch.Tensor) -> torch.Tensor:
            self.count.add_(1)
            return a + self.count

    program = torch.export.export(Counter(), (x(2),))
    with pytest.raises(UnsupportedFeatureError, match="mutates count"):
        from_exported_program(program)


def test_symbolic_shapes_are_imported_with_their_dims() -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    program = torch.export.export(nn.Linear(4, 2).eval(), (x(3, 4),), dynamic_shapes=({0: batch},))
    imported = from_exported_program(program)  # compiled and run: test_torch_export_dynamic.py
    assert [info.shape for info in imported.inputs + imported.outputs] == [("batch", 4), ("batch", 2)]
    assert imported.input_bounds == {"batch": (2, 64)}
