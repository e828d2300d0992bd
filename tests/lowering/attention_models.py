"""Attention chains as exporters write them, for the attention passes' end-to-end tests:

attention_model(13, "Div", "mask")   # q [1, 2, 5, 8], k and v [1, 2, 13, 8], a [5, 13] mask added to the scores
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def attention_model(keys: int | str, scale_by: str = "Mul", bias: str = "none", queries: int = 5) -> onnx.ModelProto:
    """Q [1, 2, queries, 8] and K, V [1, 2, keys, 8] inputs (keys may be a symbol): scores Transpose/MatMul, scaled
    by a Mul or a Div, maybe biased (`bias`: "none", "mask" [queries, keys] or "scalar" [1]), Softmax, MatMul."""
    shapes = {"q": [1, 2, queries, 8], "k": [1, 2, keys, 8], "v": [1, 2, keys, 8]}
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in shapes.items()]
    factor = np.array(np.sqrt(8.0) if scale_by == "Div" else 1 / np.sqrt(8.0), np.float32)
    initializers = [numpy_helper.from_array(factor, "factor")]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node(scale_by, ["scores", "factor"], ["logits"]),
    ]
    if bias != "none":
        shape = [queries, keys] if bias == "mask" else [1]
        inputs.append(helper.make_tensor_value_info("bias", TensorProto.FLOAT, shape))
        nodes[-1].output[0] = "scaled"
        nodes.append(helper.make_node("Add", ["bias", "scaled"], ["logits"]))
    nodes += [
        helper.make_node("Softmax", ["logits"], ["weights"], axis=-1),
        helper.make_node("MatMul", ["weights", "v"], ["y"]),
    ]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, queries, 8])
    graph_proto = helper.make_graph(nodes, "attention", inputs, [output], initializers)
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def random_feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Seeded standard normals for every (static) input of `model`."""
    rng = np.random.default_rng(0)
    return {
        value.name: rng.standard_normal([d.dim_value for d in value.type.tensor_type.shape.dim]).astype(np.float32)
        for value in model.graph.input
    }
