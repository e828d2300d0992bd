"""Range checks of run-time indices: Gather, GatherElements, GatherND, ScatterElements and ScatterND refuse an index
outside [-n, n) as ONNX Runtime does, instead of reading (or writing) a clamped position.

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
    ranges = ", ".join(f"[{-n}, {n})" for n in bounds)
    message = f"indices must lie in {ranges} ({what})"
    if isinstance(indices, ConstantValue):
        array = np.asarray(indices.array, np.int64)
        limit = np.broadcast_to(np.asarray(bounds, np.int64), array.shape) if array.size else array
        bad = array[(array < -limit) | (array >= limit)]
        if bad.size:
            raise NodeError(f"{message}, got {bad.reshape(-1)[:8].tolist()}")
        return
    shape = shape_of(indices)
    if math.prod(shape) == 0:
        return
    element = graph.element_type(indices)
    dtype = np.int32 if element == graph.INDICES[0] else np.int64
    bound_shape = (len(bounds),) if len(bounds) > 1 else (1,)
    upper = ctx.data(ConstantValue(f"{ctx.node.output[0]}.index_bound", np.array(bounds, dtype).reshape(bound_shape)))
    lower = ctx.data(ConstantValue(f"{ctx.node.output[0]}.index_low", -np.array(bounds, dtype).reshape(bound_shape)))
    below = ctx.emit(graph.LessOp(indices, lower))
    above = ctx.emit(graph.GreaterOrEqualOp(indices, upper))
    bad = ctx.emit(graph.CastOp(ctx.emit(graph.OrOp(below, above)), i64))
    total = ctx.emit(graph.ReduceSumOp(bad, range(len(shape)), keepdims=False))
    ctx.index_checks.append((ctx.emit(graph.ReshapeOp(total, (1,))), message))
