"""ONNX converters for linear algebra: Det.

Each converter is named exactly like its ONNX op, inputs positional and attributes as keyword arguments with ONNX's
defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`). float16 and bfloat16
matrices are cast up exactly by `onnx_half`; float64 ones are computed as they are.
"""

from __future__ import annotations

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import Converter, NodeContext, NodeError, UnsupportedNodeError, Value


def Det(ctx: NodeContext, X: Value) -> Value:
    """The determinant of each square matrix of the innermost two axes -> graph.det (orders up to
    `graph.DET_MAX_ORDER`; larger ones are refused)."""
    x = ctx.data(X)
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise NodeError(f"input of shape {shape} is not a batch of square matrices")
    if graph.element_type(x) not in graph.FLOATS:
        raise UnsupportedNodeError(f"Det of {graph.element_type(x)} is not supported, only of floats")
    if not 1 <= shape[-1] <= graph.DET_MAX_ORDER:
        raise UnsupportedNodeError(
            f"Det of {shape[-1]}x{shape[-1]} matrices is not supported: the kernel unrolls the elimination of one "
            f"matrix, for orders 1 to {graph.DET_MAX_ORDER}"
        )
    return ctx.emit(graph.DetOp(x))


CONVERTERS: dict[str, Converter] = {"Det": Det}
"""ONNX op type (default domain) -> converter, linear algebra family."""
