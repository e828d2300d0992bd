"""ONNX converters for normalisations over statistics the op computes: layer, RMS, group and instance
normalisation (batch normalisation, with given statistics, is in `onnx_nn`).

Each converter is named exactly like its ONNX op and takes the node's inputs positionally and its attributes as
keyword arguments with ONNX's defaults; `CONVERTERS` lists them (merged with the other families in `onnx_operators.py`).
Statistics are computed in float32, the only `stash_type` (1) there is for float32 data. LayerNormalization's
optional Mean and InvStdDev outputs, where a model uses them (training graphs), are computed by graph reductions of
their own beside the normalisation's kernel. MeanVarianceNormalization, over any set of axes, is built of graph
reductions and elementwise ops.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
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
    dtype_of,
    normalise_axis,
)


def _check_stash_type(stash_type: int) -> None:
    if stash_type != 1:
        raise NodeError(f"attribute stash_type={stash_type} is not supported (only 1, float32 statistics)")


def _parameter(ctx: NodeContext, value: Value, name: str, shape: tuple[int, ...]) -> SSAValue:
    """A scale or bias that must broadcast (right-aligned, adding no dimension) to `shape`."""
    data = ctx.data(value)
    given = shape_of(data)
    if len(given) > len(shape) or graph.broadcast_shapes(given, shape) != shape:
        raise NodeError(f"{name} of shape {given} does not broadcast to the normalised shape {shape}")
    return data


def LayerNormalization(
    ctx: NodeContext,
    X: Value,
    Scale: Value,
    B: Value | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
) -> Value | tuple[Value, Value, Value]:
    """Normalise over the axes from `axis` on, then scale and shift -> graph.layer_norm; the Mean and InvStdDev
    outputs, if the node has them, -> graph.reduce_mean and elementwise ops."""
    _check_stash_type(stash_type)
    x = ctx.data(X)
    shape = shape_of(x)
    first = normalise_axis(axis, len(shape))
    scale = _parameter(ctx, Scale, "Scale", shape[first:])
    bias = None if B is None else _parameter(ctx, B, "B", shape[first:])
    y = ctx.emit(graph.LayerNormOp(x, scale, bias, axis=first, epsilon=epsilon))
    if not any(ctx.node.output[1:]):
        return y
    axes = list(range(first, len(shape)))
    mean = ctx.emit(graph.ReduceMeanOp(x, axes, keepdims=True))
    deviation = ctx.emit(graph.SubOp(x, mean))
    variance = ctx.emit(graph.ReduceMeanOp(ctx.emit(graph.MulOp(deviation, deviation)), axes, keepdims=True))
    shifted = ctx.emit(graph.AddOp(variance, ctx.emit(graph.ConstantOp(epsilon, (1,)))))
    return y, mean, ctx.emit(graph.ReciprocalOp(ctx.emit(graph.SqrtOp(shifted))))


def RMSNormalization(
    ctx: NodeContext,
    X: Value,
    scale: Value,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
) -> Value:
    """Divide by the root mean square over the axes from `axis` on, then scale -> graph.rms_norm."""
    _check_stash_type(stash_type)
    x = ctx.data(X)
    shape = shape_of(x)
    first = normalise_axis(axis, len(shape))
    return ctx.emit(graph.RMSNormOp(x, _parameter(ctx, scale, "scale", shape[first:]), axis=first, epsilon=epsilon))


def _channels(ctx: NodeContext, X: Value, what: str) -> tuple[SSAValue, int]:
    x = ctx.data(X)
    shape = shape_of(x)
    if len(shape) < 3:
        raise NodeError(f"{what} must have rank 3 or more (N, C, D1, ...), got shape {shape}")
    return x, shape[1]


def _per_channel(ctx: NodeContext, scale: Value, bias: Value, channels: int) -> tuple[SSAValue, SSAValue]:
    """The scale and the bias, each one value per channel."""
    parameters = ctx.data(scale), ctx.data(bias)
    for name, value in zip(("scale", "bias"), parameters):
        if shape_of(value) != (channels,):
            raise NodeError(f"{name} of shape {shape_of(value)} must have shape ({channels},)")
    return parameters


def GroupNormalization(
    ctx: NodeContext,
    X: Value,
    scale: Value,
    bias: Value,
    *,
    epsilon: float = 1e-5,
    num_groups: int | None = None,
    stash_type: int = 1,
) -> Value:
    """Normalise each group of channels of each sample, then scale and shift each channel -> graph.group_norm.

    The opset-18 version (one scale and bias per group) is deprecated: onnx's checker refuses models that use it
    before they get here."""
    _check_stash_type(stash_type)
    x, channels = _channels(ctx, X, "X")
    if num_groups is None or num_groups < 1 or channels % num_groups:
        raise NodeError(f"attribute num_groups={num_groups} must be positive and divide the {channels} channels")
    scale_value, bias_value = _per_channel(ctx, scale, bias, channels)
    return ctx.emit(graph.GroupNormOp(x, scale_value, bias_value, num_groups=num_groups, epsilon=epsilon))


def InstanceNormalization(
    ctx: NodeContext, input: Value, scale: Value, B: Value, *, epsilon: float = 1e-5
) -> Value:
    """Normalise each channel of each sample over its spatial axes -> graph.group_norm with one group per
    channel."""
    x, channels = _channels(ctx, input, "input")
    return ctx.emit(graph.GroupNormOp(x, *_per_channel(ctx, scale, B, channels), num_groups=channels, epsilon=epsilon))


MVN_EPSILON = 1e-9
"""What ONNX's function body of MeanVarianceNormalization (and ONNX Runtime) adds to the standard deviation."""


def MeanVarianceNormalization(ctx: NodeContext, X: Value, *, axes: Sequence[int] = (0, 2, 3)) -> Value:
    """`(X - mean) / (std + 1e-9)` with the statistics over `axes` -> graph.reduce_mean of X and of its squared
    deviations, graph.sqrt, graph.add, graph.sub and graph.div (the variance from the deviations, not as
    `E[X^2] - E[X]^2`, which cancels catastrophically)."""
    x = ctx.data(X)
    shape = shape_of(x)
    if (element := graph.element_type(x)) not in graph.FLOATS:
        raise UnsupportedNodeError(f"MeanVarianceNormalization of {element} is not supported, only of floats")
    over = sorted({normalise_axis(axis, len(shape)) for axis in axes})
    if len(over) != len(axes):
        raise NodeError(f"axes {list(axes)} name an axis twice")
    if any(shape[axis] == 0 for axis in over):
        raise NodeError(f"axes {list(axes)} include an empty axis of the input shape {shape}")
    mean = ctx.emit(graph.ReduceMeanOp(x, over, keepdims=True))
    deviation = ctx.emit(graph.SubOp(x, mean))
    variance = ctx.emit(graph.ReduceMeanOp(ctx.emit(graph.MulOp(deviation, deviation)), over, keepdims=True))
    epsilon = ctx.data(ConstantValue(f"{ctx.node.output[0]}.epsilon", np.array(MVN_EPSILON, dtype_of(element))))
    denominator = ctx.emit(graph.AddOp(ctx.emit(graph.SqrtOp(variance)), epsilon))
    return ctx.emit(graph.DivOp(deviation, denominator))


CONVERTERS: dict[str, Converter] = {
    "LayerNormalization": LayerNormalization,
    "RMSNormalization": RMSNormalization,
    "GroupNormalization": GroupNormalization,
    "InstanceNormalization": InstanceNormalization,
    "MeanVarianceNormalization": MeanVarianceNormalization,
}
"""ONNX op type (default domain) -> converter, normalisation family."""
