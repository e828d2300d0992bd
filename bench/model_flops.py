"""FLOPs of an ONNX model: 2 x the multiply-accumulates of its Conv, Gemm and MatMul nodes; other ops count nothing.

    count_flops(onnx.load("light_resnet50.onnx"))     # 8.18e9: 4.09 G multiply-accumulates at 1x3x224x224

Shapes come from onnx shape inference (with data propagation, so weights built by ConstantOfShape have shapes too);
a Conv output element costs C/group x kernel MACs, a Gemm or MatMul output element costs K.
"""

from __future__ import annotations

import math

import onnx
from onnx import shape_inference

FLOP_OPS = ("Conv", "Gemm", "MatMul")


def count_flops(model: onnx.ModelProto) -> int:
    """2 x multiply-accumulates of the model's Conv, Gemm and MatMul nodes; raises if a shape is unknown."""
    graph = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True).graph
    shapes: dict[str, list[int]] = {t.name: list(t.dims) for t in graph.initializer}
    for info in (*graph.input, *graph.value_info, *graph.output):
        dims = info.type.tensor_type.shape.dim
        if all(dim.HasField("dim_value") for dim in dims):
            shapes[info.name] = [dim.dim_value for dim in dims]

    def shape(node: onnx.NodeProto, name: str) -> list[int]:
        if name not in shapes:
            raise ValueError(f"{node.op_type} node '{node.name}': the shape of '{name}' is unknown")
        return shapes[name]

    flops = 0
    for node in graph.node:
        if node.op_type not in FLOP_OPS:
            continue
        outputs = math.prod(shape(node, node.output[0]))
        if node.op_type == "Conv":
            reduced = math.prod(shape(node, node.input[1])[1:])  # C/group x kernel
        elif node.op_type == "Gemm":
            trans_a = any(a.name == "transA" and a.i for a in node.attribute)
            reduced = shape(node, node.input[0])[0 if trans_a else 1]
        else:
            reduced = shape(node, node.input[0])[-1]
        flops += 2 * outputs * reduced
    return flops
