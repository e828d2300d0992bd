"""`from_fx` (the MLC course's FX importer: user maps, then built-in converters) and `GraphBuilder.emit_te` of Python
te callables: each traced model, compiled by `InferenceSession.from_imported`, matches PyTorch eager within rtol 1e-4,
atol 1e-5 (float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import fx, nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from minimlc import GraphBuilder, InferenceSession, te  # noqa: E402
from minimlc.frontend.graph_builder import GraphBuildError  # noqa: E402
from minimlc.frontend.onnx import ImportedModel  # noqa: E402
from minimlc.frontend.torch.fx import TorchImportError, UnsupportedTorchOpsError, from_fx  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


def run(imported: ImportedModel, *feeds: np.ndarray) -> list[np.ndarray]:
    session = InferenceSession.from_imported(imported)
    return session.run(None, {info.name: feed for info, feed in zip(imported.inputs, feeds)})


def check_against_eager(model: nn.Module, *inputs: torch.Tensor, **maps: Any) -> None:
    """`model` traced, imported with `maps`, compiled and run gives eager PyTorch's outputs."""
    imported = from_fx(fx.symbolic_trace(model), [tuple(x.shape) for x in inputs], **maps)
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    results = run(imported, *(x.numpy() for x in inputs))
    assert len(results) == len(expected)
    for result, reference in zip(results, expected):
        np.testing.assert_allclose(result, reference.numpy(), rtol=RTOL, atol=ATOL)


# The seed (MLC course, "Integration with Machine Learning Frameworks"), changing only imports: te functions mapped
# onto FX nodes by user maps.


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = torch.relu(x)
        return x


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear0 = nn.Linear(784, 128, bias=True)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10, bias=True)

    def forward(self, x):
        x = self.linear0(x)
        x = self.relu(x)
        x = self.linear1(x)
        return x


def map_param(param):  # the seed: relax.const(param.data.cpu().numpy(), "float32")
    return param.data.cpu().numpy()


def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def te_linear(X, W, B):
    k = te.reduce_axis((0, X.shape[1]), name="k")
    Y = te.compute((X.shape[0], W.shape[0]), lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="dense")
    return te.compute(Y.shape, lambda i, j: Y[i, j] + B[j], name="add_bias")


def map_matmul(bb, node_map, node):
    A = node_map[node.args[0]]
    B = node_map[node.args[1]]
    return bb.emit_te(te_matmul, A, B)


def map_relu(bb, node_map, node):
    A = node_map[node.args[0]]
    return bb.emit_te(te_relu, A)


def map_nn_linear(bb, node_map, node, nn_mod):
    x = node_map[node.args[0]]
    w = map_param(nn_mod.weight)
    b = map_param(nn_mod.bias)
    return bb.emit_te(te_linear, x, w, b)


def map_nn_relu(bb, node_map, node, nn_mod):
    return map_relu(bb, node_map, node)


def test_seed_matmul_relu_with_te_function_maps_matches_eager() -> None:
    torch.manual_seed(0)
    model = MyModel()
    fx_module = fx.symbolic_trace(model)
    MyModule = from_fx(
        fx_module,
        input_shapes=[(1, 128)],
        call_function_map={
            torch.matmul: map_matmul,
            torch.relu: map_relu,
        },
        call_module_map={},
    )
    data = torch.rand(1, 128)
    (result,) = run(MyModule, data.numpy())
    np.testing.assert_allclose(result, model(data).detach().numpy(), rtol=RTOL, atol=ATOL)
    assert list(MyModule.weights) == ["weight"]


def test_seed_mlp_with_te_module_maps_matches_eager() -> None:
    torch.manual_seed(0)
    mlp_model = MLP()
    MLPModel = from_fx(
        fx.symbolic_trace(mlp_model),
        input_shapes=[(1, 784)],
        call_function_map={torch.matmul: map_matmul, torch.relu: map_relu},
        call_module_map={torch.nn.Linear: map_nn_linear, torch.nn.ReLU: map_nn_relu},
    )
    kernels = [op.tag.data for op in MLPModel.module.walk() if op.name == "te.compute"]
    assert kernels == ["dense", "add_bias", "relu", "dense", "add_bias"]
    data = torch.rand(1, 784)
    (result,) = run(MLPModel, data.numpy())
    np.testing.assert_allclose(result, mlp_model(data).detach().numpy(), rtol=RTOL, atol=ATOL)


