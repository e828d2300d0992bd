"""Numerics of the ops of a ShuffleNet unit in the layouts O2/O3 give them: a depthwise convolution whose output a
convolution reads (stored channels-last, the `depthwise` schedule: channel vectors of 16, 8 or 4 lanes, or none),
the channel shuffle (Reshape -> Transpose -> Reshape, the `shuffle` schedule) and grouped 1x1 convolutions, against
ONNX Runtime on seeded random inputs and weights, at O0 and O3 (tests/ops/conftest.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession

RTOL = 1e-4
ATOL = 1e-5


def _weights(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(np.float32)


def _compare(nodes: list[onnx.NodeProto], x: tuple[int, ...], initializers: dict[str, np.ndarray]) -> None:
    graph = helper.make_graph(
        nodes,
        "shuffle_unit",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, [None] * 4)],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    feeds = {"X": np.random.default_rng(0).uniform(-1.0, 1.0, x).astype(np.float32)}
    oracle = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = oracle.run(None, feeds)
    (actual,) = InferenceSession(model).run(None, feeds)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


DEPTHWISE = [  # (input shape, kernel, attributes): channels 32 (16 lanes), 24 (8), 20 (4), 6 (no vector rule)
    ((1, 32, 14, 14), (3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 24, 14, 14), (3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((2, 20, 9, 9), (3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    ((1, 6, 8, 8), (3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 16, 11, 7), (5, 3), {"pads": [2, 1, 1, 0], "strides": [2, 1]}),
]


@pytest.mark.parametrize(("x", "kernel", "attributes"), DEPTHWISE, ids=str)
def test_depthwise_conv_read_by_a_conv(x: tuple[int, ...], kernel: tuple[int, int], attributes: dict[str, Any]) -> None:
    channels = x[1]
    nodes = [
        helper.make_node("Conv", ["X", "WD", "BD"], ["D"], group=channels, **attributes),
        helper.make_node("Relu", ["D"], ["R"]),
        helper.make_node("Conv", ["R", "W1"], ["Y"]),
    ]
    initializers = {
        "WD": _weights((channels, 1, *kernel), 1),
        "BD": _weights((channels,), 2),
        "W1": _weights((16, channels, 1, 1), 3),
    }
    _compare(nodes, x, initializers)


def _shuffle(source: str, groups: int, channels: int, size: int, name: str) -> list[onnx.NodeProto]:
    shapes = {f"{name}_s5": [1, groups, channels // groups, size, size], f"{name}_s4": [1, channels, size, size]}
    return [
        helper.make_node("Constant", [], [f"{name}_s5"], value=numpy_helper.from_array(np.array(shapes[f"{name}_s5"]))),
        helper.make_node("Constant", [], [f"{name}_s4"], value=numpy_helper.from_array(np.array(shapes[f"{name}_s4"]))),
        helper.make_node("Reshape", [source, f"{name}_s5"], [f"{name}_r"]),
        helper.make_node("Transpose", [f"{name}_r"], [f"{name}_t"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", [f"{name}_t", f"{name}_s4"], [name]),
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("channels", "groups", "stride"), [(136, 4, 1), (48, 3, 2), (32, 2, 1)], ids=str)
def test_shuffle_unit(channels: int, groups: int, stride: int) -> None:
    """A ShuffleNet unit: grouped 1x1 convolution, batch norm, ReLU, channel shuffle, 3x3 depthwise convolution,
    batch norm, grouped 1x1 convolution, the residual sum (stride 1) and a ReLU."""
    size = 10
    x = (1, channels, size, size)
    bn = {
        f"{p}_{k}": _weights((channels,), 10 + i)
        for i, (p, k) in enumerate((p, k) for p in ("b1", "b2") for k in "sbmv")
    }
    for p in ("b1", "b2"):
        bn[f"{p}_v"] = np.abs(bn[f"{p}_v"]) + 0.5
    nodes = [
        helper.make_node("Conv", ["X", "G1"], ["C1"], group=groups),
        helper.make_node("BatchNormalization", ["C1", "b1_s", "b1_b", "b1_m", "b1_v"], ["N1"]),
        helper.make_node("Relu", ["N1"], ["R1"]),
        *_shuffle("R1", groups, channels, size, "S"),
        helper.make_node("Conv", ["S", "WD"], ["D"], group=channels, pads=[1, 1, 1, 1], strides=[stride, stride]),
        helper.make_node("BatchNormalization", ["D", "b2_s", "b2_b", "b2_m", "b2_v"], ["N2"]),
        helper.make_node("Conv", ["N2", "G2"], ["C2"], group=groups),
    ]
    if stride == 1:
        nodes += [helper.make_node("Add", ["C2", "X"], ["A"]), helper.make_node("Relu", ["A"], ["Y"])]
    else:
        nodes += [helper.make_node("Relu", ["C2"], ["Y"])]
    initializers = {
        "G1": _weights((channels, channels // groups, 1, 1), 1),
        "WD": _weights((channels, 1, 3, 3), 2),
        "G2": _weights((channels, channels // groups, 1, 1), 3),
        **bn,
    }
    _compare(nodes, x, initializers)
