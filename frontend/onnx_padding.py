"""The ONNX Pad converter: a constant fill, or reflecting, repeating the edge or wrapping around, on data of every
element type (float16 and bfloat16 widened to float32 by the importer) -> graph.pad. The pads (and axes) set the
output's shape: they must be compile-time constants (`onnx_operators.CONSTANT_OPERANDS`); a fill other than float32's
is passed to graph.pad as an operand of the data's type.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    normalise_axis,
    scalar_parameter,
)


def _constant(value: Value, what: str) -> np.ndarray:
    if not isinstance(value, ConstantValue):
        raise UnsupportedNodeError(f"{what} must be a compile-time constant: it sets the output's shape")
    return value.array


def Pad(
    ctx: NodeContext,
    data: Value,
    pads_input: Value | None = None,
    constant_value: Value | None = None,
    axes: Value | None = None,
    *,
    mode: str | bytes = "constant",
    pads: Sequence[int] | None = None,
    value: float = 0.0,
) -> Value:
    """Pad with a constant, or by reflecting, repeating the edge or wrapping around -> graph.pad."""
    x = ctx.data(data)
    shape = shape_of(x)
    rank = len(shape)
    if ctx.opset >= 11:
        if pads_input is None:
            raise NodeError("input pads is required")
        if not isinstance(pads_input, ConstantValue):
            raise UnsupportedNodeError("input pads must be a compile-time constant: it sets the output's shape")
        pads = [int(p) for p in pads_input.array.reshape(-1)]
        fill = scalar_parameter(constant_value, "input constant_value")
        value_or_operand = 0.0 if fill is None else fill
    elif pads is None:
        raise NodeError("attribute pads is required")
    else:
        value_or_operand = value
    pads = list(pads)
    chosen = list(range(rank))
    if axes is not None:
        chosen = [normalise_axis(int(a), rank) for a in _constant(axes, "input axes").reshape(-1)]
    if len(pads) != 2 * len(chosen):
        raise NodeError(f"pads has {len(pads)} values, expected {2 * len(chosen)} for {len(chosen)} axes")
    full = [0] * (2 * rank)
    for position, axis in enumerate(chosen):
        full[axis], full[rank + axis] = pads[position], pads[len(chosen) + position]
    mode = as_text(mode)
    if mode not in graph.PAD_MODES:
        raise NodeError(f"attribute mode='{mode}' is not supported (expected one of {', '.join(graph.PAD_MODES)})")
    for axis, size in enumerate(shape):
        begin, end = full[axis], full[rank + axis]
        if size == graph.DYNAMIC:
            if begin or end:
                raise NodeError(f"pads {full} pad axis {axis}, whose size is known only at run time")
            continue
        if size + begin + end < 0:
            raise NodeError(f"pads {full} crop more than axis {axis} of size {size}")
        padding = max(begin, end)
        if mode != "constant" and padding > 0 and (size == 0 or (mode == "reflect" and padding >= size)):
            raise NodeError(f"mode '{mode}' cannot pad axis {axis} of size {size} by {padding}")
    element = graph.element_type(x)
    if mode == "constant" and element != f32:  # the fill as an operand of the data's type
        if isinstance(value_or_operand, SSAValue) and graph.element_type(value_or_operand) != element:
            raise NodeError(f"input constant_value must be {element}, like the data")
        if not isinstance(value_or_operand, SSAValue):
            array = np.array([value_or_operand]).astype(dtype_of(element))
            value_or_operand = ctx.data(ConstantValue(f"{ctx.node.output[0]}.fill", array))
    return ctx.emit(graph.PadOp(x, full, mode, value_or_operand if mode == "constant" else 0.0))


CONVERTERS: dict[str, Converter] = {"Pad": Pad}
"""ONNX op type (default domain) -> converter, Pad."""
