"""Numerics of the neural-network ONNX ops (convolution, pooling, normalisation, padding, activations), end to end
through minimlc's InferenceSession, and their import errors.

Each case is a tiny one-node model run on seeded random float32 inputs and compared with ONNX Runtime, at rtol=1e-4,
atol=1e-5 (reductions reassociate sums). ONNX Runtime is the only oracle (`onnx.reference` is wrong for
BatchNormalization-9 and Softmax-family ops before opset 13): a case it cannot run is an error, not a silent switch to
another oracle. Shapes and dtypes must match exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

RTOL = 1e-4
ATOL = 1e-5

Shape = tuple[int, ...]


def _model(
    node: onnx.NodeProto,
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "test",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
            for name, shape in inputs.items()
        ],
        [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)],
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs in ONNX Runtime, the oracle (it raises for a model it cannot run)."""
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(output) for output in session.run(None, feeds)]


def _check(
    op_type: str,
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
    outputs: Sequence[str] = ("Y",),
    positive: Sequence[str] = (),
    **attributes: Any,
) -> None:
    """One `op_type` node on graph `inputs` then `initializers` (names in order; "" skips an optional input)."""
    names = [*inputs, *(initializers or {})]
    node = helper.make_node(op_type, names, list(outputs), **attributes)
    model = _model(node, {n: s for n, s in inputs.items() if n}, initializers, opset=opset)
    rng = np.random.default_rng(0)
    feeds = {
        name: rng.uniform(0.5, 2.0, shape).astype(np.float32)
        if name in positive
        else rng.uniform(-2.0, 2.0, shape).astype(np.float32)
        for name, shape in inputs.items()
        if name
    }
    expected = _onnxruntime(model, feeds)[0]
    del model.graph.output[:]
    model.graph.output.append(
        helper.make_tensor_value_info(outputs[0], TensorProto.FLOAT, expected.shape)
    )
    onnx.checker.check_model(model)
    (actual,) = InferenceSession(model).run(None, feeds)
    assert actual.shape == expected.shape
    assert actual.dtype == np.float32
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def _weights(shape: Shape, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(np.float32)


CONVS = [  # (input shape, weight shape, bias?, attributes)
    ((1, 3, 7, 7), (4, 3, 3, 3), True, {"pads": [1, 1, 1, 1]}),
    ((2, 3, 9, 8), (5, 3, 3, 2), False, {"strides": [2, 1], "pads": [1, 0, 2, 1]}),
    (
        (1, 2, 9, 9),
        (3, 2, 3, 3),
        True,
        {"dilations": [2, 2], "pads": [2, 1, 2, 1], "strides": [1, 2]},
    ),
    ((1, 4, 6, 6), (6, 2, 3, 3), True, {"group": 2, "pads": [1, 1, 1, 1]}),
    ((1, 4, 8, 8), (4, 1, 3, 3), True, {"group": 4, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 3, 6, 6), (6, 1, 3, 3), False, {"group": 3, "pads": [0, 1, 0, 1]}),
    ((1, 32, 28, 28), (32, 1, 3, 3), True, {"group": 32, "pads": [1, 1, 1, 1]}),  # the depthwise row schedule
    ((2, 8, 14, 14), (16, 1, 5, 5), False, {"group": 8, "pads": [2, 2, 2, 2]}),  # two outputs per channel
    ((1, 16, 28, 28), (16, 1, 3, 3), True, {"group": 16, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 3, 7, 6), (4, 3, 3, 3), True, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 6, 7), (4, 3, 4, 2), False, {"auto_pad": "SAME_LOWER", "strides": [1, 2]}),
    ((1, 3, 7, 7), (4, 3, 3, 3), False, {"auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 2, 5, 5), (2, 2, 1, 1), True, {"kernel_shape": [1, 1]}),
    ((2, 3, 10), (4, 3, 3), True, {"pads": [1, 2], "strides": [2]}),
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), False, {"pads": [1, 1, 0, 0, 1, 1]}),
    # Stems, 3 input channels: 3x3/2 unpadded to a width of 51 (3 columns per tile, so four vectors of channels:
    # SqueezeNet's 111), 3x3/2 pad 1 to 24 channels (ShuffleNet's, padded to 32), 7x7/2 pad 3 (ResNet's).
    ((1, 3, 7, 103), (64, 3, 3, 3), True, {"strides": [2, 2]}),
    ((1, 3, 20, 20), (24, 3, 3, 3), False, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 24, 24), (64, 3, 7, 7), True, {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("x", "w", "bias", "attributes"), CONVS, ids=str)
def test_conv(x: Shape, w: Shape, bias: bool, attributes: dict[str, Any]) -> None:
    initializers = {"W": _weights(w)} | ({"B": _weights((w[0],), 2)} if bias else {})
    _check("Conv", {"X": x}, initializers, **attributes)


def test_conv_with_runtime_weights() -> None:
    _check("Conv", {"X": (1, 2, 5, 5), "W": (3, 2, 3, 3), "B": (3,)}, pads=[1, 1, 1, 1])


POOLS = [  # (input shape, attributes)
    ((1, 2, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((1, 2, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 7, 6), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
    (
        (1, 2, 6, 6),
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0], "ceil_mode": 1},
    ),
    ((1, 2, 7, 7), {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 2, 6, 6), {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 7, 7), {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    (
        (1, 1, 4, 5, 4),
        {"kernel_shape": [2, 2, 2], "strides": [2, 1, 2], "pads": [0, 1, 0, 0, 0, 1]},
    ),
]


@pytest.mark.parametrize(("x", "attributes"), POOLS, ids=str)
def test_max_pool(x: Shape, attributes: dict[str, Any]) -> None:
    _check("MaxPool", {"X": x}, opset=12, **attributes)


@pytest.mark.parametrize(
    ("x", "attributes", "count_include_pad"),
    [(x, attributes, 0) for x, attributes in POOLS]
    + [
        (x, attributes, 1)
        for x, attributes in POOLS
        if attributes.get("pads") or attributes.get("auto_pad")
    ],
    ids=str,
)
def test_average_pool(x: Shape, attributes: dict[str, Any], count_include_pad: int) -> None:
    opset = 19 if "dilations" in attributes else 11
    _check("AveragePool", {"X": x}, opset=opset, count_include_pad=count_include_pad, **attributes)


@pytest.mark.parametrize("op_type", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("x", [(2, 4, 3, 7), (1, 2, 3, 2, 4)], ids=str)
def test_global_pool(op_type: str, x: Shape) -> None:
    _check(op_type, {"X": x})


@pytest.mark.parametrize(
    ("opset", "x", "attributes"),
    [
        (9, (2, 3, 4, 5), {}),
        (9, (1, 4, 6), {"epsilon": 1e-2, "momentum": 0.8}),
        (14, (2, 3, 4, 5), {"training_mode": 0}),
        (15, (2, 3), {"epsilon": 1e-3}),
        (15, (1, 2, 3, 2, 2), {}),
    ],
    ids=str,
)
def test_batch_normalization(opset: int, x: Shape, attributes: dict[str, Any]) -> None:
    channels = (x[1],)
    params = {
        "scale": _weights(channels, 1),
        "B": _weights(channels, 2),
        "mean": _weights(channels, 3),
        "var": np.abs(_weights(channels, 4)) + 0.1,
    }
    _check("BatchNormalization", {"X": x}, params, opset=opset, **attributes)


def test_batch_normalization_with_runtime_parameters() -> None:
    inputs = {"X": (2, 3, 4), "scale": (3,), "B": (3,), "mean": (3,), "var": (3,)}
    _check("BatchNormalization", inputs, positive=["var"], epsilon=1e-3)


@pytest.mark.parametrize(
    ("x", "attributes"),
    [
        ((1, 5, 3, 3), {"size": 3}),
        ((2, 7, 2, 3), {"size": 5, "alpha": 1e-2, "beta": 0.5, "bias": 2.0}),
        ((1, 3, 2, 2), {"size": 7, "alpha": 0.5, "beta": 1.0}),
    ],
    ids=str,
)
def test_lrn(x: Shape, attributes: dict[str, Any]) -> None:
    _check("LRN", {"X": x}, **attributes)


def test_lrn_even_size() -> None:
    """ONNX Runtime rejects an even size and onnx.reference loops over the batch instead of the channels:
    compare with the spec's formula, the window reaching one channel further up than down."""
    node = helper.make_node("LRN", ["X"], ["Y"], size=4, alpha=0.1, beta=0.6, bias=1.5)
    model = _model(node, {"X": (2, 6, 3)}, opset=13)
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 6, 3)))
    x = np.random.default_rng(0).uniform(-2.0, 2.0, (2, 6, 3)).astype(np.float32)
    squares = np.stack([(x[:, max(0, c - 1) : c + 3] ** 2).sum(axis=1) for c in range(6)], axis=1)
    expected = x / (1.5 + 0.1 / 4 * squares) ** 0.6
    np.testing.assert_allclose(
        InferenceSession(model).run(None, {"X": x})[0], expected, rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize(
    ("opset", "shape", "axis"),
    [
        (13, (2, 3, 4), None),
        (13, (2, 3, 4), 1),
        (13, (2, 3, 4), 0),
        (13, (5,), None),
        (11, (2, 3, 4), None),
        (11, (2, 3, 4), 2),
        (11, (2, 3, 4), 0),
        (11, (3, 5), -1),
    ],
    ids=str,
)
def test_log_softmax(opset: int, shape: Shape, axis: int | None) -> None:
    _check("LogSoftmax", {"X": shape}, opset=opset, **({} if axis is None else {"axis": axis}))


def test_log_softmax_is_numerically_stable() -> None:
    node = helper.make_node("LogSoftmax", ["X"], ["Y"], axis=1)
    model = _model(node, {"X": (2, 3)}, opset=13)
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 3)))
    x = np.array([[1000.0, 990.0, 995.0], [-1000.0, -990.0, -995.0]], np.float32)
    shifted = x - x.max(axis=1, keepdims=True)
    expected = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(
        InferenceSession(model).run(None, {"X": x})[0], expected, rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize(
    ("opset", "inputs", "initializers", "attributes"),
    [
        (7, {"X": (2, 3)}, {}, {"ratio": 0.3}),
        (12, {"X": (2, 3)}, {"ratio": np.array(0.2, np.float32)}, {}),
        (
            13,
            {"X": (2, 3)},
            {"ratio": np.array(0.2, np.float32), "training": np.array(False)},
            {"seed": 3},
        ),
    ],
    ids=["opset7", "opset12-ratio", "opset13-training-false"],
)
def test_dropout(
    opset: int,
    inputs: dict[str, Shape],
    initializers: dict[str, np.ndarray],
    attributes: dict[str, Any],
) -> None:
    _check("Dropout", inputs, initializers, opset=opset, **attributes)


def test_dropout_with_unused_mask() -> None:
    _check("Dropout", {"X": (3, 4)}, opset=13, outputs=("Y", "mask"))


CLIPS = [  # (opset, graph inputs, initializers, attributes)
    (6, {"X": (3, 4)}, {}, {"min": -0.5, "max": 1.0}),
    (6, {"X": (3, 4)}, {}, {"max": 0.25}),
    (11, {"X": (3, 4)}, {"min": np.array(-1.0, np.float32)}, {}),
    (13, {"X": (3, 4)}, {"min": np.array(0.0, np.float32), "max": np.array(6.0, np.float32)}, {}),
    (13, {"X": (3, 4), "": ()}, {"max": np.array(0.5, np.float32)}, {}),
    (13, {"X": (2, 3, 4), "lo": (), "hi": ()}, {}, {}),
    (13, {"X": (3, 4)}, {}, {}),
]


@pytest.mark.parametrize(("opset", "inputs", "initializers", "attributes"), CLIPS, ids=str)
def test_clip(
    opset: int,
    inputs: dict[str, Shape],
    initializers: dict[str, np.ndarray],
    attributes: dict[str, Any],
) -> None:
    _check("Clip", inputs, initializers, opset=opset, **attributes)


ACTIVATIONS = [  # (op type, opset, attributes)
    ("LeakyRelu", 13, {}),
    ("LeakyRelu", 13, {"alpha": 0.2}),
    ("HardSigmoid", 13, {}),
    ("HardSigmoid", 13, {"alpha": 0.5, "beta": 0.6}),
    ("HardSwish", 14, {}),
    ("Elu", 13, {}),
    ("Elu", 13, {"alpha": 2.0}),
    ("Selu", 13, {}),
    ("Selu", 13, {"alpha": 2.0, "gamma": 3.0}),
    ("Celu", 13, {}),
    ("Celu", 13, {"alpha": 2.0}),
    ("ThresholdedRelu", 13, {}),
    ("ThresholdedRelu", 13, {"alpha": 0.5}),
    ("Softplus", 13, {}),
    ("Softsign", 13, {}),
    ("Mish", 18, {}),
    ("Gelu", 20, {}),
    ("Gelu", 20, {"approximate": "tanh"}),
    ("Swish", 24, {}),
    ("Swish", 24, {"alpha": 0.5}),
]


@pytest.mark.parametrize(("op_type", "opset", "attributes"), ACTIVATIONS, ids=str)
def test_activation(op_type: str, opset: int, attributes: dict[str, Any]) -> None:
    _check(op_type, {"X": (2, 3, 5)}, opset=opset, **attributes)


def test_softplus_does_not_overflow() -> None:
    node = helper.make_node("Softplus", ["X"], ["Y"])
    model = _model(node, {"X": (4,)}, opset=13)
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("Y", TensorProto.FLOAT, (4,)))
    x = np.array([-200.0, -1.0, 1.0, 200.0], np.float32)
    expected = np.logaddexp(0.0, x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(
        InferenceSession(model).run(None, {"X": x})[0], expected, rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize(
    ("x", "slope"),
    [((2, 3, 4), (2, 3, 4)), ((1, 3, 2, 2), (3, 1, 1)), ((2, 5), (5,)), ((3, 4), (1,))],
    ids=str,
)
def test_prelu(x: Shape, slope: Shape) -> None:
    _check("PRelu", {"X": x}, {"slope": _weights(slope)})


PADS = [  # (opset, input shape, pads, mode, extra initializers or attributes)
    (2, (2, 3), [0, 1, 1, 2], "constant", {"value": 1.5}),
    (
        11,
        (1, 2, 3, 3),
        [0, 0, 1, 2, 0, 0, 2, 1],
        "constant",
        {"constant_value": np.array(-1.0, np.float32)},
    ),
    (11, (2, 4), [1, -1, 0, 2], "constant", {}),
    (11, (3, 4), [2, 1, 1, 3], "reflect", {}),
    (11, (3, 4), [2, 3, 1, 0], "edge", {}),
    (19, (3, 4), [2, 5, 4, 1], "wrap", {}),
    (18, (1, 2, 3, 3), [1, 2, 0, 1], "constant", {"axes": np.array([2, -1], np.int64)}),
]


@pytest.mark.parametrize(("opset", "x", "pads", "mode", "extra"), PADS, ids=str)
def test_pad(opset: int, x: Shape, pads: list[int], mode: str, extra: dict[str, Any]) -> None:
    if opset < 11:
        _check("Pad", {"X": x}, opset=opset, mode=mode, pads=pads, **extra)
        return
    initializers = {"pads": np.array(pads, np.int64)}
    if "constant_value" in extra or "axes" in extra:
        initializers["constant_value"] = extra.get("constant_value", np.array(0.0, np.float32))
    if "axes" in extra:
        initializers["axes"] = extra["axes"]
    _check("Pad", {"X": x}, initializers, opset=opset, mode=mode)


def test_pad_with_runtime_value() -> None:
    node = helper.make_node("Pad", ["X", "pads", "value"], ["Y"])
    model = _model(
        node, {"X": (2, 3), "value": ()}, {"pads": np.array([1, 0, 0, 2], np.int64)}, opset=11
    )
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("Y", TensorProto.FLOAT, (3, 5)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (actual,) = InferenceSession(model).run(None, {"X": x, "value": np.array(-7.0, np.float32)})
    np.testing.assert_array_equal(actual, np.pad(x, [(1, 0), (0, 2)], constant_values=-7.0))


def _check_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Every output of `model` through minimlc vs ONNX Runtime: same dtypes and shapes, values at RTOL/ATOL."""
    expected = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    onnx.checker.check_model(model)
    actual = InferenceSession(model).run(None, feeds)
    for got, want in zip(actual, expected, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    return actual


@pytest.mark.parametrize(
    ("opset", "x", "attributes", "constant_parameters"),
    [
        (15, (2, 3, 4, 5), {}, True),
        (14, (4, 2), {"epsilon": 1e-2, "momentum": 0.7}, False),
        (15, (1, 4, 6), {"momentum": 0.0}, True),
        (15, (2, 2, 3, 2, 3), {"epsilon": 1e-3}, False),
    ],
    ids=str,
)
def test_batch_normalization_training_mode(
    opset: int, x: Shape, attributes: dict[str, Any], constant_parameters: bool
) -> None:
    """Y from the batch's mean and population variance, and both running statistics, vs ONNX Runtime."""
    channels = (x[1],)
    params = {"scale": _weights(channels, 1), "B": _weights(channels, 2), "mean": _weights(channels, 3)}
    params["var"] = np.abs(_weights(channels, 4)) + 0.1
    feeds = {"X": np.random.default_rng(0).uniform(-2.0, 3.0, x).astype(np.float32)}
    if not constant_parameters:
        feeds |= params
    graph = helper.make_graph(
        [
            helper.make_node(
                "BatchNormalization",
                ["X", *params],
                ["Y", "running_mean", "running_var"],
                training_mode=1,
                **attributes,
            )
        ],
        "test",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, array.shape) for name, array in feeds.items()],
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
            for name, shape in (("Y", x), ("running_mean", channels), ("running_var", channels))
        ],
        [numpy_helper.from_array(array, name) for name, array in params.items()] if constant_parameters else [],
    )
    _check_outputs(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8), feeds)


