"""Numerics of the normalisations over computed statistics (LayerNormalization, RMSNormalization,
GroupNormalization, InstanceNormalization, MeanVarianceNormalization) and of Softmax/LogSoftmax on every axis, end
to end through minimlc's InferenceSession at O0 and O3, and their import errors.

Each case is a tiny one-node model on seeded random float32 inputs, compared with ONNX Runtime at rtol=1e-4,
atol=1e-5. ONNX Runtime 1.32 does not implement RMSNormalization (opset 23): those cases compare with
`onnx.reference`. Every case also checks that native code ran (`stats["kernels"]`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

RTOL = 1e-4
ATOL = 1e-5

Shape = tuple[int, ...]


def _model(
    node: onnx.NodeProto, inputs: Mapping[str, Shape], initializers: Mapping[str, np.ndarray], output: Shape, opset: int
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "test",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs.items()],
        [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, output)],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _check(
    op_type: str,
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int,
    oracle: str = "onnxruntime",
    **attributes: Any,
) -> None:
    """One `op_type` node on graph `inputs` then `initializers`, against `oracle`; the output has X's shape."""
    initializers = dict(initializers or {})
    node = helper.make_node(op_type, [*inputs, *initializers], ["Y"], **attributes)
    model = _model(node, inputs, initializers, next(iter(inputs.values())), opset)
    onnx.checker.check_model(model)
    rng = np.random.default_rng(0)
    feeds = {name: rng.uniform(-2.0, 3.0, shape).astype(np.float32) for name, shape in inputs.items()}
    if oracle == "onnxruntime":
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        expected = session.run(None, feeds)[0]
    else:
        expected = ReferenceEvaluator(model).run(None, feeds)[0]
    ours = InferenceSession(model)
    (actual,) = ours.run(None, feeds)
    assert ours.stats["kernels"] > 0
    assert actual.shape == expected.shape
    assert actual.dtype == np.float32
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def _weights(shape: Shape, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(np.float32)


LAYER_NORMS = [  # (input shape, scale/bias shape, bias?, attributes)
    ((2, 8, 32), (32,), True, {}),
    ((2, 8, 32), (32,), False, {"epsilon": 1e-3}),
    ((3, 5), (5,), True, {"axis": 1}),
    ((2, 3, 4, 5), (4, 5), True, {"axis": 2}),
    ((2, 3, 4, 5), (5,), True, {"axis": -2}),  # parameters broadcast over the normalised axes
    ((2, 3, 4), (2, 3, 4), True, {"axis": 0}),
    ((1, 128, 24), (24,), True, {}),  # rows not a multiple of the vector width: a scalar tail
]


@pytest.mark.parametrize(("x", "parameters", "bias", "attributes"), LAYER_NORMS, ids=str)
def test_layer_normalization(x: Shape, parameters: Shape, bias: bool, attributes: dict[str, Any]) -> None:
    initializers = {"Scale": _weights(parameters)} | ({"B": _weights(parameters, 2)} if bias else {})
    _check("LayerNormalization", {"X": x}, initializers, opset=17, **attributes)


def test_layer_normalization_with_runtime_parameters() -> None:
    _check("LayerNormalization", {"X": (4, 16), "Scale": (16,), "B": (16,)}, opset=17)


RMS_NORMS = [  # (input shape, scale shape, attributes)
    ((2, 8, 32), (32,), {}),
    ((3, 4, 5), (4, 5), {"axis": 1, "epsilon": 1e-2}),
    ((2, 6), (1,), {"axis": 0}),
]


@pytest.mark.parametrize(("x", "scale", "attributes"), RMS_NORMS, ids=str)
def test_rms_normalization(x: Shape, scale: Shape, attributes: dict[str, Any]) -> None:
    _check("RMSNormalization", {"X": x}, {"scale": _weights(scale)}, opset=23, oracle="reference", **attributes)


GROUP_NORMS = [  # (input shape, groups)
    ((2, 6, 5), 3),
    ((1, 8, 4, 4), 2),
    ((2, 4, 3, 3), 4),
    ((1, 6, 2, 3, 2), 1),
]


@pytest.mark.parametrize(("x", "groups"), GROUP_NORMS, ids=str)
def test_group_normalization(x: Shape, groups: int) -> None:
    initializers = {"scale": _weights((x[1],)), "bias": _weights((x[1],), 2)}
    _check("GroupNormalization", {"X": x}, initializers, opset=21, num_groups=groups, epsilon=1e-4)


def test_group_normalization_with_runtime_parameters() -> None:
    _check("GroupNormalization", {"X": (1, 6, 4), "scale": (6,), "bias": (6,)}, opset=21, num_groups=2)


@pytest.mark.parametrize("x", [(2, 3, 5), (1, 4, 6, 6), (2, 2, 3, 2, 2)], ids=str)
def test_instance_normalization(x: Shape) -> None:
    initializers = {"scale": _weights((x[1],)), "B": _weights((x[1],), 2)}
    _check("InstanceNormalization", {"input": x}, initializers, opset=6, epsilon=1e-3)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize(("x", "axis"), [((2, 3, 4, 5), 0), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 2), ((1, 2, 8, 40), -1)])
def test_softmax_on_every_axis(op_type: str, x: Shape, axis: int) -> None:
    _check(op_type, {"X": x}, opset=13, axis=axis)


