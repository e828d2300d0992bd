"""Write the ONNX models the lit tests here import: `python make_onnx.py {mlp,unsupported} OUT`."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp() -> onnx.ModelProto:
    """Flatten, Gemm, Relu, MatMul + bias, Reshape, Transpose, Softmax (opset 13, float32)."""
    rng = np.random.default_rng(0)
    weights = {
        "fc0/weight:0": rng.standard_normal((8, 12)),
        "fc0.bias": rng.standard_normal(8),
        "fc1.weight": rng.standard_normal((8, 6)),
        "fc1.bias": rng.standard_normal(6),
    }
    initializers = [
        numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()
    ]
    nodes = [
        helper.make_node("Flatten", ["input.1"], ["flat"], name="flatten"),
        helper.make_node(
            "Gemm", ["flat", "fc0/weight:0", "fc0.bias"], ["hidden"], name="fc0", transB=1
        ),
        helper.make_node("Relu", ["hidden"], ["act"], name="relu"),
        helper.make_node("MatMul", ["act", "fc1.weight"], ["mm"], name="fc1"),
        helper.make_node("Add", ["mm", "fc1.bias"], ["logits"], name="bias"),
        helper.make_node("Constant", [], ["shape"], value_ints=[2, 3, 2]),
        helper.make_node("Reshape", ["logits", "shape"], ["grid"], name="reshape"),
        helper.make_node("Transpose", ["grid"], ["swapped"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("Softmax", ["swapped"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 2, 3])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def unsupported() -> onnx.ModelProto:
    """Two GlobalLpPool nodes, an op the importer does not support (opset 13)."""
    nodes = [
        helper.make_node("GlobalLpPool", ["x"], ["c1"], name="pool1"),
        helper.make_node("GlobalLpPool", ["c1"], ["c2"], name="pool2"),
        helper.make_node("Relu", ["c2"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


if __name__ == "__main__":
    onnx.save({"mlp": mlp, "unsupported": unsupported}[sys.argv[1]](), sys.argv[2])