LARGE_POOLS = [  # kernels default-schedule vectorizes (16-column rows) and runs in parallel (>= 32K elements)
    ((1, 16, 64, 64), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 8, 66, 64), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize(("x", "attributes"), POOLS + LARGE_POOLS, ids=str)
@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_max_pool_indices(x: Shape, attributes: dict[str, Any], storage_order: int, ties: bool) -> None:
    """Values and int64 Indices vs ONNX Runtime; with ties (small integers), the first maximum in window order."""
    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], storage_order=storage_order, **attributes)
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, x) if ties else rng.permutation(np.prod(x)).reshape(x)
    feeds = {"X": values.astype(np.float32)}
    probe = _model(node, {"X": x}, opset=12)
    probe.graph.output.append(helper.make_tensor_value_info("I", TensorProto.INT64, None))
    expected = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    graph = helper.make_graph(
        [node],
        "test",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x)],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, expected[0].shape),
            helper.make_tensor_value_info("I", TensorProto.INT64, expected[1].shape),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=8)
    session = InferenceSession(model)
    assert [info.type for info in session.get_outputs()] == ["tensor(float)", "tensor(int64)"]
    for got, want in zip(session.run(None, feeds), expected, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


# Import errors name the node and the attribute or input at fault.


def _import_error(
    node: onnx.NodeProto, inputs: Mapping[str, Shape], opset: int, **kwargs: Any
) -> str:
    model = _model(node, inputs, kwargs.get("initializers"), opset=opset)
    model.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, ["n"]) for name in node.output[1:]
    )
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_param = "n"
    with pytest.raises(ModelImportError) as error:
        InferenceSession(model)
    return str(error.value)


