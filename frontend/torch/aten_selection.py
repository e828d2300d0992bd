"""ATen converters that select or accumulate along a dim: argmax/argmin, max/min with indices, topk, gather and
cumsum.

    CONVERTERS[torch.ops.aten.max.dim](ctx, node)   # -> (graph.reduce_max, graph.argmax)
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import fx
from xdsl.ir import OpResult, SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.torch.aten_common import AtenContext, Converter, axis, meta

aten = torch.ops.aten


def _arg_reduce(op: type[graph.ArgReduceOp]) -> Converter:
    """argmax/argmin along a dim (of the flattened tensor where dim is None), the first of equal extremes."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        value = ctx.value(args["self"])
        if args.get("dim") is None:
            flat = ctx.reshape(value, (math.prod(ctx.dims(args["self"])),))
            return ctx.reshape(ctx.emit(op, flat, 0, keepdims=False), ctx.dims(node))
        dim = axis(args["dim"], len(shape_of(value)))
        return ctx.emit(op, value, dim, keepdims=bool(args["keepdim"]))

    return convert


def _extreme_with_index(reduce: type[graph.ReduceOp], arg_reduce: type[graph.ArgReduceOp]) -> Converter:
    """max.dim/min.dim: the extreme values and the index of the first of them."""

    def convert(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
        args = ctx.args(node)
        value = ctx.value(args["self"])
        dim = axis(args["dim"], len(shape_of(value)))
        keepdim = bool(args["keepdim"])
        return ctx.emit(reduce, value, [dim], keepdim), ctx.emit(arg_reduce, value, dim, keepdims=keepdim)

    return convert


def topk(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """The k largest (or smallest) along a dim, best first, and their indices -> graph.top_k."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    dim = axis(args["dim"], len(shape_of(value)))
    values = ctx.emit(graph.TopKOp, value, dim, int(args["k"]), largest=bool(args["largest"]))
    assert isinstance(values, OpResult)
    return values, values.op.results[1]


def gather(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`torch.gather` -> graph.take_along_axis."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    dim = axis(args["dim"], len(shape_of(value)))
    return ctx.emit(graph.TakeAlongAxisOp, value, ctx.value(args["index"]), dim)


def cumsum(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    value = ctx.tensor(args["self"], meta(node).dtype)
    return ctx.emit(graph.CumSumOp, value, axis(args["dim"], len(shape_of(value))))


CONVERTERS: dict[Any, Converter] = {
    aten.argmax.default: _arg_reduce(graph.ArgMaxOp),
    aten.argmin.default: _arg_reduce(graph.ArgMinOp),
    aten.max.dim: _extreme_with_index(graph.ReduceMaxOp, graph.ArgMaxOp),
    aten.min.dim: _extreme_with_index(graph.ReduceMinOp, graph.ArgMinOp),
    aten.topk.default: topk,
    aten.gather.default: gather,
    aten.cumsum.default: cumsum,
}
