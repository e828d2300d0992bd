"""ONNX converters for the ops whose output depends only on shapes and attributes: EyeLike, as `graph.eye` computed
by native code (it reads only its input's shape).

The window functions (HannWindow, HammingWindow, BlackmanWindow) need no converter: their `size` sets their output's
shape, so it is a compile-time constant (`CONSTANT_OPERANDS`), and the node folds at import time into an honest
constant.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
)


def EyeLike(ctx: NodeContext, input: Value, *, dtype: int | None = None, k: int = 0) -> Value:
    """Ones on the `k`-th diagonal of a matrix shaped like `input`, of `dtype` (else the input's) -> graph.eye."""
    shape = shape_of(ctx.data(input))  # only the shape is read, run-time data or a constant
    if len(shape) != 2:
        raise NodeError(f"input must be a matrix, got shape {shape}")
    if dtype is None:
        element_type = graph.element_type(ctx.data(input))
    else:
        element_type = ELEMENT_TYPES.get(np.dtype(helper.tensor_dtype_to_np_dtype(dtype)))
    if element_type is None:
        raise UnsupportedNodeError(f"EyeLike of {onnx.TensorProto.DataType.Name(dtype)} is not supported")
    return ctx.emit(graph.EyeOp((shape[0], shape[1]), element_type, k))


CONVERTERS: dict[str, Converter] = {
    "EyeLike": EyeLike,
}
"""ONNX op type (default domain) -> converter."""