def test_max_pool_storage_order_other_than_0_or_1_is_rejected() -> None:
    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], name="mp", kernel_shape=[2, 2], storage_order=2)
    message = _import_error(node, {"X": (1, 1, 4, 4)}, 12)
    assert message == "node 'mp' (MaxPool): attribute storage_order=2 is not supported (expected 0 or 1)"


@pytest.mark.parametrize("opset", [12, 13, 22])
def test_dropout_mask_output_is_all_true_in_inference(opset: int) -> None:
    """The mask is a constant bool output; compared with ONNX Runtime (or the reference)."""
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["X"], ["Y", "mask"])],
        "test",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, (2, 3))],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 3)),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, (2, 3)),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    feeds = {"X": np.random.default_rng(0).uniform(-2.0, 2.0, (2, 3)).astype(np.float32)}
    expected = _onnxruntime(model, feeds)
    session = InferenceSession(model)
    assert [info.type for info in session.get_outputs()] == ["tensor(float)", "tensor(bool)"]
    for got, want in zip(session.run(None, feeds), expected, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


def test_dropout_mask_output_is_rejected_before_opset_12() -> None:
    node = helper.make_node("Dropout", ["X"], ["Y", "mask"], name="drop")
    message = _import_error(node, {"X": (2, 2)}, 10)
    assert (
        message
        == "node 'drop' (Dropout): outputs ['mask'] are used, but only the first 1 is supported"
    )


@pytest.mark.parametrize(("ratio", "shown"), [(np.array(0.25, np.float32), "0.25"), (None, "0.5")])
def test_dropout_training_mode_with_a_positive_ratio_is_not_implemented(ratio: np.ndarray | None, shown: str) -> None:
    initializers = {"ratio": ratio, "training": np.array(True)} if ratio is not None else {"training": np.array(True)}
    names = ["X", *initializers] if ratio is not None else ["X", "", "training"]
    node = helper.make_node("Dropout", names, ["Y"], name="drop")
    model = _model(node, {"X": (2, 2)}, initializers, opset=13)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 2)))
    with pytest.raises(UnsupportedFeatureError) as error:
        InferenceSession(model)
    assert str(error.value) == (
        f"node 'drop' (Dropout): training mode with ratio {shown} is not supported: it drops elements at random "
        "(only ratio 0, the identity, is)"
    )