def test_user_maps_take_precedence_over_built_ins() -> None:
    torch.manual_seed(0)
    model = MLP()

    def leaky(bb, node_map, node, nn_mod):
        return bb.emit("leaky_relu", node_map[node.args[0]], 0.25)

    imported = from_fx(fx.symbolic_trace(model), [(4, 784)], call_module_map={nn.ReLU: leaky})
    data = torch.randn(4, 784)
    (result,) = run(imported, data.numpy())
    with torch.no_grad():
        expected = model.linear1(F.leaky_relu(model.linear0(data), 0.25))
        relu_result = model(data)
    np.testing.assert_allclose(result, expected.numpy(), rtol=RTOL, atol=ATOL)
    assert not np.allclose(result, relu_result.numpy(), rtol=RTOL, atol=ATOL)


def test_mlp_with_built_in_converters_matches_eager() -> None:
    torch.manual_seed(0)
    check_against_eager(MLP(), torch.rand(3, 784))


class SharedLayer(nn.Module):
    """One Linear called twice, its weight also read as an attribute."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(32, 32)

    def forward(self, x):
        return self.linear(torch.relu(self.linear(x))) + F.linear(x, self.linear.weight)


def test_a_layer_used_twice_adds_its_weights_once() -> None:
    torch.manual_seed(0)
    model = SharedLayer()
    assert list(from_fx(fx.symbolic_trace(model), [(2, 32)]).weights) == ["linear.weight", "linear.bias"]
    check_against_eager(model, torch.randn(2, 32))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn0 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv1 = nn.Conv2d(8, 16, 3, stride=2, padding="valid", dilation=2, bias=False)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, 10))
        self.summary = nn.AdaptiveAvgPool2d((2, None))

    def forward(self, x):
        x = self.pool(self.relu(self.bn0(self.conv0(x))))
        return self.head(self.avg(self.conv1(x))), self.summary(x)


def with_running_statistics(model: nn.Module) -> nn.Module:
    """`model` in eval mode, its batch norms' running statistics made non-trivial."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm1d | nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            if module.affine:
                nn.init.uniform_(module.weight, 0.5, 1.5)
                nn.init.uniform_(module.bias, -0.5, 0.5)
    return model.eval()


def test_small_cnn_with_built_in_converters_matches_eager() -> None:
    torch.manual_seed(0)
    check_against_eager(with_running_statistics(SmallCNN()), torch.randn(2, 3, 16, 16))


class TransformerBlock(nn.Module):
    def __init__(self, width: int = 32, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm0 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.project = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width), nn.Dropout(0.1))

    def forward(self, x):
        batch, tokens, width = x.shape
        head = width // self.heads
        q, k, v = self.qkv(self.norm0(x)).reshape(batch, tokens, 3, self.heads, head).permute(2, 0, 3, 1, 4)
        attention = F.softmax(q @ k.transpose(-2, -1) / head**0.5, dim=-1)
        attended = torch.matmul(attention, v).transpose(1, 2).contiguous().view(batch, tokens, width)
        x = x + F.dropout(self.project(attended), 0.1, training=self.training)
        return x + self.mlp(self.norm1(x))


def test_transformer_block_with_built_in_converters_matches_eager() -> None:
    torch.manual_seed(0)
    check_against_eager(TransformerBlock().eval(), torch.randn(2, 8, 32))


