"""Write the QDQ model the lit test qdq-fusion.mlir imports: `python make_qdq_onnx.py OUT`.

x (float) -> QuantizeLinear -> DequantizeLinear -> Conv (int8 weight and int32 bias through DequantizeLinear, per
output channel) -> Relu -> QuantizeLinear (zero point 0: the Relu is redundant) -> DequantizeLinear -> output."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def qdq_conv() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w_scale = rng.uniform(0.002, 0.01, 4).astype(np.float32)
    arrays = {
        "x_scale": np.array(0.02, np.float32),
        "x_zero": np.array(128, np.uint8),
        "w": rng.integers(-127, 127, (4, 3, 3, 3)).astype(np.int8),
        "w_scale": w_scale,
        "w_zero": np.zeros(4, np.int8),
        "b": rng.integers(-500, 500, 4).astype(np.int32),
        "b_scale": (np.float32(0.02) * w_scale).astype(np.float32),
        "b_zero": np.zeros(4, np.int32),
        "y_scale": np.array(0.05, np.float32),
        "y_zero": np.array(0, np.uint8),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["x_q"]),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero"], ["x_dq"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["w_dq"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["b_dq"], axis=0),
        helper.make_node("Conv", ["x_dq", "w_dq", "b_dq"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("QuantizeLinear", ["relu", "y_scale", "y_zero"], ["y_q"]),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zero"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [numpy_helper.from_array(array, name) for name, array in arrays.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    onnx.save(qdq_conv(), sys.argv[1])
