"""ONNX converter for NonMaxSuppression, as graph ops with a trimmed output (`graph.compress`, `lowering/abi.py`).

Per batch and class, each box's rank is the number of boxes before it (higher score, or equal at a lower index); the
boxes are gathered in rank order (`graph.take`), and their pairwise "suppresses" relation (IoU above the threshold,
with onnx's rules for empty intersections and areas) is one [B, C, N, N] tensor. The greedy selection is unrolled
over the N ranks in the graph: the box of rank t is kept when it is a candidate (score above the threshold), no kept
box suppresses it, and fewer than max_output_boxes_per_class are kept. That is O(N) graph ops of O(N) work each, so
N is bounded (`MAX_BOXES`); the kept (batch, class, box) rows are compressed in order into an upper-bound output plus
a run-time count, which the runtime trims.

    %kept = graph.compress %triples, %keep {axis = 0 : i64}
        : (tensor<12x3xi64>, tensor<12xi1>) -> (tensor<12x3xi64>, tensor<1xi64>)
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    DataDependentValue,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_reshape,
)

MAX_BOXES = 128
"""The most boxes per batch the unrolled greedy selection takes (each box is a step of graph ops)."""


class _Boxes:
    """Emits the graph ops of one NonMaxSuppression node."""

    def __init__(self, ctx: NodeContext):
        self.ctx = ctx
        self.count = 0

    def constant(self, array: np.ndarray) -> SSAValue:
        self.count += 1
        return self.ctx.data(ConstantValue(f"{self.ctx.node.output[0]}.c{self.count}", array))

    def __call__(self, op: type[graph.ElementwiseBinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(op(a, b))

    def column(self, boxes: SSAValue, index: int) -> SSAValue:
        """Coordinate `index` of [B, C, N, 4] boxes: [B, C, N]."""
        b, c, n, _ = shape_of(boxes)
        part = self.ctx.emit(graph.SliceOp(boxes, [0, 0, 0, index], [1, 1, 1, 1], [b, c, n, 1]))
        return emit_reshape(self.ctx, part, (b, c, n))

    def scalar(self, value: Value | None, what: str) -> SSAValue | None:
        if value is None:
            return None
        data = self.ctx.data(value)
        if graph.element_type(data) != f32 or len(shape_of(data)) > 1 or np.prod(shape_of(data)) != 1:
            raise UnsupportedNodeError(f"{what} must be one float32 element, got {data.type}")
        return emit_reshape(self.ctx, data, ())


def _limit(value: Value | None) -> int:
    if value is None:
        return 0
    if not isinstance(value, ConstantValue):
        raise UnsupportedNodeError("max_output_boxes_per_class must be a compile-time constant (it bounds the output)")
    if value.array.size != 1:
        raise NodeError(f"max_output_boxes_per_class must hold one element, got shape {value.array.shape}")
    return max(int(value.array.reshape(())), 0)


def _edges(ops: _Boxes, boxes: SSAValue, center_point_box: int) -> tuple[SSAValue, ...]:
    """(y_min, y_max, x_min, x_max) of [B, C, N, 4] boxes, each [B, C, N]."""
    a, b, c, d = (ops.column(boxes, index) for index in range(4))
    if center_point_box:  # [x_center, y_center, width, height]
        half = ops.constant(np.array(0.5, np.float32))
        half_w, half_h = ops(graph.MulOp, c, half), ops(graph.MulOp, d, half)
        x_min, x_max = ops(graph.SubOp, a, half_w), ops(graph.AddOp, a, half_w)
        return ops(graph.SubOp, b, half_h), ops(graph.AddOp, b, half_h), x_min, x_max
    # [y1, x1, y2, x2], either diagonal
    return ops(graph.MinOp, a, c), ops(graph.MaxOp, a, c), ops(graph.MinOp, b, d), ops(graph.MaxOp, b, d)


def _suppresses(ops: _Boxes, edges: tuple[SSAValue, ...], threshold: SSAValue) -> SSAValue:
    """[B, C, N, N] float 1 where the IoU of boxes t and u exceeds `threshold` (0 for empty overlaps or areas)."""
    b, c, n = shape_of(edges[0])
    rows = [emit_reshape(ops.ctx, edge, (b, c, n, 1)) for edge in edges]
    columns = [emit_reshape(ops.ctx, edge, (b, c, 1, n)) for edge in edges]
    zero = ops.constant(np.array(0.0, np.float32))
    overlaps: list[SSAValue] = []
    for low, high in ((0, 1), (2, 3)):
        start = ops(graph.MaxOp, rows[low], columns[low])
        end = ops(graph.MinOp, rows[high], columns[high])
        overlaps.append(ops(graph.SubOp, end, start))
    intersection = ops(graph.MulOp, *overlaps)
    area_rows = ops(graph.MulOp, ops(graph.SubOp, rows[1], rows[0]), ops(graph.SubOp, rows[3], rows[2]))
    area_columns = ops(graph.MulOp, ops(graph.SubOp, columns[1], columns[0]), ops(graph.SubOp, columns[3], columns[2]))
    union = ops(graph.SubOp, ops(graph.AddOp, area_rows, area_columns), intersection)
    conditions = [
        ops(graph.GreaterOp, overlaps[0], zero),
        ops(graph.GreaterOp, overlaps[1], zero),
        ops(graph.GreaterOp, intersection, zero),
        ops(graph.GreaterOp, area_rows, zero),
        ops(graph.GreaterOp, area_columns, zero),
        ops(graph.GreaterOp, union, zero),
        ops(graph.GreaterOp, ops(graph.DivOp, intersection, union), threshold),
    ]
    suppressed = conditions[0]
    for condition in conditions[1:]:
        suppressed = ops(graph.AndOp, suppressed, condition)
    return ops.ctx.emit(graph.CastOp(suppressed, f32))


def _rank_order(ops: _Boxes, scores: SSAValue) -> SSAValue:
    """The box index of each rank, [B, C, N] int64: descending scores, ties by lower index first."""
    b, c, n = shape_of(scores)
    mine = emit_reshape(ops.ctx, scores, (b, c, n, 1))
    others = emit_reshape(ops.ctx, scores, (b, c, 1, n))
    lower_index = ops.constant(np.tril(np.ones((n, n), np.bool_), -1))  # [i, j]: j < i
    before = ops(
        graph.OrOp, ops(graph.GreaterOp, others, mine), ops(graph.AndOp, ops(graph.EqualOp, others, mine), lower_index)
    )
    ranks = ops.ctx.emit(graph.ReduceSumOp(ops.ctx.emit(graph.CastOp(before, i64)), [3], keepdims=True))  # [B,C,N,1]
    at_rank = ops(graph.EqualOp, ranks, ops.constant(np.arange(n, dtype=np.int64).reshape(1, 1, 1, n)))
    index = ops.ctx.emit(
        graph.WhereOp(
            at_rank,
            ops.constant(np.arange(n, dtype=np.int64).reshape(1, 1, n, 1)),
            ops.constant(np.zeros((), np.int64)),
        )
    )
    return ops.ctx.emit(graph.ReduceSumOp(index, [2], keepdims=False))


def NonMaxSuppression(
    ctx: NodeContext,
    boxes: Value,
    scores: Value,
    max_output_boxes_per_class: Value | None = None,
    iou_threshold: Value | None = None,
    score_threshold: Value | None = None,
    *,
    center_point_box: int = 0,
) -> Value | DataDependentValue:
    """Greedy per-class box selection by score and IoU -> graph ops unrolled over the ranks, graph.compress of the
    selected (batch, class, box) rows (trimmed at run time)."""
    box_data, score_data = ctx.data(boxes), ctx.data(scores)
    (batches, count, corners), (score_batches, classes, score_count) = shape_of(box_data), shape_of(score_data)
    if corners != 4 or (score_batches, score_count) != (batches, count):
        raise NodeError(f"boxes {box_data.type} and scores {score_data.type} must be [B, N, 4] and [B, C, N]")
    if graph.element_type(box_data) != f32 or graph.element_type(score_data) != f32:
        raise UnsupportedNodeError(f"boxes and scores must be float32, got {box_data.type} and {score_data.type}")
    if center_point_box not in (0, 1):
        raise NodeError(f"center_point_box must be 0 or 1, got {center_point_box}")
    limit = min(_limit(max_output_boxes_per_class), count)
    if limit == 0 or batches * classes * count == 0:
        return ConstantValue(ctx.node.output[0], np.zeros((0, 3), np.int64))
    if count > MAX_BOXES:
        raise UnsupportedNodeError(f"{count} boxes per batch: the unrolled selection takes at most {MAX_BOXES}")
    ops = _Boxes(ctx)
    iou = ops.scalar(iou_threshold, "iou_threshold")
    if iou is None:
        iou = ops.constant(np.array(0.0, np.float32))
    order = _rank_order(ops, score_data)  # [B, C, N]
    lanes = np.arange(batches * classes, dtype=np.int64).reshape(batches, classes, 1)
    flat_scores = emit_reshape(ctx, score_data, (batches * classes * count,))
    ranked_scores = ctx.emit(graph.TakeOp(flat_scores, ops(graph.AddOp, order, ops.constant(lanes * count)), 0))
    flat_boxes = emit_reshape(ctx, box_data, (batches * count, 4))
    images = ops.constant(np.arange(batches, dtype=np.int64).reshape(batches, 1, 1) * count)
    ranked_boxes = ctx.emit(graph.TakeOp(flat_boxes, ops(graph.AddOp, order, images), 0))  # [B, C, N, 4]
    suppresses = _suppresses(ops, _edges(ops, ranked_boxes, center_point_box), iou)
    score_floor = ops.scalar(score_threshold, "score_threshold")
    candidates = (
        ops.constant(np.ones((batches, classes, count), np.float32))
        if score_floor is None
        else ctx.emit(graph.CastOp(ops(graph.GreaterOp, ranked_scores, score_floor), f32))
    )
    one = ops.constant(np.array(1.0, np.float32))
    room = ops.constant(np.array(float(limit), np.float32))
    kept: SSAValue | None = None  # [B, C, N]: 1 at the kept ranks so far
    taken: SSAValue | None = None  # [B, C, 1]: how many
    for rank in range(count):
        keep = emit_reshape(
            ctx,
            ctx.emit(graph.SliceOp(candidates, [0, 0, rank], [1, 1, 1], [batches, classes, 1])),
            (batches, classes, 1),
        )
        if kept is not None and taken is not None:
            row = ctx.emit(graph.SliceOp(suppresses, [0, 0, rank, 0], [1, 1, 1, 1], [batches, classes, 1, count]))
            hit = ctx.emit(
                graph.ReduceMaxOp(
                    ops(graph.MulOp, kept, emit_reshape(ctx, row, (batches, classes, count))), [2], keepdims=True
                )
            )
            open_slots = ctx.emit(graph.CastOp(ops(graph.LessOp, taken, room), f32))
            keep = ops(graph.MulOp, ops(graph.MulOp, keep, ops(graph.SubOp, one, hit)), open_slots)
        at_rank = np.zeros((1, 1, count), np.float32)
        at_rank[0, 0, rank] = 1
        placed = ops(graph.MulOp, keep, ops.constant(at_rank))
        kept = placed if kept is None else ops(graph.AddOp, kept, placed)
        taken = keep if taken is None else ops(graph.AddOp, taken, keep)
    assert kept is not None
    selected = emit_reshape(
        ctx, ops(graph.GreaterOp, kept, ops.constant(np.array(0.5, np.float32))), (batches * classes * count,)
    )
    batch_column = np.broadcast_to(np.arange(batches).reshape(batches, 1, 1, 1), (batches, classes, count, 1))
    class_column = np.broadcast_to(np.arange(classes).reshape(1, classes, 1, 1), (batches, classes, count, 1))
    rows = ctx.emit(
        graph.ConcatOp(
            [
                ops.constant(batch_column.astype(np.int64)),
                ops.constant(class_column.astype(np.int64)),
                emit_reshape(ctx, order, (batches, classes, count, 1)),
            ],
            3,
        )
    )
    compress = ctx.builder.insert(
        graph.CompressOp(emit_reshape(ctx, rows, (batches * classes * count, 3)), selected, 0)
    )
    return DataDependentValue(compress.result, compress.count, 0)


CONVERTERS: dict[str, Converter] = {
    "NonMaxSuppression": NonMaxSuppression,
}
"""ONNX op type (default domain) -> converter."""
