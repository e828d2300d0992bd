"""ATen converters of neural-network ops: matrix products (a transposed 2-D operand folded into graph.gemm's
flags), convolution, inference batch norm, instance and group norm, pooling, layer norm, softmax, embedding and
padding.

    CONVERTERS[torch.ops.aten.addmm.default](ctx, node)   # addmm(b, x, permute(w)) -> graph.gemm x, w, b {trans_b}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import fx
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.torch.aten_common import (
    AtenContext,
    Converter,
    SupportCheck,
    axis,
    bind,
    float32_only,
    meta,
)

aten = torch.ops.aten


def _gemm_operand(ctx: AtenContext, arg: fx.Node) -> tuple[SSAValue, bool]:
    """A 2-D matrix operand, and whether it is the transpose of the value given (a permute node's input, so that
    graph.gemm reads the untransposed weight)."""
    if _is_transpose_2d(arg) and arg not in ctx.constants:
        return ctx.value(arg.args[0]), True
    return ctx.value(arg), False


def _is_transpose_2d(arg: Any) -> bool:
    if not isinstance(arg, fx.Node) or arg.target != aten.permute.default or meta(arg).dim() != 2:
        return False
    return [dim % 2 for dim in arg.args[1]] == [1, 0]  # type: ignore[union-attr]


def addmm(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`beta * bias + alpha * (a @ b)` -> graph.gemm."""
    args = ctx.args(node)
    plain = args["alpha"] == args["beta"] == 1
    if plain and (product := linear_of_flattened(ctx, node, args["mat1"], args["self"])) is not None:
        return product
    a, trans_a = _gemm_operand(ctx, args["mat1"])
    b, trans_b = _gemm_operand(ctx, args["mat2"])
    return ctx.emit(
        graph.GemmOp,
        a,
        b,
        ctx.value(args["self"]),
        alpha=float(args["alpha"]),
        beta=float(args["beta"]),
        trans_a=trans_a,
        trans_b=trans_b,
    )


