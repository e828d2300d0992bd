"""Zero-size tensors: a symbolic dimension set to 0 (`input_shapes`) compiles at every opt level and runs, giving
empty outputs of ONNX Runtime's shapes (a convolution, Gemm, batched MatMul, an elementwise chain), and a product
over an empty reduction (MatMul with K = 0) gives ONNX Runtime's zeros."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession

OPT_LEVELS = (0, 1, 2, 3)
RNG = np.random.default_rng(5)


def _model(
    nodes: Sequence[onnx.NodeProto], inputs: dict[str, list[int | str]], weights: dict[str, np.ndarray]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "zero_size",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(array, name) for name, array in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _weights(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "conv": (
        _model(
            [
                helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                helper.make_node("Relu", ["c"], ["r"]),
                helper.make_node("GlobalAveragePool", ["r"], ["g"]),
                helper.make_node("Flatten", ["g"], ["y"]),
            ],
            {"x": ["N", 3, 16, 16]},
            {"w": _weights(4, 3, 3, 3), "b": _weights(4)},
        ),
        {"x": [0, 3, 16, 16]},
        (0, 4),
    ),
    "gemm": (
        _model(
            [helper.make_node("Gemm", ["x", "w", "b"], ["y"])], {"x": ["N", 8]}, {"w": _weights(8, 5), "b": _weights(5)}
        ),
        {"x": [0, 8]},
        (0, 5),
    ),
    "batched matmul": (
        _model([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": ["B", "M", 8]}, {"w": _weights(8, 5)}),
        {"x": [2, 0, 8]},
        (2, 0, 5),
    ),
    "matmul over K = 0": (
        _model([helper.make_node("MatMul", ["x", "z"], ["y"])], {"x": [3, "K"], "z": ["K", 5]}, {}),
        {"x": [3, 0], "z": [0, 5]},
        (3, 5),
    ),
    "elementwise": (
        _model(
            [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["y"])], {"x": ["N", 7]}, {}
        ),
        {"x": [0, 7]},
        (0, 7),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_zero_size_dimensions_match_onnxruntime(case: str) -> None:
    model, shapes, expected_shape = CASES[case]
    feeds = {name: RNG.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    (expected,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    session = InferenceSession(model, input_shapes=shapes, cache=False)
    (got,) = session.run(None, feeds)
    assert got.shape == expected.shape == expected_shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