class SequenceModel(nn.Module):
    """Embedding, Conv1d, BatchNorm1d (without affine parameters) and the activation modules the others lack."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.conv = nn.Conv1d(16, 16, 4, padding="same", groups=2)
        self.norm = nn.BatchNorm1d(16, affine=False)
        self.act = nn.Sequential(nn.SiLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity(), nn.Softmax(dim=1))

    def forward(self, ids):
        x = self.embed(ids).transpose(1, 2)
        return self.act(self.norm(self.conv(x)))


# torch's own note that its eager 'same' convolution with an even kernel copies the input, padded (harmless).
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")
def test_sequence_model_with_int64_inputs_matches_eager() -> None:
    torch.manual_seed(0)
    model = with_running_statistics(SequenceModel())
    ids = torch.randint(0, 50, (2, 7))
    imported = from_fx(fx.symbolic_trace(model), [(2, 7)], input_dtypes=[torch.int64])
    (result,) = run(imported, ids.numpy())
    with torch.no_grad():
        np.testing.assert_allclose(result, model(ids).numpy(), rtol=RTOL, atol=ATOL)


class Functional(nn.Module):
    """torch functions, Tensor methods, Python operators with scalar operands, indexing and two outputs."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 12) / 4)
        self.register_buffer("shift", torch.randn(6))

    def forward(self, x, y):
        h = F.linear(x.flatten(1), self.weight, self.shift) * (x.ndim - 2)  # (4, 6)
        h = torch.cat([torch.tanh(h), torch.sigmoid(h).exp(), 2.0 * h - 1.0, torch.exp(-h)], dim=-1)  # (4, 24)
        h = torch.add(h, y, alpha=0.5).sub(torch.sub(1.0, h)).mul(torch.mul(h, 0.5)).div(2.0) / 3
        h = torch.tanh(h)
        h = F.relu(h) + 1.0 / (h * h + 1.0) + torch.div(h, y.add(3.0)) + h.pow(2) - torch.pow(h, 3)
        z = torch.reshape(h, (2, 2, 24)).view(2, -1, 4).permute(0, 2, 1).transpose(1, 2)  # (2, 12, 4)
        z = torch.permute(torch.transpose(z, 0, 2), (0, 2, 1)).reshape(4, -1)  # (4, 24)
        z = torch.softmax(z, -1) + z.softmax(dim=0) + F.silu(-z) + z.relu() - torch.relu(z) ** 2 + z.tanh().sigmoid()
        stats = torch.mean(z, dim=1, keepdim=True) + z.mean(0) + torch.sum(z, (0, 1)) / z.size(1) - z.sum(-1, True)
        w = F.layer_norm(torch.flatten(z[None, ..., ::2]), (48,), eps=1e-3) + F.dropout(z[1:, -1], training=False)[0]
        return torch.matmul(z.matmul(z.transpose(0, 1)), stats) + z.mean(), F.gelu(w * x.size()[0], approximate="tanh")


def test_functions_methods_and_operators_match_eager() -> None:
    torch.manual_seed(0)
    check_against_eager(Functional(), torch.randn(4, 3, 4), torch.rand(4, 24))


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ELU()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return self.act(torch.cumsum(self.linear(x), 1)) + F.elu(x).cumsum(0) + torch.cumsum(x, 0)


def test_unsupported_functions_methods_and_modules_are_listed_in_one_error() -> None:
    traced = fx.symbolic_trace(Unsupported())
    with pytest.raises(UnsupportedTorchOpsError) as raised:
        from_fx(traced, [(2, 8)])
    assert str(raised.value) == (
        "FX graph has 4 unsupported targets (add them to the call maps): function torch.cumsum: cumsum, cumsum_2; "
        "module torch.nn.modules.activation.ELU: act; function torch.nn.functional.elu: elu; "
        "method Tensor.cumsum: cumsum_1"
    )
    assert raised.value.ops[0] == ("function torch.cumsum", ["cumsum", "cumsum_2"])


def test_user_maps_make_unsupported_targets_importable() -> None:
    torch.manual_seed(0)

    def cumsum(bb, node_map, node):
        x = node_map[node.args[0]]
        axis = node.args[1] if len(node.args) > 1 else node.kwargs["dim"]
        return bb.emit("cumsum", x, axis)

    def elu(bb, node_map, node, *module):
        return bb.emit("elu", node_map[node.args[0]], 1.0)

    check_against_eager(
        Unsupported(),
        torch.randn(2, 8),
        call_function_map={torch.cumsum: cumsum, "cumsum": cumsum, F.elu: elu},
        call_module_map={nn.ELU: elu},
    )