REFUSED = [  # (op type, opset, inputs, initializers, attributes, error, message)
    ("LayerNormalization", 17, {"X": (2, 4)}, {"S": (3,)}, {}, ModelImportError, r"Scale of shape \(3,\) does not"),
    ("LayerNormalization", 17, {"X": (2, 4)}, {"S": (4,)}, {"stash_type": 0}, ModelImportError, "stash_type=0"),
    ("LayerNormalization", 17, {"X": (2, 4)}, {"S": (4,)}, {"axis": 2}, ModelImportError, "axis 2 is out of range"),
    ("GroupNormalization", 21, {"X": (1, 6, 2)}, {"S": (6,), "B": (6,)}, {"num_groups": 4}, ModelImportError,
     "num_groups=4"),
    ("GroupNormalization", 21, {"X": (1, 6, 2)}, {"S": (3,), "B": (3,)}, {"num_groups": 3}, ModelImportError,
     r"scale of shape \(3,\) must have shape \(6,\)"),
    ("GroupNormalization", 18, {"X": (1, 6, 2)}, {"S": (3,), "B": (3,)}, {"num_groups": 3}, ModelImportError,
     "deprecated"),  # per-group parameters: onnx's checker refuses the opset-18 version
    ("InstanceNormalization", 6, {"X": (2, 3)}, {"S": (3,), "B": (3,)}, {}, ModelImportError, "rank 3 or more"),
]


@pytest.mark.parametrize(("op_type", "opset", "inputs", "parameters", "attributes", "error", "message"), REFUSED,
                         ids=lambda value: value if isinstance(value, str) else None)
def test_refused(
    op_type: str,
    opset: int,
    inputs: dict[str, Shape],
    parameters: dict[str, Shape],
    attributes: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    initializers = {name: _weights(shape) for name, shape in parameters.items()}
    node = helper.make_node(op_type, [*inputs, *initializers], ["Y"], **attributes)
    model = _model(node, inputs, initializers, next(iter(inputs.values())), opset)
    with pytest.raises(error, match=message):
        InferenceSession(model)


@pytest.mark.parametrize(("x", "axis"), [((2, 8, 6), -1), ((2, 3, 4), 1), ((3, 5), 0)], ids=str)
def test_layer_normalization_statistics_outputs(x: Shape, axis: int) -> None:
    first = axis % len(x)
    statistics = (*x[:first], *(1 for _ in x[first:]))
    node = helper.make_node("LayerNormalization", ["X", "S", "B"], ["Y", "Mean", "InvStdDev"], axis=axis)
    initializers = {"S": _weights(x[first:]), "B": _weights(x[first:], 2)}
    model = _model(node, {"X": x}, initializers, x, 17)
    model.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, statistics) for name in ("Mean", "InvStdDev")
    )
    feeds = {"X": np.random.default_rng(0).uniform(-2.0, 3.0, x).astype(np.float32)}
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    actual = InferenceSession(model).run(None, feeds)
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


MVN_RNG = np.random.default_rng(5)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((3, 3, 3, 1), [0, 2, 3]), ((2, 4, 5, 3), [0, 2]), ((2, 4, 6), [1]), ((2, 4, 6), [-1, 0]), ((5, 7), [0, 1])],
    ids=str,
)
def test_mean_variance_normalization(shape: Shape, axes: list[int]) -> None:
    feeds = {"X": (MVN_RNG.standard_normal(shape) * 3.0 + 2.0).astype(np.float32)}
    model = one_node_model("MeanVarianceNormalization", feeds, {"axes": axes}, opset=13)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=RTOL)


def test_mean_variance_normalization_float64() -> None:
    """In double, against numpy (ONNX Runtime's float64 function body does not type-check)."""
    x = MVN_RNG.standard_normal((2, 3, 4, 5)) * 4.0 - 1.0
    model = one_node_model("MeanVarianceNormalization", {"X": x}, {"axes": [0, 2, 3]}, opset=13)
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, {"X": x})
    assert actual.dtype == np.float64 and session.stats["kernels"] > 0
    deviation = x - x.mean(axis=(0, 2, 3), keepdims=True)
    expected = deviation / (np.sqrt((deviation**2).mean(axis=(0, 2, 3), keepdims=True)) + 1e-9)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


def test_mean_variance_normalization_of_integers_is_refused() -> None:
    feeds = {"X": np.zeros((2, 3, 4, 5), np.int32)}
    model = one_node_model("MeanVarianceNormalization", feeds, {"axes": [0, 2, 3]}, opset=13)
    model.graph.input[0].type.tensor_type.elem_type = 6
    with pytest.raises(UnsupportedFeatureError, match="MeanVarianceNormalization of i32 is not supported"):
        InferenceSession(model, cache=False)


def test_mean_variance_normalization_float16() -> None:
    """Computed in float32 and rounded once (ONNX Runtime's float16 function body does not type-check): ONNX
    Runtime's float32 result of the same, exactly widened, input rounded to float16, within one unit in the last
    place."""
    feeds = {"X": MVN_RNG.standard_normal((2, 3, 4, 4)).astype(np.float16)}
    wide = {"X": feeds["X"].astype(np.float32)}
    reference = one_node_model("MeanVarianceNormalization", wide, {"axes": [0, 2, 3]}, opset=13)
    (expected,) = onnxruntime.InferenceSession(reference.SerializeToString()).run(None, wide)
    model = one_node_model("MeanVarianceNormalization", feeds, {"axes": [0, 2, 3]}, opset=13)
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, feeds)
    assert actual.dtype == np.float16 and session.stats["kernels"] > 0
    np.testing.assert_allclose(actual, expected.astype(np.float16), rtol=2.0**-10, atol=1e-4)


def test_mean_variance_normalization_repeated_axis_is_refused() -> None:
    feeds = {"X": np.zeros((2, 3), np.float32)}
    model = one_node_model("MeanVarianceNormalization", feeds, {"axes": [1]}, opset=13)
    model.graph.node[0].attribute[0].ints[:] = [1, -1]
    with pytest.raises(ModelImportError, match=r"axes \[1, -1\] name an axis twice"):
        InferenceSession(model, cache=False)
