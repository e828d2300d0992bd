"""A Relu read only by a QuantizeLinear whose `Q(0)` is the type's minimum goes at import (`fuse_qdq`): the Q's
saturation applies it (ONNX Runtime's `ReluQuantFusion`). The results equal ONNX's reference and ONNX Runtime
without graph rewrites bit for bit (ONNX Runtime's QLinearAdd to 1 step); a Q with another zero point, or a Relu
with a second reader, keeps the Relu."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx_qdq_fusion import fuse_qdq


def _quantize(nodes: list, initializers: list, name: str, scale: float, zero: int, dequantize: bool) -> str:
    initializers += [
        numpy_helper.from_array(np.array(scale, np.float32), f"{name}_scale"),
        numpy_helper.from_array(np.array(zero, np.uint8), f"{name}_zero"),
    ]
    nodes.append(helper.make_node("QuantizeLinear", [name, f"{name}_scale", f"{name}_zero"], [f"{name}_q"]))
    if not dequantize:
        return f"{name}_q"
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_scale", f"{name}_zero"], [f"{name}_dq"]))
    return f"{name}_dq"


def _residual_relu_model(output_zero: int, relu_is_output: bool = False) -> onnx.ModelProto:
    """DQ(Q(a)) + DQ(Q(b)) -> Relu -> Q(0.03, output_zero): the residual join of a quantized ResNet."""
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    a = _quantize(nodes, initializers, "a", 0.02, 128, dequantize=True)
    b = _quantize(nodes, initializers, "b", 0.015, 131, dequantize=True)
    nodes.append(helper.make_node("Add", [a, b], ["sum"]))
    nodes.append(helper.make_node("Relu", ["sum"], ["relu"]))
    output = _quantize(nodes, initializers, "relu", 0.03, output_zero, dequantize=False)
    outputs = [helper.make_tensor_value_info(output, TensorProto.UINT8, None)]
    if relu_is_output:
        outputs.append(helper.make_tensor_value_info("relu", TensorProto.FLOAT, None))
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, (2, 4, 6, 6)) for name in ("a", "b")]
    graph = helper.make_graph(nodes, "relu_q", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {name: rng.normal(0.0, 1.5, (2, 4, 6, 6)).astype(np.float32) for name in ("a", "b")}


def _check_equal(model: onnx.ModelProto, output_zero: int) -> None:
    """minimlc equals ONNX's reference and ONNX Runtime without its graph rewrites bit for bit, and ONNX Runtime with
    them (its QLinearAdd, which rounds the scaled sum otherwise) to 1 step."""
    feeds = _feeds()
    actual = InferenceSession(model, cache=False).run(None, feeds)[0]
    reference = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_array_equal(actual, reference)
    for level, steps in (
        (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, 0),
        (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, 1),
    ):
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        by_runtime = session.run(None, feeds)[0]
        assert np.abs(actual.astype(np.int32) - by_runtime.astype(np.int32)).max() <= steps
    assert (reference == output_zero).any()  # the Relu's zeros
    assert len(np.unique(reference)) > 16


def test_relu_before_zero_point_zero_q_goes() -> None:
    model = _residual_relu_model(output_zero=0)
    fused = fuse_qdq(model.graph)
    assert "Relu" not in [node.op_type for node in fused.node]
    quantize = next(node for node in fused.node if node.output[0] == "relu_q")
    assert quantize.input[0] == "sum"
    _check_equal(model, 0)


@pytest.mark.parametrize("relu_is_output", [False, True], ids=["zero-point-mid", "relu-read-twice"])
def test_relu_stays(relu_is_output: bool) -> None:
    """A zero point of 100 (`Q(0)` is 100, not 0) or a Relu that is also a graph output: the Relu stays."""
    output_zero = 0 if relu_is_output else 100
    model = _residual_relu_model(output_zero, relu_is_output)
    assert fuse_qdq(model.graph) is model.graph
    _check_equal(model, output_zero)