def test_import_errors_name_the_node_and_the_problem() -> None:
    traced = fx.symbolic_trace(MLP())
    with pytest.raises(TorchImportError, match=r"the FX graph has 1 inputs \(x\), but 2 input_shapes are given"):
        from_fx(traced, [(1, 784), (1, 784)])
    with pytest.raises(TorchImportError, match="but 0 input_dtypes are given"):
        from_fx(traced, [(1, 784)], input_dtypes=[])
    with pytest.raises(TorchImportError, match=r"node 'linear0' \(module torch.nn.modules.linear.Linear\): linear of"):
        from_fx(traced, [(1, 783)])
    training = fx.symbolic_trace(TransformerBlock().train())
    with pytest.raises(TorchImportError, match=r"node 'dropout' \(function torch.nn.functional.dropout\): dropout in"):
        from_fx(training, [(1, 4, 32)])
    with pytest.raises(TorchImportError, match=r"node 'bn0' .*call model\.eval\(\)"):
        from_fx(fx.symbolic_trace(SmallCNN()), [(1, 3, 16, 16)])
    reinterpreted = fx.symbolic_trace(lambda x: x.view(torch.int32))
    with pytest.raises(
        TorchImportError, match=r"node 'view' \(method Tensor.view\): unsupported arguments \(x, torch.int32\)"
    ):
        from_fx(reinterpreted, [(2, 3)])
    shape_out = fx.symbolic_trace(lambda x: (x.relu(), x.size(0)))
    with pytest.raises(TorchImportError, match=r"node 'output' .*returned value 1 is 2; outputs must be tensors"):
        from_fx(shape_out, [(2, 3)])


def scale_and_row_max(X, scale):
    """Two results: `X * scale` (scale broadcast over rows) and the maximum of each row of it."""
    scaled = te.compute(X.shape, lambda i, j: X[i, j] * scale[j], name="scaled")
    k = te.reduce_axis((0, X.shape[1]), name="k")
    return scaled, te.compute((X.shape[0],), lambda i: te.max(scaled[i, k], axis=k), name="row_max")


def test_emit_te_of_python_callables_with_arrays_several_results_and_int_operands() -> None:
    rng = np.random.default_rng(0)
    scale = rng.standard_normal(6).astype(np.float32)
    bb = GraphBuilder()
    x = bb.input("x", (4, 6))
    ids = bb.input("ids", (4,), np.int64)
    scaled, row_max = bb.emit_te(scale_and_row_max, x, scale)
    shifted = bb.emit_te(lambda m, n: te.compute(m.shape, lambda i: m[i] + n[i].astype("float32")), row_max, ids)
    bb.output(scaled, "scaled")
    bb.output(shifted, "shifted")
    imported = bb.finish()
    assert list(imported.weights) == ["const0"]
    feed, feed_ids = rng.standard_normal((4, 6)).astype(np.float32), np.array([3, -1, 0, 7])
    scaled_result, shifted_result = run(imported, feed, feed_ids)
    np.testing.assert_allclose(scaled_result, feed * scale, rtol=1e-6)
    np.testing.assert_allclose(shifted_result, (feed * scale).max(axis=1) + feed_ids, rtol=1e-6)


def test_emit_te_of_python_callables_reports_errors() -> None:
    bb = GraphBuilder()
    x = bb.input("x", (4, 6))
    with pytest.raises(GraphBuildError, match="te_function: compute 'flat': the function takes 2 indices for a 1"):
        bb.emit_te(lambda a: te.compute((24,), lambda i, j: a[i, j], name="flat"), x)
    with pytest.raises(GraphBuildError, match="emit_te te_function: the callable must return a te tensor"):
        bb.emit_te(lambda a: a.shape, x)
    with pytest.raises(GraphBuildError, match="emit_te te_relu: operand 0 is tensor<4x6xf64>; te tensors hold"):
        bb.emit_te(te_relu, np.zeros((4, 6)))
