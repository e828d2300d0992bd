"""Range checks of run-time indices: Gather, GatherElements, GatherND, ScatterElements and ScatterND refuse an index
outside [-n, n), and ReverseSequence a length outside [0, T], as ONNX Runtime does, instead of reading (or writing) a
clamped position.

The kernels themselves clamp (they never touch memory outside a tensor); beside them the importer adds a check: how
many indices lie out of range, one small reduction over the indices, returned by @main after the outputs
(`ImportedModel.index_checks`, `lowering/abi.py`). The runtime raises `IndexOutOfRangeError` naming the node and the
range when a count is not zero. Constant indices are checked at import time.

    %low = graph.less %idx, %minus_n          %high = graph.greater_or_equal %idx, %n
    %bad = graph.or %low, %high               %count = graph.reduce_sum (graph.cast %bad to i64), all axes
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import i64

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import ConstantValue, NodeContext, NodeError, Value


def check_index_range(ctx: NodeContext, indices: Value, bounds: Sequence[int], what: str) -> None:
    """Check that every element of `indices` lies in [-n, n), n = `bounds` (one bound, or one per position of the
    indices' last dim, as GatherND's index tuples); `what` names the range in the message (`axis 0 of extent 3`)."""
    if graph.DYNAMIC in bounds:  # the run-time extent is not a constant to compare with
        raise NodeError(f"indices into {what.split(' of extent')[0]}, whose extent is known only at run time")
    ranges = ", ".join(f"[{-n}, {n})" for n in bounds)
    limit = np.array(bounds, np.int64)
    check_range(ctx, indices, -limit, limit, f"indices must lie in {ranges} ({what})")


def check_range(ctx: NodeContext, values: Value, lower: np.ndarray, upper: np.ndarray, message: str) -> None:
    """Check that every element v of the integer `values` has `lower <= v < upper` (each one bound, or one per
    position of the last dim): at import time for a constant (raising `NodeError`), else by a count that @main
    returns and the runtime raises on (`ImportedModel.index_checks`)."""
    if isinstance(values, ConstantValue):
        array = np.asarray(values.array, np.int64)
        low, high = (np.broadcast_to(bound, array.shape) if array.size else array for bound in (lower, upper))
        bad = array[(array < low) | (array >= high)]
        if bad.size:
            raise NodeError(f"{message}, got {bad.reshape(-1)[:8].tolist()}")
        return
    shape = shape_of(values)
    if math.prod(shape) == 0:
        return
    dtype = np.int32 if graph.element_type(values) == graph.INDICES[0] else np.int64
    bound_shape = (len(lower),) if len(lower) > 1 else (1,)
    low_value = ctx.data(ConstantValue(f"{ctx.node.output[0]}.index_low", lower.astype(dtype).reshape(bound_shape)))
    high_value = ctx.data(ConstantValue(f"{ctx.node.output[0]}.index_bound", upper.astype(dtype).reshape(bound_shape)))
    below = ctx.emit(graph.LessOp(values, low_value))
    above = ctx.emit(graph.GreaterOrEqualOp(values, high_value))
    bad = ctx.emit(graph.CastOp(ctx.emit(graph.OrOp(below, above)), i64))
    total = ctx.emit(graph.ReduceSumOp(bad, range(len(shape)), keepdims=False))
    ctx.index_checks.append((ctx.emit(graph.ReshapeOp(total, (1,))), message))
