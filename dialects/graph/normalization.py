"""Normalisation ops over the statistics of a group of elements: layer, RMS and group normalisation (instance
normalisation is group normalisation with one group per channel). Batch normalisation, whose statistics are
operands, lives in `nn`.

Each op keeps its input's type; `epsilon` is added to the variance (or the mean square) before the square root.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    F32Attr,
    F32Tensor,
    broadcast_shapes,
    check_axis,
    check_result_shape,
    check_static_axes,
    f32_attr,
    shape_of,
)
from minimlc.dialects.graph.core import GraphOp

__all__ = ["GroupNormOp", "LayerNormOp", "RMSNormOp"]


class _NormOp(GraphOp):
    """Base of the normalisations: an input, a scale, maybe a bias (operands each op declares, in that order),
    `epsilon`; the result has the input's type."""

    epsilon = prop_def(F32Attr)
    RUN_TIME_DIMS: ClassVar[bool] = True
    GROUPING: ClassVar[str]
    """The integer property that says which elements share statistics."""

    def __init__(self, input: SSAValue, operands: list[SSAValue | list[SSAValue]], grouping: int, epsilon: float):
        properties: dict[str, Attribute] = {
            self.GROUPING: IntegerAttr(grouping, i64),
            "epsilon": f32_attr(epsilon),
        }
        operand_list: list[SSAValue | list[SSAValue]] = [input, *operands]
        super().__init__(operands=operand_list, result_types=[input.type], properties=properties)

    def check_parameter(self, name: str, value: SSAValue | None, shape: tuple[int, ...]) -> None:
        """`value` (if given) must broadcast to `shape` without adding dimensions."""
        if value is None:
            return
        given = shape_of(value)
        if len(given) > len(shape) or broadcast_shapes(given, shape) != shape:
            raise VerifyException(f"{self.name}: {name} shape {given} does not broadcast to {shape}")


class _AxisNormOp(_NormOp):
    """Base of the normalisations over every axis from `axis` on, with parameters broadcast to those axes."""

    GROUPING: ClassVar[str] = "axis"
    axis = prop_def(IntegerAttr[I64])

    def normalised_shape(self) -> tuple[int, ...]:
        x = shape_of(self.input)
        axis = self.axis.value.data
        check_axis(self, axis, len(x))
        return x[axis:]


@irdl_op_definition
class LayerNormOp(_AxisNormOp):
    """`(x - mean) / sqrt(var + epsilon) * scale + bias`, statistics over the axes from `axis` on (ONNX
    LayerNormalization): `graph.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
    : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x8x16xf32>`."""

    name = "graph.layer_norm"
    input = operand_def(F32Tensor)
    scale = operand_def(F32Tensor)
    bias = opt_operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, scale: SSAValue, bias: SSAValue | None, *, axis: int, epsilon: float):
        super().__init__(input, [scale, [] if bias is None else [bias]], axis, epsilon)

    def verify_(self) -> None:
        shape = self.normalised_shape()
        self.check_parameter("scale", self.scale, shape)
        self.check_parameter("bias", self.bias, shape)
        check_result_shape(self, shape_of(self.input))


@irdl_op_definition
class RMSNormOp(_AxisNormOp):
    """`x / sqrt(mean(x^2) + epsilon) * scale`, the mean over the axes from `axis` on (ONNX RMSNormalization):
    `graph.rms_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32}
    : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>`."""

    name = "graph.rms_norm"
    input = operand_def(F32Tensor)
    scale = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = "$input `,` $scale attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, scale: SSAValue, *, axis: int, epsilon: float):
        super().__init__(input, [scale], axis, epsilon)

    def verify_(self) -> None:
        self.check_parameter("scale", self.scale, self.normalised_shape())
        check_result_shape(self, shape_of(self.input))


@irdl_op_definition
class GroupNormOp(_NormOp):
    """Normalise each of `num_groups` groups of consecutive channels (axis 1) of each sample over its channels and
    spatial axes, then scale and shift each channel: `graph.group_norm %x, %s, %b {num_groups = 2 : i64,
    epsilon = 1.0e-05 : f32} : (tensor<1x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>`."""

    name = "graph.group_norm"
    GROUPING: ClassVar[str] = "num_groups"
    input = operand_def(F32Tensor)
    scale = operand_def(F32Tensor)
    bias = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    num_groups = prop_def(IntegerAttr[I64])
    assembly_format = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, scale: SSAValue, bias: SSAValue, *, num_groups: int, epsilon: float):
        super().__init__(input, [scale, bias], num_groups, epsilon)

    def verify_(self) -> None:
        x = shape_of(self.input)
        groups = self.num_groups.value.data
        if len(x) < 2:
            raise VerifyException(f"{self.name}: input must have rank 2 or more (N, C, ...), got {x}")
        check_static_axes(self, self.input, [1], "channels")
        if groups < 1 or x[1] % groups:
            raise VerifyException(f"{self.name}: {x[1]} channels do not split into {groups} groups")
        for name, value in (("scale", self.scale), ("bias", self.bias)):
            if shape_of(value) != (x[1],):
                raise VerifyException(f"{self.name}: {name} shape {shape_of(value)} is not ({x[1]},)")
        check_result_shape(self, x)


OPS: list[type[IRDLOperation]] = [LayerNormOp, RMSNormOp, GroupNormOp]
