"""ONNX models for the importer's tests: a value info, a graph of nodes as a model, a one-node model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Dims = Sequence[int | str | None]


def value_info(name: str, shape: Dims, element: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, element, list(shape))


def onnx_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    initializers: dict[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
    ir_version: int = 8,
    extra_opsets: Sequence[tuple[str, int]] = (),
) -> onnx.ModelProto:
    graph_proto = helper.make_graph(
        list(nodes),
        "test",
        list(inputs),
        list(outputs),
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    return helper.make_model(graph_proto, opset_imports=opsets, ir_version=ir_version)


def unary_model(op_type: str, shape: Dims, *, opset: int = 13, **attributes: object) -> onnx.ModelProto:
    node = helper.make_node(op_type, ["x"], ["y"], name="n", **attributes)
    return onnx_model([node], [value_info("x", shape)], [value_info("y", ["?"])], opset=opset)
