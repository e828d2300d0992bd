"""ONNX converters for the classical machine-learning domain (`ai.onnx.ml`) ops on numbers: Binarizer and
ArrayFeatureExtractor (the string ops of that domain, LabelEncoder on strings and the like, stay unsupported).

Keys are `ai.onnx.ml.OpType` (`onnx_operators.converter_key`); each converter is named like its op, inputs
positional, attributes as keyword arguments with the domain's defaults.

    ArrayFeatureExtractor(X: f32[3, 4], Y: i64[2]) -> graph.take %x, %y {axis = 1} : tensor<3x2xf32>
    Binarizer(X, threshold=0.5) -> graph.where (graph.greater %x, 0.5), 1, 0
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_index_checks import check_range
from minimlc.frontend.onnx_ops import ELEMENT_TYPES, ConstantValue, Converter, NodeContext, NodeError, Value, dtype_of

ML_DOMAIN = "ai.onnx.ml"
_NUMBERS = {ELEMENT_TYPES[np.dtype(t)] for t in (np.float32, np.float64, np.int32, np.int64)}


def _numbers(ctx: NodeContext, value: Value) -> SSAValue:
    """`value` as a data operand, which must be a float32, float64, int32 or int64 tensor (the domain's types)."""
    data = ctx.data(value)
    element = graph.element_type(data)
    if element not in _NUMBERS:
        raise NodeError(f"{ctx.node.op_type} takes float, double, int32 or int64 tensors, got {element}")
    return data


def Binarizer(ctx: NodeContext, X: Value, *, threshold: float = 0.0) -> Value:
    """1 where `X > threshold`, else 0 (NaN too), in X's type -> graph.where over graph.greater."""
    x = _numbers(ctx, X)
    dtype = dtype_of(graph.element_type(x))
    name = ctx.node.output[0]
    limit = ctx.data(ConstantValue(f"{name}.threshold", np.array(threshold, dtype)))
    one, zero = (ctx.data(ConstantValue(f"{name}.{v}", np.array(v, dtype))) for v in (1, 0))
    above = ctx.emit(graph.GreaterOp(x, limit))
    return ctx.emit(graph.WhereOp(above, one, zero))


def ArrayFeatureExtractor(ctx: NodeContext, X: Value, Y: Value) -> Value:
    """The entries of X's last axis at the indices Y (any shape, flattened; each in [0, n), as ONNX Runtime
    requires): X's shape with its last extent replaced by Y's size, a rank-1 X read as one row -> graph.take."""
    x = _numbers(ctx, X)
    shape = shape_of(x)
    if not shape or shape[-1] == 0:
        raise NodeError(f"X must have a non-empty last axis, got shape {shape}")
    if len(shape) == 1:
        x, shape = ctx.emit(graph.ReshapeOp(x, (1, shape[0]))), (1, shape[0])
    if isinstance(Y, ConstantValue):
        indices: Value = ConstantValue(Y.name, np.asarray(Y.array).reshape(-1))
    else:
        if graph.element_type(Y) != graph.INDICES[1]:
            raise NodeError(f"Y must be an int64 tensor, got {graph.element_type(Y)}")
        indices = ctx.emit(graph.ReshapeOp(Y, (int(np.prod(shape_of(Y))),)))
    extent = shape[-1]
    check_range(ctx, indices, np.array([0]), np.array([extent]), f"Y must lie in [0, {extent}) (the last axis of X)")
    return ctx.emit(graph.TakeOp(x, ctx.data(indices), len(shape) - 1))


CONVERTERS: dict[str, Converter] = {
    f"{ML_DOMAIN}.Binarizer": Binarizer,
    f"{ML_DOMAIN}.ArrayFeatureExtractor": ArrayFeatureExtractor,
}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`), the ai.onnx.ml numeric ops."""
