"""Numerics of every ONNX op the frontend imports, end to end through minimlc's InferenceSession.

Each case is a tiny model of one node (plus a small MLP), run on seeded random float32 inputs and
compared with `onnx.reference.ReferenceEvaluator` at rtol=1e-5, atol=1e-6; shapes and dtypes must
match exactly. The core ops run at every opt level (`OPT_LEVELS`; the other op modules at O0 and O3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession

RTOL = 1e-5
ATOL = 1e-6
OPT_LEVELS = (0, 1, 2, 3)
"""The levels these tests run at (`tests/ops/conftest.py`)."""

Shape = tuple[int, ...]


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
) -> onnx.ModelProto:
    """A model computing output `Y`, whose declared shape `_check` takes from the reference."""
    graph = helper.make_graph(
        list(nodes),
        "test",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
            for name, shape in inputs.items()
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    # IR version 8 (ONNX 1.10) is understood by every onnx and onnxruntime release we support.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _random(
    shape: Shape, rng: np.random.Generator, low: float = -2.0, high: float = 2.0
) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _check(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    reference: onnx.ModelProto | None = None,
) -> None:
    """Compare `model` run by minimlc with `reference` (default: `model`) run by the reference."""
    expected = ReferenceEvaluator(reference or model).run(None, dict(feeds))
    del model.graph.output[:]
    model.graph.output.append(
        helper.make_tensor_value_info("Y", TensorProto.FLOAT, expected[0].shape)
    )
    onnx.checker.check_model(model)
    actual = InferenceSession(model).run(None, dict(feeds))
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.shape == want.shape
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def _check_node(
    op_type: str,
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
    **attributes: Any,
) -> None:
    """Check one `op_type` node whose inputs are the graph `inputs`, then the `initializers`."""
    names = [*inputs, *(initializers or {})]
    node = helper.make_node(op_type, names, ["Y"], **attributes)
    rng = np.random.default_rng(0)
    feeds = {name: _random(shape, rng) for name, shape in inputs.items()}
    _check(_model([node], inputs, initializers, opset=opset), feeds)


BINARY_SHAPES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((4, 1, 5), (3, 1)),
    ((1,), (2, 4)),
    ((3, 4), (1,)),
    ((2, 1, 3), (1, 4, 1)),
]


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize(("a", "b"), BINARY_SHAPES, ids=str)
def test_binary(op_type: str, a: Shape, b: Shape) -> None:
    rng = np.random.default_rng(1)
    # Keep divisors away from zero so that Div compares values, not rounding of huge quotients.
    divisor = _random(b, rng, 0.5, 2.0) * rng.choice([-1.0, 1.0], size=b).astype(np.float32)
    node = helper.make_node(op_type, ["A", "B"], ["Y"])
    _check(_model([node], {"A": a, "B": b}), {"A": _random(a, rng), "B": divisor})


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul", "Div"])
def test_binary_with_initializer(op_type: str) -> None:
    rng = np.random.default_rng(2)
    _check_node(op_type, {"A": (2, 3)}, {"B": _random((3,), rng, 0.5, 2.0)})


@pytest.mark.parametrize("op_type", ["Relu", "Sigmoid", "Tanh", "Exp"])
@pytest.mark.parametrize("shape", [(1,), (7,), (2, 3), (2, 3, 4)], ids=str)
def test_unary(op_type: str, shape: Shape) -> None:
    _check_node(op_type, {"X": shape})


GEMM_CASES = [
    # (transA, transB, alpha, beta, shape of C or None)
    (0, 0, 1.0, 1.0, None),
    (0, 1, 1.0, 1.0, (5,)),
    (1, 0, 0.5, 1.0, (1, 5)),
    (1, 1, 2.0, 0.5, (3, 5)),
    (0, 0, 1.0, -1.5, (3, 1)),
    (0, 1, 0.25, 2.0, (1,)),
]


@pytest.mark.parametrize(("trans_a", "trans_b", "alpha", "beta", "c_shape"), GEMM_CASES, ids=str)
@pytest.mark.parametrize("weights_as_initializers", [False, True], ids=["inputs", "initializers"])
def test_gemm(
    trans_a: int,
    trans_b: int,
    alpha: float,
    beta: float,
    c_shape: Shape | None,
    weights_as_initializers: bool,
) -> None:
    m, k, n = 3, 4, 5
    shapes = {"A": (k, m) if trans_a else (m, k), "B": (n, k) if trans_b else (k, n)}
    if c_shape is not None:
        shapes["C"] = c_shape
    rng = np.random.default_rng(3)
    arrays = {name: _random(shape, rng) for name, shape in shapes.items()}
    inputs = {"A": shapes["A"]} if weights_as_initializers else shapes
    initializers = {name: a for name, a in arrays.items() if name not in inputs}
    node = helper.make_node(
        "Gemm", list(shapes), ["Y"], transA=trans_a, transB=trans_b, alpha=alpha, beta=beta
    )
    feeds = {name: arrays[name] for name in inputs}
    _check(_model([node], inputs, initializers), feeds)


MATMUL_SHAPES = [
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 2)),
    ((1, 2, 12, 8), (1, 2, 8, 32)),  # batched, on the GEMM schedule (attention's Q @ K^T and P @ V)
    ((2, 3, 5, 16), (2, 3, 16, 48)),  # batched, a tail of rows
    ((2, 3, 8, 16), (3, 16, 32)),  # batch broadcast
]


@pytest.mark.parametrize(("a", "b"), MATMUL_SHAPES, ids=str)
def test_matmul(a: Shape, b: Shape) -> None:
    _check_node("MatMul", {"A": a, "B": b})


def test_matmul_with_initializer() -> None:
    rng = np.random.default_rng(4)
    _check_node("MatMul", {"A": (2, 3, 4)}, {"B": _random((4, 6), rng)})


SOFTMAX_CASES = [
    # (opset, input shape, axis or None for the default)
    (13, (2, 3, 4), None),
    (13, (2, 3, 4), 0),
    (13, (2, 3, 4), 1),
    (13, (2, 3, 4), 2),
    (13, (2, 3, 4), -2),
    (13, (6,), None),
    (11, (2, 3, 4), None),
    (11, (2, 3, 4), 0),
    (11, (2, 3, 4), 2),
    (11, (2, 3, 4), -1),
    (11, (3, 5), None),
    (11, (6,), 0),
]


@pytest.mark.parametrize(("opset", "shape", "axis"), SOFTMAX_CASES, ids=str)
def test_softmax(opset: int, shape: Shape, axis: int | None) -> None:
    attributes = {} if axis is None else {"axis": axis}
    model = _model(
        [helper.make_node("Softmax", ["X"], ["Y"], **attributes)], {"X": shape}, opset=opset
    )
    feeds = {"X": _random(shape, np.random.default_rng(8))}
    _check(model, feeds, reference=None if opset >= 13 else _softmax_coerced_to_2d(shape, axis))


def _softmax_coerced_to_2d(shape: Shape, axis: int | None) -> onnx.ModelProto:
    """Softmax-1/11 spelled in opset 13: the reference evaluator implements only Softmax-13."""
    nodes = [
        helper.make_node("Flatten", ["X"], ["flat"], axis=1 if axis is None else axis),
        helper.make_node("Softmax", ["flat"], ["soft"], axis=1),
        helper.make_node("Reshape", ["soft", "shape"], ["Y"]),
    ]
    return _model(nodes, {"X": shape}, {"shape": np.array(shape, dtype=np.int64)})


@pytest.mark.parametrize(
    ("shape", "axis"),
    [((2, 3, 4), axis) for axis in range(4)]
    + [((2, 3, 4), -1), ((2, 3, 4), -3), ((5,), 0), ((5,), 1)],
    ids=str,
)
def test_flatten(shape: Shape, axis: int) -> None:
    _check_node("Flatten", {"X": shape}, axis=axis)


@pytest.mark.parametrize(
    ("target", "allowzero"),
    [
        ([4, -1], 0),
        ([0, -1], 0),
        ([0, 0, -1], 0),
        ([-1], 0),
        ([2, 0, 2, 2], 0),
        ([24], 0),
        ([6, 4], 1),
    ],
    ids=str,
)
def test_reshape(target: list[int], allowzero: int) -> None:
    shape = np.array(target, dtype=np.int64)
    _check_node("Reshape", {"X": (2, 3, 4)}, {"shape": shape}, opset=14, allowzero=allowzero)


def test_reshape_with_constant_node_shape() -> None:
    nodes = [
        helper.make_node("Constant", [], ["shape"], value_ints=[3, -1]),
        helper.make_node("Reshape", ["X", "shape"], ["Y"]),
    ]
    _check(_model(nodes, {"X": (2, 3, 2)}), {"X": _random((2, 3, 2), np.random.default_rng(5))})


@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((2, 3), None),
        ((2, 3), [0, 1]),
        ((2, 3, 4), None),
        ((2, 3, 4), [1, 0, 2]),
        ((2, 3, 4), [0, 2, 1]),
        ((2, 3, 4), [2, 0, 1]),
        ((2, 3, 4, 5), [0, 2, 3, 1]),
    ],
    ids=str,
)
def test_transpose(shape: Shape, perm: list[int] | None) -> None:
    attributes = {} if perm is None else {"perm": perm}
    _check_node("Transpose", {"X": shape}, **attributes)


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
def test_identity(shape: Shape) -> None:
    _check_node("Identity", {"X": shape})


@pytest.mark.parametrize(
    "attributes",
    [
        {"value": numpy_helper.from_array(np.array([0.5, -1.0, 2.0], dtype=np.float32))},
        {"value": numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))},
        {"value_float": 1.5},
        {"value_floats": [1.0, 2.0, -3.0]},
    ],
    ids=["value-1d", "value-2d", "value_float", "value_floats"],
)
def test_constant(attributes: dict[str, Any]) -> None:
    nodes = [
        helper.make_node("Constant", [], ["C"], **attributes),
        helper.make_node("Add", ["X", "C"], ["Y"]),
    ]
    _check(_model(nodes, {"X": (2, 3)}), {"X": _random((2, 3), np.random.default_rng(6))})


def test_mlp() -> None:
    rng = np.random.default_rng(7)
    weights = {
        "w0": _random((8, 12), rng, -0.5, 0.5),
        "b0": _random((8,), rng),
        "w1": _random((8, 4), rng, -0.5, 0.5),
        "b1": _random((4,), rng),
    }
    nodes = [
        helper.make_node("Flatten", ["X"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w0", "b0"], ["h0"], transB=1),
        helper.make_node("Relu", ["h0"], ["a0"]),
        helper.make_node("MatMul", ["a0", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h2"]),
        helper.make_node("Softmax", ["h2"], ["Y"]),
    ]
    _check(_model(nodes, {"X": (2, 3, 4)}, weights), {"X": _random((2, 3, 4), rng)})