def mm(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    if (product := linear_of_flattened(ctx, node, args["self"], None)) is not None:
        return product
    a, trans_a = _gemm_operand(ctx, args["self"])
    b, trans_b = _gemm_operand(ctx, args["mat2"])
    return ctx.emit(graph.GemmOp, a, b, None, trans_a=trans_a, trans_b=trans_b)


def linear_of_flattened(ctx: AtenContext, node: fx.Node, rows: fx.Node, bias: fx.Node | None) -> SSAValue | None:
    """`x.view(-1, k) @ w + bias` where the view flattens symbolic leading sizes (a linear layer of a batch of
    sequences) as graph.matmul of x itself, then flattened: a view back to x's leading sizes finds x's product (one
    reshape could not split `batch*sequence`). None for another product."""
    flattened = ctx.value(rows)
    origin = ctx.shapes.flattened.get(flattened)
    bias_dims = None if bias is None else ctx.dims(bias)
    if origin is None or (bias_dims is not None and (len(bias_dims) > 2 or math.prod(bias_dims[:-1]) != 1)):
        return None
    matrix = ctx.value(ctx.args(node)["mat2"])
    lead, width = ctx.shapes.of(origin)[:-1], shape_of(matrix)[1]
    value = ctx.shapes.emit((*lead, width), graph.MatMulOp, origin, matrix)
    if bias is not None:
        addend = ctx.reshape(ctx.value(bias), (width,))
        value = ctx.shapes.emit((*lead, width), graph.AddOp, value, addend)
    return ctx.reshape(value, ctx.dims(node))


def bmm(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """Batched matrix products -> graph.matmul; with symbolic sizes, of the values before a merge of leading sizes
    (attention's [batch*heads, sequence, d] views of [batch, heads, sequence, d]) or a broadcast to the batch (a
    weight), which graph.matmul broadcasts itself."""
    a, b = ctx.value(node.args[0]), ctx.value(node.args[1])
    a_origin, b_origin = ctx.shapes.flattened.get(a), ctx.shapes.flattened.get(b)
    if a_origin is not None and b_origin is not None:
        a_dims, b_dims = ctx.shapes.of(a_origin), ctx.shapes.of(b_origin)
        if a_dims[:-2] == b_dims[:-2]:
            product = ctx.shapes.emit((*a_dims[:-1], b_dims[-1]), graph.MatMulOp, a_origin, b_origin)
            return ctx.reshape(product, ctx.dims(node))
    a, b = ctx.shapes.broadcasts.get(a, a), ctx.shapes.broadcasts.get(b, b)
    return ctx.emit(graph.MatMulOp, a, b)


def _spatial(values: Sequence[int], count: int) -> list[int]:
    """A torch window argument (one value for every spatial axis, or one each) for `count` axes."""
    values = list(values)
    return values * count if len(values) == 1 else values


def convolution(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    spatial = meta(node).dim() - 2
    padding = _spatial(args["padding"], spatial)
    bias = None if args["bias"] is None else ctx.value(args["bias"])
    return ctx.emit(
        graph.ConvOp,
        ctx.value(args["input"]),
        ctx.value(args["weight"]),
        bias,
        strides=_spatial(args["stride"], spatial),
        pads=padding + padding,
        dilations=_spatial(args["dilation"], spatial),
        group=int(args["groups"]),
    )


def _convolution_check(node: fx.Node) -> str | None:
    args = bind(node)
    if args["transposed"]:
        return "transposed convolution"
    if isinstance(args["padding"], str):
        return f"padding='{args['padding']}'"
    return None


def _affine(ctx: AtenContext, args: dict[str, Any], channels: int) -> tuple[SSAValue, SSAValue]:
    """A per-channel normalisation's `weight` and `bias`, ones and zeros where the op has none."""
    scale = ctx.filled(1.0, (channels,), torch.float32) if args["weight"] is None else ctx.value(args["weight"])
    bias = ctx.filled(0.0, (channels,), torch.float32) if args["bias"] is None else ctx.value(args["bias"])
    return scale, bias


def batch_norm(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """`_native_batch_norm_legit_no_training` -> graph.batch_norm (the saved statistics are not computed)."""
    args = ctx.args(node)
    x = ctx.value(args["input"])
    scale, bias = _affine(ctx, args, shape_of(x)[1])
    mean, var = ctx.value(args["running_mean"]), ctx.value(args["running_var"])
    return ctx.emit(graph.BatchNormOp, x, scale, bias, mean, var, float(args["eps"])), None, None


def instance_statistics_norm(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """`_native_batch_norm_legit.no_stats` (batch statistics, as instance norm decomposes to over a batch of one)
    -> graph.group_norm with a group per channel."""
    args = ctx.args(node)
    x = ctx.value(args["input"])
    channels = shape_of(x)[1]
    scale = ctx.filled(1.0, (channels,), torch.float32) if args["weight"] is None else ctx.value(args["weight"])
    bias = ctx.filled(0.0, (channels,), torch.float32) if args["bias"] is None else ctx.value(args["bias"])
    normed = ctx.emit(graph.GroupNormOp, x, scale, bias, num_groups=channels, epsilon=float(args["eps"]))
    return normed, None, None


def _instance_statistics_check(node: fx.Node) -> str | None:
    batch = meta(node.args[0]).shape[0]  # type: ignore[union-attr]
    if isinstance(batch, int) and batch == 1:
        return None
    return f"batch statistics over a batch of {batch} (1 only, as instance norm gives)"


def _pool_window(args: dict[str, Any], spatial: int) -> dict[str, Any]:
    kernel = _spatial(args["kernel_size"], spatial)
    stride = _spatial(args["stride"], spatial) if args["stride"] else kernel
    padding = _spatial(args["padding"], spatial)
    return {"kernel_shape": kernel, "strides": stride, "pads": padding + padding, "ceil_mode": bool(args["ceil_mode"])}


def max_pool(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """max_pool2d_with_indices -> graph.max_pool; the indices are not computed."""
    args = ctx.args(node)
    spatial = meta(node)[0].dim() - 2
    window = _pool_window(args, spatial)
    pooled = ctx.emit(graph.MaxPoolOp, ctx.value(args["self"]), dilations=_spatial(args["dilation"], spatial), **window)
    return pooled, None


def avg_pool(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    spatial = meta(node).dim() - 2
    window = _pool_window(args, spatial)
    return ctx.emit(
        graph.AveragePoolOp,
        ctx.value(args["self"]),
        dilations=[1] * spatial,
        count_include_pad=bool(args["count_include_pad"]),
        **window,
    )


def _avg_pool_check(node: fx.Node) -> str | None:
    return None if bind(node).get("divisor_override") is None else "divisor_override"


def adaptive_avg_pool(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """An adaptive average pool whose output size divides the input's -> graph.average_pool of the quotient."""
    x = ctx.value(node.args[0])
    sizes = shape_of(x)[2:]
    outputs = tuple(meta(node).shape[2:])
    kernel = [size // out for size, out in zip(sizes, outputs)]
    return ctx.emit(
        graph.AveragePoolOp,
        x,
        kernel_shape=kernel,
        strides=kernel,
        pads=[0] * 2 * len(kernel),
        dilations=[1] * len(kernel),
    )


def _adaptive_check(node: fx.Node) -> str | None:
    sizes = tuple(meta(node.args[0]).shape[2:])  # type: ignore[union-attr]
    outputs = tuple(meta(node).shape[2:])
    if not all(isinstance(size, int) for size in sizes + outputs):
        return f"symbolic spatial sizes {sizes} -> {outputs}"
    if any(size % out for size, out in zip(sizes, outputs)):
        return f"output size {outputs} that does not divide the input size {sizes}"
    return None


def layer_norm(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """native_layer_norm -> graph.layer_norm over the trailing normalized_shape; mean and rstd are not computed."""
    args = ctx.args(node)
    x = ctx.value(args["input"])
    normalized = tuple(args["normalized_shape"])
    scale = ctx.filled(1.0, normalized, torch.float32) if args["weight"] is None else ctx.value(args["weight"])
    bias = None if args["bias"] is None else ctx.value(args["bias"])
    first = len(shape_of(x)) - len(normalized)
    return ctx.emit(graph.LayerNormOp, x, scale, bias, axis=first, epsilon=float(args["eps"])), None, None


def group_norm(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """native_group_norm -> graph.group_norm; mean and rstd are not computed."""
    args = ctx.args(node)
    x = ctx.value(args["input"])
    scale, bias = _affine(ctx, args, shape_of(x)[1])
    normed = ctx.emit(graph.GroupNormOp, x, scale, bias, num_groups=int(args["group"]), epsilon=float(args["eps"]))
    return normed, None, None


def _softmax(op: type[graph.AxisOp]) -> Converter:
    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        x = ctx.value(args["self"])
        return ctx.emit(op, x, axis(args["dim"], len(shape_of(x))))

    return convert


def embedding(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """Rows of the table at the indices -> graph.take along axis 0."""
    args = ctx.args(node)
    return ctx.emit(graph.TakeOp, ctx.value(args["weight"]), ctx.value(args["indices"]), 0)


def constant_pad(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """constant_pad_nd: torch's (begin, end) pairs from the last dim backwards -> graph.pad's begins then ends."""
    args = ctx.args(node)
    x = ctx.value(args["self"])
    rank = len(shape_of(x))
    pairs = list(args["pad"])
    begins, ends = [0] * rank, [0] * rank
    for index in range(len(pairs) // 2):
        begins[rank - 1 - index], ends[rank - 1 - index] = pairs[2 * index], pairs[2 * index + 1]
    dtype = meta(node).dtype
    value = args["value"]
    fill = float(value) if dtype == torch.float32 else ctx.filled(value, (), dtype)
    return ctx.emit(graph.PadOp, x, begins + ends, "constant", fill)


CONVERTERS: dict[Any, Converter] = {
    aten.addmm.default: addmm,
    aten.mm.default: mm,
    aten.bmm.default: bmm,
    aten.convolution.default: convolution,
    aten._native_batch_norm_legit_no_training.default: batch_norm,
    aten.max_pool2d_with_indices.default: max_pool,
    aten.avg_pool2d.default: avg_pool,
    aten._adaptive_avg_pool2d.default: adaptive_avg_pool,
    aten.native_layer_norm.default: layer_norm,
    aten.native_group_norm.default: group_norm,
    aten._native_batch_norm_legit.no_stats: instance_statistics_norm,
    aten._softmax.default: _softmax(graph.SoftmaxOp),
    aten._log_softmax.default: _softmax(graph.LogSoftmaxOp),
    aten.embedding.default: embedding,
    aten.constant_pad_nd.default: constant_pad,
}

COMPUTED_RESULTS: dict[Any, int] = {
    aten._native_batch_norm_legit_no_training.default: 1,
    aten.max_pool2d_with_indices.default: 1,
    aten.native_layer_norm.default: 1,
    aten.native_group_norm.default: 1,
    aten._native_batch_norm_legit.no_stats: 1,
}
"""Ops of several results of which only the first ones are computed (not max pooling's indices, nor the saved
statistics of the norms): how many."""

FLOAT_ONLY = [
    aten.addmm.default,
    aten.mm.default,
    aten.bmm.default,
    aten._native_batch_norm_legit_no_training.default,
    aten.max_pool2d_with_indices.default,
    aten.native_layer_norm.default,
    aten.native_group_norm.default,
    aten._softmax.default,
    aten._log_softmax.default,
]

SUPPORT_CHECKS: dict[Any, SupportCheck] = {
    **dict.fromkeys(FLOAT_ONLY, float32_only),
    aten.convolution.default: lambda node: float32_only(node) or _convolution_check(node),
    aten.avg_pool2d.default: lambda node: float32_only(node) or _avg_pool_check(node),
    aten._adaptive_avg_pool2d.default: lambda node: float32_only(node) or _adaptive_check(node),
    aten._native_batch_norm_legit.no_stats: lambda node: float32_only(node) or _instance_statistics_check(node),
}
