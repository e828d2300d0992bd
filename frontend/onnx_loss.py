"""ONNX converters for the loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as graph ops that exist
already (a gather of each target's score along the class axis, a gathered weight, a masked sum).

For scores `x` of shape [N, C, d1, ...] (log-probabilities for NegativeLogLikelihoodLoss; SoftmaxCrossEntropyLoss
takes their `graph.log_softmax` along C first), targets `t` [N, d1, ...] and optional class weights `w` [C]:

    picked = take_along_axis(x, reshape(t, [N, 1, d1, ...]), axis 1)   // x[n][t[n, d...]][d...]
    weight = take(w, t) (or 1), 0 where t == ignore_index
    loss = -picked * weight          // reduction "none"
    sum(loss), sum(loss) / sum(weight)   // "sum", "mean"

Out-of-range targets are clamped by the gathers, so a target equal to an out-of-range `ignore_index` reads inside
the tensor before its weight zeroes it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    dtype_of,
)

REDUCTIONS = ("none", "sum", "mean")


def _check_operands(scores: SSAValue, target: SSAValue, weight: SSAValue | None) -> None:
    shape, labels = shape_of(scores), shape_of(target)
    if graph.element_type(scores) != f32:
        raise UnsupportedNodeError(f"scores of {graph.element_type(scores)} are not supported, only float32")
    if graph.element_type(target) not in graph.INDICES:
        raise NodeError(f"target must be int32 or int64, got {graph.element_type(target)}")
    if len(shape) < 2 or labels != (shape[0], *shape[2:]):
        raise NodeError(f"target of shape {labels} does not fit scores of shape {shape} (N, C, d1, ...)")
    if shape[1] == 0:
        raise NodeError("scores have no classes")
    if weight is not None and shape_of(weight) != (shape[1],):
        raise NodeError(f"weight must have shape ({shape[1]},), got {shape_of(weight)}")


def _weights(ctx: NodeContext, target: SSAValue, weight: SSAValue | None, ignore_index: int | None) -> SSAValue | None:
    """Each target's weight (None: all 1), 0 where the target is `ignore_index`."""
    picked = ctx.emit(graph.TakeOp(weight, target, 0)) if weight is not None else None
    if ignore_index is None:
        return picked
    index_type = graph.element_type(target)
    ignored_index = ConstantValue(f"{ctx.node.output[0]}_ignore_index", np.array(ignore_index, dtype_of(index_type)))
    ignored = ctx.emit(graph.EqualOp(target, ctx.data(ignored_index)))
    kept = picked if picked is not None else ctx.emit(graph.ConstantOp(1.0, shape_of(target)))
    return ctx.emit(graph.WhereOp(ignored, ctx.emit(graph.ConstantOp(0.0, ())), kept))


def _negative_log_likelihood(
    ctx: NodeContext,
    log_prob: SSAValue,
    target_value: Value,
    weight_value: Value | None,
    reduction: str,
    ignore_index: int | None,
) -> SSAValue:
    target = ctx.data(target_value)
    weight = ctx.data(weight_value) if weight_value is not None else None
    _check_operands(log_prob, target, weight)
    if reduction not in REDUCTIONS:
        raise NodeError(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{reduction}'")
    shape, labels = shape_of(log_prob), shape_of(target)
    along_classes = ctx.emit(graph.ReshapeOp(target, (shape[0], 1, *shape[2:])))
    picked = ctx.emit(graph.ReshapeOp(ctx.emit(graph.TakeAlongAxisOp(log_prob, along_classes, 1)), labels))
    weights = _weights(ctx, target, weight, ignore_index)
    weighted = ctx.emit(graph.MulOp(picked, weights)) if weights is not None else picked
    loss = ctx.emit(graph.NegOp(weighted))
    if reduction == "none":
        return loss
    every_axis = range(len(labels))
    total = ctx.emit(graph.ReduceSumOp(loss, every_axis, False))
    if reduction == "sum":
        return total
    if weights is None:
        return ctx.emit(graph.ReduceMeanOp(loss, every_axis, False))
    return ctx.emit(graph.DivOp(total, ctx.emit(graph.ReduceSumOp(weights, every_axis, False))))


def NegativeLogLikelihoodLoss(
    ctx: NodeContext,
    input: Value,
    target: Value,
    weight: Value | None = None,
    *,
    reduction: str | bytes = "mean",
    ignore_index: int | None = None,
) -> Value:
    """The negated log-probability of each target, weighted, then reduced -> gathers, mul, neg, reduce_sum."""
    return _negative_log_likelihood(ctx, ctx.data(input), target, weight, as_text(reduction), ignore_index)


def SoftmaxCrossEntropyLoss(
    ctx: NodeContext,
    scores: Value,
    labels: Value,
    weights: Value | None = None,
    *,
    reduction: str | bytes = "mean",
    ignore_index: int | None = None,
) -> Value | tuple[Value, Value]:
    """NegativeLogLikelihoodLoss of graph.log_softmax along the class axis; the log-probabilities are the optional
    second output."""
    x = ctx.data(scores)
    if len(shape_of(x)) < 2:
        raise NodeError(f"scores must have rank 2 or more, got shape {shape_of(x)}")
    log_prob = ctx.emit(graph.LogSoftmaxOp(x, 1))
    loss = _negative_log_likelihood(ctx, log_prob, labels, weights, as_text(reduction), ignore_index)
    return (loss, log_prob) if len(ctx.node.output) > 1 else loss


CONVERTERS: dict[str, Converter] = {
    "NegativeLogLikelihoodLoss": NegativeLogLikelihoodLoss,
    "SoftmaxCrossEntropyLoss": SoftmaxCrossEntropyLoss,
}
"""ONNX op type (default domain) -> converter."""
