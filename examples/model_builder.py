"""`ModelBuilder`: small ONNX models with seeded random initializers, for the runtime tests and the benchmarks.

b = ModelBuilder(seed=1)
y = b.node("Relu", [b.batch_norm(b.conv("x", 3, 8, "conv", strides=[2, 2]), 8, "bn")], "relu")
model = b.model([1, 3, 16, 16], y, [1, 8, 8, 8])
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class ModelBuilder:
    """Collects the nodes and seeded random initializers of a small single-input, single-output ONNX model."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str, shape: tuple[int, ...], scale: float = 0.5, low: float | None = None) -> str:
        """A normal(0, scale) initializer, or uniform(low, 2) when `low` is given (variances)."""
        values = self.rng.standard_normal(shape) * scale if low is None else self.rng.uniform(low, 2.0, shape)
        self.initializers.append(numpy_helper.from_array(values.astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def conv(
        self, x: str, c_in: int, c_out: int, name: str, size: int = 3, bias: bool = True, **attributes: object
    ) -> str:
        """A `size` x `size` convolution, zero-padded to keep the size unless `pads` is given."""
        inputs = [x, self.weight(f"{name}.w", (c_out, c_in, size, size), scale=1.0 / np.sqrt(c_in * size * size))]
        if bias:
            inputs.append(self.weight(f"{name}.b", (c_out,)))
        attributes.setdefault("pads", [size // 2] * 4)
        return self.node("Conv", inputs, name, kernel_shape=[size, size], **attributes)

    def batch_norm(self, x: str, channels: int, name: str, epsilon: float = 1e-5) -> str:
        params = [self.weight(f"{name}.{p}", (channels,)) for p in ("gamma", "beta", "mean")]
        params.append(self.weight(f"{name}.var", (channels,), low=0.5))
        return self.node("BatchNormalization", [x, *params], name, epsilon=epsilon)

    def constant(self, name: str, values: np.ndarray) -> str:
        """An initializer holding exactly `values` (shapes, indices, scalars)."""
        self.initializers.append(numpy_helper.from_array(values, name))
        return name

    def model(
        self,
        input_shape: list[int],
        output: str,
        output_shape: list[int],
        opset: int = 17,
        input_type: int = TensorProto.FLOAT,
    ) -> onnx.ModelProto:
        """The model of the nodes so far, its one input named `x` (of ONNX element type `input_type`)."""
        graph = helper.make_graph(
            self.nodes,
            "test",
            [helper.make_tensor_value_info("x", input_type, input_shape)],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        onnx.checker.check_model(model)
        return model


UNALLOCATABLE_ROWS, UNALLOCATABLE_COLUMNS = 2**25, 2**24
"""2**49 float32 elements: an intermediate of 2**51 bytes, more than any machine's address space (2**47 or 2**56
bytes, but no allocator gives 2 PiB), so its allocation fails everywhere."""


def expanded_exp_model(rows: int = UNALLOCATABLE_ROWS, columns: int = UNALLOCATABLE_COLUMNS) -> onnx.ModelProto:
    """y = sum(exp(e)) + max(exp(e)), e the [1, 1] input expanded to [rows, columns]: two reductions read exp(e),
    which therefore lives in memory, rows * columns float32 (by default more than can be allocated)."""
    nodes = [
        helper.make_node("Expand", ["x", "shape"], ["e"]),
        helper.make_node("Exp", ["e"], ["z"]),
        helper.make_node("ReduceSum", ["z"], ["total"], keepdims=0),
        helper.make_node("ReduceMax", ["z"], ["largest"], keepdims=0),
        helper.make_node("Add", ["total", "largest"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "expanded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array([rows, columns], np.int64), "shape")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def token_embedding_model() -> onnx.ModelProto:
    """`embedded = table[ids]`: int64 token ids [1, 3] gather rows of a [10, 4] float32 table (rows 0..9 hold
    4i..4i+3), a model whose input is not float32."""
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["embedded"])],
        "ids",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 3])],
        [helper.make_tensor_value_info("embedded", TensorProto.FLOAT, [1, 3, 4])],
        [numpy_helper.from_array(table, "table")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
