"""ONNX converters for neural-network ops: convolution, pooling, normalisation, dropout (Pad: `onnx_padding`).

Each converter is named exactly like its ONNX op and takes the node's inputs positionally and its attributes as
keyword arguments with ONNX's defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`).
Where an opset turned an attribute into an input of the same name (Dropout's ratio),
the input slot is suffixed `_input`; `onnx_operators.CONSTANT_OPERANDS` names the input slots that must be compile-time
constants though their type may be float (a backend binds graph inputs feeding them). `auto_pad` is resolved here
into explicit pads. Dropout in training mode is supported with ratio 0 only (the identity).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i8, i16
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import Shape, shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    emit_reshape,
    emit_softmax,
)

_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _constant_array(value: Value, what: str) -> np.ndarray:
    if not isinstance(value, ConstantValue):
        raise NodeError(
            f"{what} must be a compile-time constant (an initializer or a Constant output)"
        )
    return value.array


def _window(
    x: Shape,
    kernel: Sequence[int],
    *,
    auto_pad: str | bytes,
    pads: Sequence[int] | None,
    strides: Sequence[int] | None,
    dilations: Sequence[int] | None,
    ceil_mode: int = 0,
) -> tuple[list[int], list[int], list[int]]:
    """Checked strides, explicit pads (auto_pad resolved) and dilations of a window over `x`'s spatial axes."""
    spatial = len(x) - 2
    if spatial < 1:
        raise NodeError(f"input must have rank 3 or more (N, C, spatial...), got shape {x}")
    strides = [1] * spatial if strides is None else list(strides)
    dilations = [1] * spatial if dilations is None else list(dilations)
    pads = [0] * (2 * spatial) if pads is None else list(pads)
    for name, values, count in (
        ("kernel_shape", kernel, spatial),
        ("strides", strides, spatial),
        ("dilations", dilations, spatial),
        ("pads", pads, 2 * spatial),
    ):
        if len(values) != count:
            raise NodeError(
                f"attribute {name} has {len(values)} values, expected {count} for input shape {x}"
            )
    if any(v < 1 for v in (*kernel, *strides, *dilations)):
        raise NodeError(
            f"kernel_shape, strides and dilations must be positive, got {kernel}, {strides}, {dilations}"
        )
    if any(p < 0 for p in pads):
        raise NodeError(f"attribute pads must be non-negative, got {pads}")
    mode = as_text(auto_pad)
    if mode not in _AUTO_PADS:
        raise NodeError(
            f"attribute auto_pad='{mode}' is not supported (expected one of {', '.join(_AUTO_PADS)})"
        )
    if mode == "VALID":
        pads = [0] * (2 * spatial)
    elif mode != "NOTSET":
        for axis in range(spatial):
            out = -(-x[2 + axis] // strides[axis])
            total = max(
                0,
                (out - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis] + 1 - x[2 + axis],
            )
            small, large = total // 2, total - total // 2
            pads[axis], pads[spatial + axis] = (
                (small, large) if mode == "SAME_UPPER" else (large, small)
            )
    for axis in range(spatial):
        if (
            graph.pooled_size(
                x[2 + axis],
                kernel[axis],
                strides[axis],
                pads[axis],
                pads[spatial + axis],
                dilations[axis],
                bool(ceil_mode) and mode == "NOTSET",
            )
            is None
        ):
            raise NodeError(
                f"kernel_shape {list(kernel)} (dilations {dilations}, pads {pads}) does not fit input shape {x}"
            )
    return strides, pads, dilations


# Convolution


def Conv(
    ctx: NodeContext,
    X: Value,
    W: Value,
    B: Value | None = None,
    *,
    auto_pad: str | bytes = "NOTSET",
    dilations: Sequence[int] | None = None,
    group: int = 1,
    kernel_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """N-d grouped convolution -> graph.conv (auto_pad resolved into pads)."""
    x, w = ctx.data(X), ctx.data(W)
    x_shape, w_shape = shape_of(x), shape_of(w)
    if len(w_shape) != len(x_shape) or len(x_shape) < 3:
        raise NodeError(
            f"X of shape {x_shape} and W of shape {w_shape} must have the same rank, 3 or more"
        )
    if kernel_shape is not None and tuple(kernel_shape) != w_shape[2:]:
        raise NodeError(
            f"attribute kernel_shape {list(kernel_shape)} differs from W's spatial shape {w_shape[2:]}"
        )
    if group < 1 or x_shape[1] != w_shape[1] * group or w_shape[0] % group:
        raise NodeError(
            f"attribute group={group} does not match X's {x_shape[1]} channels and W's shape {w_shape} "
            "(need C == W[1] * group and W[0] divisible by group)"
        )
    bias = None if B is None else ctx.data(B)
    if bias is not None and shape_of(bias) != (w_shape[0],):
        raise NodeError(f"B of shape {shape_of(bias)} must have shape ({w_shape[0]},)")
    strides, pads, dilations = _window(
        x_shape, w_shape[2:], auto_pad=auto_pad, pads=pads, strides=strides, dilations=dilations
    )
    return ctx.emit(
        graph.ConvOp(x, w, bias, strides=strides, pads=pads, dilations=dilations, group=group)
    )


# Pooling


def _pool(
    ctx: NodeContext,
    op: type[graph.PoolOp],
    X: Value,
    kernel_shape: Sequence[int] | None,
    *,
    auto_pad: str | bytes,
    ceil_mode: int,
    dilations: Sequence[int] | None,
    pads: Sequence[int] | None,
    strides: Sequence[int] | None,
    count_include_pad: int = 0,
) -> Value:
    if kernel_shape is None:
        raise NodeError("attribute kernel_shape is required")
    x = ctx.data(X)
    strides, pads, dilations = _window(
        shape_of(x),
        kernel_shape,
        auto_pad=auto_pad,
        pads=pads,
        strides=strides,
        dilations=dilations,
        ceil_mode=ceil_mode,
    )
    for axis, extent in enumerate(kernel_shape):
        window = (extent - 1) * dilations[axis] + 1
        if max(pads[axis], pads[len(kernel_shape) + axis]) >= window:
            raise NodeError(
                f"attribute pads {pads} must be smaller than the window extent {window} on every axis"
            )
    return ctx.emit(
        op(
            x,
            kernel_shape=kernel_shape,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=bool(ceil_mode) and as_text(auto_pad) == "NOTSET",
            count_include_pad=bool(count_include_pad),
        )
    )


_EXACT_IN_F32 = (i8, i16, graph.UNSIGNED[0], graph.UNSIGNED[1])
"""Integer element types whose every value float32 holds exactly."""


def MaxPool(
    ctx: NodeContext,
    X: Value,
    *,
    auto_pad: str | bytes = "NOTSET",
    ceil_mode: int = 0,
    dilations: Sequence[int] | None = None,
    kernel_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    storage_order: int = 0,
    strides: Sequence[int] | None = None,
) -> Value | tuple[Value, Value]:
    """Max pooling -> graph.max_pool, and for the Indices output graph.max_pool_indices (storage_order 1: the
    spatial axes column-major). 8- and 16-bit integers pool exactly as float32 (a maximum picks one of the values)."""
    if storage_order not in (0, 1):
        raise NodeError(f"attribute storage_order={storage_order} is not supported (expected 0 or 1)")
    element = graph.element_type(ctx.data(X))
    if element in _EXACT_IN_F32:
        wide = ctx.emit(graph.CastOp(ctx.data(X), f32))
        attributes = {"auto_pad": auto_pad, "ceil_mode": ceil_mode, "dilations": dilations, "pads": pads}
        attributes |= {"kernel_shape": kernel_shape, "storage_order": storage_order, "strides": strides}
        result = MaxPool(ctx, wide, **attributes)  # pyright: ignore[reportArgumentType]
        pooled = result[0] if isinstance(result, tuple) else result
        narrowed = ctx.emit(graph.CastOp(ctx.data(pooled), element))
        return (narrowed, result[1]) if isinstance(result, tuple) else narrowed
    if element != f32:
        raise UnsupportedNodeError(f"MaxPool of {element} is not supported (float32, 8- and 16-bit integers are)")
    pooled = _pool(
        ctx,
        graph.MaxPoolOp,
        X,
        kernel_shape,
        auto_pad=auto_pad,
        ceil_mode=ceil_mode,
        dilations=dilations,
        pads=pads,
        strides=strides,
    )
    if len(ctx.node.output) < 2 or not ctx.node.output[1]:
        return pooled
    assert isinstance(pooled, SSAValue)
    indices = graph.MaxPoolIndicesOp(ctx.data(X), pooled, column_major=bool(storage_order))
    return pooled, ctx.emit(indices)


def AveragePool(
    ctx: NodeContext,
    X: Value,
    *,
    auto_pad: str | bytes = "NOTSET",
    ceil_mode: int = 0,
    count_include_pad: int = 0,
    dilations: Sequence[int] | None = None,
    kernel_shape: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Value:
    """Average pooling -> graph.average_pool."""
    return _pool(
        ctx,
        graph.AveragePoolOp,
        X,
        kernel_shape,
        auto_pad=auto_pad,
        ceil_mode=ceil_mode,
        dilations=dilations,
        pads=pads,
        strides=strides,
        count_include_pad=count_include_pad,
    )


def _global_pool(ctx: NodeContext, op: type[graph.PoolOp], X: Value) -> Value:
    x = ctx.data(X)
    shape = shape_of(x)
    if len(shape) < 3:
        raise NodeError(f"input must have rank 3 or more (N, C, spatial...), got shape {shape}")
    spatial = len(shape) - 2
    ones = [1] * spatial
    return ctx.emit(
        op(x, kernel_shape=shape[2:], strides=ones, pads=[0] * (2 * spatial), dilations=ones)
    )


def GlobalAveragePool(ctx: NodeContext, X: Value) -> Value:
    """Mean over all spatial axes -> graph.average_pool with the whole spatial extent as kernel."""
    return _global_pool(ctx, graph.AveragePoolOp, X)


def GlobalMaxPool(ctx: NodeContext, X: Value) -> Value:
    """Max over all spatial axes -> graph.max_pool with the whole spatial extent as kernel."""
    return _global_pool(ctx, graph.MaxPoolOp, X)


# Normalisation


def BatchNormalization(
    ctx: NodeContext,
    X: Value,
    scale: Value,
    B: Value,
    input_mean: Value,
    input_var: Value,
    *,
    epsilon: float = 1e-5,
    momentum: float = 0.9,
    training_mode: int = 0,
    spatial: int = 1,
    is_test: int = 0,
    consumed_inputs: Sequence[int] | None = None,
) -> Value | tuple[Value, Value, Value]:
    """Batch normalisation: inference -> graph.batch_norm; training mode -> Y, running_mean, running_var from the
    batch statistics, as graph ops (spatial=0 is not supported)."""
    if not spatial:
        raise NodeError("attribute spatial=0 (per-activation statistics) is not supported")
    x = ctx.data(X)
    params = [ctx.data(v) for v in (scale, B, input_mean, input_var)]
    shape = shape_of(x)
    if len(shape) < 2:
        raise NodeError(f"X must have rank 2 or more, got shape {shape}")
    for name, value in zip(("scale", "B", "input_mean", "input_var"), params):
        if shape_of(value) != (shape[1],):
            raise NodeError(f"{name} of shape {shape_of(value)} must have shape ({shape[1]},)")
    if training_mode:
        return _batch_norm_training(ctx, x, *params, epsilon=epsilon, momentum=momentum)
    return ctx.emit(graph.BatchNormOp(x, *params, epsilon))


def _batch_norm_training(
    ctx: NodeContext,
    x: SSAValue,
    scale: SSAValue,
    bias: SSAValue,
    mean: SSAValue,
    var: SSAValue,
    *,
    epsilon: float,
    momentum: float,
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Normalise with the batch's per-channel mean and (population) variance over every axis but 1; the running
    statistics are `input * momentum + batch * (1 - momentum)`."""
    shape = shape_of(x)
    channels = shape[1]
    axes = [axis for axis in range(len(shape)) if axis != 1]
    per_channel = (channels, *[1] * (len(shape) - 2))

    def constant(value: float) -> SSAValue:
        return ctx.emit(graph.ConstantOp(value, (1,)))

    batch_mean = ctx.emit(graph.ReduceMeanOp(x, axes, keepdims=True))
    centred = ctx.emit(graph.SubOp(x, batch_mean))
    batch_var = ctx.emit(graph.ReduceMeanOp(ctx.emit(graph.MulOp(centred, centred)), axes, keepdims=True))
    std = ctx.emit(graph.SqrtOp(ctx.emit(graph.AddOp(batch_var, constant(epsilon)))))
    scaled = ctx.emit(graph.MulOp(emit_reshape(ctx, scale, per_channel), centred))
    y = ctx.emit(graph.AddOp(ctx.emit(graph.DivOp(scaled, std)), emit_reshape(ctx, bias, per_channel)))

    def running(statistic: SSAValue, batch: SSAValue) -> SSAValue:
        kept = ctx.emit(graph.MulOp(statistic, constant(momentum)))
        new = ctx.emit(graph.MulOp(emit_reshape(ctx, batch, (channels,)), constant(1.0 - momentum)))
        return ctx.emit(graph.AddOp(kept, new))

    return y, running(mean, batch_mean), running(var, batch_var)


def LRN(
    ctx: NodeContext,
    X: Value,
    *,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
    size: int | None = None,
) -> Value:
    """Local response normalisation across channels -> graph.lrn."""
    if size is None or size < 1:
        raise NodeError(f"attribute size must be given and positive, got {size}")
    x = ctx.data(X)
    if len(shape_of(x)) < 2:
        raise NodeError(f"X must have rank 2 or more, got shape {shape_of(x)}")
    return ctx.emit(graph.LRNOp(x, size=size, alpha=alpha, beta=beta, bias=bias))


def LogSoftmax(ctx: NodeContext, input: Value, *, axis: int | None = None) -> Value:
    """LogSoftmax -> graph.log_softmax; before opset 13, on the input coerced to 2-D at `axis`."""
    return emit_softmax(ctx, graph.LogSoftmaxOp, input, axis)


def Dropout(
    ctx: NodeContext,
    data: Value,
    ratio_input: Value | None = None,
    training_mode: Value | None = None,
    *,
    ratio: float = 0.5,
    seed: int | None = None,
    is_test: int = 0,
    consumed_inputs: Sequence[int] | None = None,
) -> Value | tuple[Value, Value]:
    """Dropout as the identity with a constant all-true mask: in inference, and in training mode with ratio 0.

    Training mode with a ratio above 0 drops elements at random and is not supported. The mask is supported from
    opset 12 on: before, ONNX Runtime's inference mask is all false and onnx's reference evaluator's all true.
    """
    if training_mode is not None and _constant_array(training_mode, "input training_mode").any():
        rate = 0.5 if ratio_input is None else _constant_array(ratio_input, "input ratio")
        if np.size(rate) != 1:
            raise NodeError(f"input ratio must hold one element, got shape {np.shape(rate)}")
        if float(np.reshape(rate, ())) != 0.0:
            raise UnsupportedNodeError(
                f"training mode with ratio {float(np.reshape(rate, ()))} is not supported: it drops elements at "
                "random (only ratio 0, the identity, is)"
            )
    if ctx.opset < 12 or len(ctx.node.output) < 2 or not ctx.node.output[1]:
        return data
    shape = data.array.shape if isinstance(data, ConstantValue) else shape_of(data)
    return data, ConstantValue(ctx.node.output[1], np.ones(shape, np.bool_))


CONVERTERS: dict[str, Converter] = {
    # convolution
    "Conv": Conv,
    # pooling
    "MaxPool": MaxPool,
    "AveragePool": AveragePool,
    "GlobalAveragePool": GlobalAveragePool,
    "GlobalMaxPool": GlobalMaxPool,
    # normalisation
    "BatchNormalization": BatchNormalization,
    "LRN": LRN,
    "LogSoftmax": LogSoftmax,
    "Dropout": Dropout,
}
"""ONNX op type (default domain) -> converter, neural-network family."""