def test_dropout_training_mode_with_ratio_0_is_the_identity() -> None:
    initializers = {"ratio": np.array(0.0, np.float32), "training": np.array(True)}
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["X", *initializers], ["Y", "mask"])],
        "test",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, (3, 4))],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, (3, 4)),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, (3, 4)),
        ],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    _, mask = _check_outputs(model, {"X": np.random.default_rng(0).uniform(-2.0, 2.0, (3, 4)).astype(np.float32)})
    assert mask.all()


def test_conv_unknown_auto_pad_is_rejected() -> None:
    node = helper.make_node("Conv", ["X", "W"], ["Y"], name="conv", auto_pad="SAME")
    message = _import_error(
        node, {"X": (1, 1, 4, 4)}, 13, initializers={"W": _weights((1, 1, 3, 3))}
    )
    assert message == (
        "node 'conv' (Conv): attribute auto_pad='SAME' is not supported "
        "(expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID)"
    )


def test_conv_group_mismatch_is_rejected() -> None:
    node = helper.make_node("Conv", ["X", "W"], ["Y"], name="conv", group=2)
    message = _import_error(
        node, {"X": (1, 3, 4, 4)}, 13, initializers={"W": _weights((2, 1, 3, 3))}
    )
    assert "node 'conv' (Conv): attribute group=2 does not match X's 3 channels" in message


def test_pad_runtime_pads_are_rejected() -> None:
    node = helper.make_node("Pad", ["X", "pads"], ["Y"], name="pad")
    model = _model(node, {"X": (2, 2)}, opset=13)
    model.graph.input.append(helper.make_tensor_value_info("pads", TensorProto.INT64, (4,)))
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_param = "n"
    with pytest.raises(ModelImportError, match=r"pads"):
        InferenceSession(model)


def test_pad_reflect_wider_than_input_is_rejected() -> None:
    node = helper.make_node("Pad", ["X", "pads"], ["Y"], name="pad", mode="reflect")
    pads = {"pads": np.array([0, 3, 0, 0], np.int64)}
    message = _import_error(node, {"X": (2, 3)}, 13, initializers=pads)
    assert message == "node 'pad' (Pad): mode 'reflect' cannot pad axis 1 of size 3 by 3"


def test_gelu_unknown_approximation_is_rejected() -> None:
    node = helper.make_node("Gelu", ["X"], ["Y"], name="gelu", approximate="fast")
    message = _import_error(node, {"X": (2,)}, 20)
    assert (
        message
        == "node 'gelu' (Gelu): attribute approximate='fast' is not supported (expected none or tanh)"
    )
