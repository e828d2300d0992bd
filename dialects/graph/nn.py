"""Neural-network ops: convolution, pooling, normalisation and padding (activations live in `activation`).

Windowed ops (conv, pooling) carry explicit `pads` (begin values of every spatial axis, then end values, as in
ONNX); the frontend resolves `auto_pad`. Scalar parameters are typed properties; Pad's value, which ONNX allows
to be a runtime tensor, may instead be a scalar operand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, UnitAttr, f32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    BOOL,
    DYNAMIC,
    NUMBERS,
    AnyTensor,
    F32Attr,
    F32Tensor,
    I64Array,
    Shape,
    check_elements,
    check_result_element,
    check_result_shape,
    check_static_axes,
    element_type,
    f32_attr,
    i64_array,
    is_scalar,
    shape_of,
    tensor_type,
    unit_flags,
)
from minimlc.dialects.graph.core import AxisOp, GraphOp, SameTypeUnaryOp, UnaryOp

__all__ = [
    "PAD_MODES",
    "AveragePoolOp",
    "BatchNormOp",
    "ConvOp",
    "LRNOp",
    "LogSoftmaxOp",
    "MaxPoolIndicesOp",
    "MaxPoolOp",
    "PadOp",
    "PoolOp",
    "pooled_size",
]

def pooled_size(
    size: int,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    ceil_mode: bool = False,
) -> int | None:
    """Output extent of a sliding window along one axis (ONNX rule); None when no window fits."""
    span = size + pad_begin + pad_end - ((kernel - 1) * dilation + 1)
    if span < 0 or stride < 1:
        return None
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        out -= 1  # the last window would start in the end padding
    return out


class _WindowOp(GraphOp):
    """Shared checks of ops sliding a window over the spatial axes (all but the first two) of NC... tensors."""

    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)

    @staticmethod
    def window_properties(
        strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
    ) -> dict[str, Attribute]:
        """The window properties of a builder's arguments."""
        return {"strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)}

    @staticmethod
    def pooled_sizes(
        x: Shape,
        kernel: Sequence[int],
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
        ceil_mode: bool = False,
    ) -> list[int]:
        """The spatial output extents of a window of `kernel` over `x` (its spatial axes: 2 on), for the builders."""
        rank = len(kernel)
        spatial = [
            pooled_size(x[2 + a], kernel[a], strides[a], pads[a], pads[rank + a], dilations[a], ceil_mode)
            for a in range(rank)
        ]
        assert None not in spatial, "the kernel does not fit the input"
        return spatial  # pyright: ignore[reportReturnType]

    def window_shape(self, input: Shape, kernel: Sequence[int], ceil_mode: bool = False) -> Shape:
        """The spatial output extents, after checking the window attributes against `input`."""
        if len(input) < 3:
            raise VerifyException(
                f"{self.name}: input must have rank 3 or more (N, C, spatial...), got {input}"
            )
        spatial = len(input) - 2
        if DYNAMIC in input[1:]:
            check_static_axes(self, self.operands[0], range(1, len(input)), "channels and spatial axes")
        strides, pads, dilations = (
            self.strides.get_values(),
            self.pads.get_values(),
            self.dilations.get_values(),
        )
        for name, values, count in (
            ("kernel", kernel, spatial),
            ("strides", strides, spatial),
            ("dilations", dilations, spatial),
            ("pads", pads, 2 * spatial),
        ):
            if len(values) != count:
                raise VerifyException(
                    f"{self.name}: {name} has {len(values)} values, expected {count} for {spatial} spatial axes"
                )
        if any(v < 1 for v in (*kernel, *strides, *dilations)) or any(p < 0 for p in pads):
            raise VerifyException(
                f"{self.name}: kernel, strides and dilations must be positive and pads non-negative"
            )
        out: list[int] = []
        for axis in range(spatial):
            size = pooled_size(
                input[2 + axis],
                kernel[axis],
                strides[axis],
                pads[axis],
                pads[spatial + axis],
                dilations[axis],
                ceil_mode,
            )
            if size is None:
                raise VerifyException(
                    f"{self.name}: window of extent {(kernel[axis] - 1) * dilations[axis] + 1} does not fit "
                    f"spatial axis {axis} of size {input[2 + axis]} with pads "
                    f"({pads[axis]}, {pads[spatial + axis]})"
                )
            out.append(size)
        return tuple(out)


class _ConvOp(_WindowOp):
    """Base of the grouped convolutions: `group` groups of input channels, each giving its share of the weight's
    output channels."""

    group = prop_def(IntegerAttr[I64])

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        others: Sequence[SSAValue | Sequence[SSAValue]],
        element: Attribute,
        *,
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
        group: int,
    ):
        """The convolution of `input` by `weight` (then the `others` operands), its result of `element`s."""
        x, w = shape_of(input), shape_of(weight)
        spatial = self.pooled_sizes(x, w[2:], strides, pads, dilations)
        super().__init__(
            operands=[input, weight, *others],
            result_types=[tensor_type((x[0], w[0], *spatial), element)],
            properties={**self.window_properties(strides, pads, dilations), "group": IntegerAttr(group, i64)},
        )

    def check_group(self, x: Shape, w: Shape) -> None:
        """The input `x` and weight `w` shapes agree with `group`."""
        group = self.group.value.data
        if len(w) != len(x):
            raise VerifyException(f"{self.name}: weight rank {len(w)} differs from input rank {len(x)}")
        if group < 1 or len(x) < 3 or x[1] != w[1] * group or w[0] % group:
            raise VerifyException(
                f"{self.name}: input channels {x[1] if len(x) > 1 else '?'} and weight shape {w} do not match "
                f"group {group} (need C_in == weight[1] * group and weight[0] divisible by group)"
            )


@irdl_op_definition
class ConvOp(_ConvOp):
    """N-d grouped convolution (ONNX Conv with explicit pads): `graph.conv %x, %w, %b {strides = array<i64: 1, 1>,
    pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64}
    : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>`."""

    name = "graph.conv"
    input = operand_def(F32Tensor)
    weight = operand_def(F32Tensor)
    bias = opt_operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None,
        *,
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
        group: int = 1,
    ):
        others = [[] if bias is None else [bias]]
        super().__init__(input, weight, others, f32, strides=strides, pads=pads, dilations=dilations, group=group)

    RUN_TIME_DIMS: ClassVar[bool] = True
    """A run-time batch (axis 0) only: channels and spatial axes are static (`window_shape`)."""

    def verify_(self) -> None:
        x, w = shape_of(self.input), shape_of(self.weight)
        check_static_axes(self, self.weight, range(len(w)), "weight dimensions")
        check_static_axes(self, self.input, range(1, len(x)), "channels and spatial axes")
        self.check_group(x, w)
        if self.bias is not None and shape_of(self.bias) != (w[0],):
            raise VerifyException(f"{self.name}: bias shape {shape_of(self.bias)} is not ({w[0]},)")
        check_result_shape(self, (x[0], w[0], *self.window_shape(x, w[2:])))


class PoolOp(UnaryOp, _WindowOp):
    """Base of max and average pooling: a window of `kernel_shape` over each channel."""

    input = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    kernel_shape = prop_def(I64Array)
    ceil_mode = opt_prop_def(UnitAttr)

    def __init__(
        self,
        input: SSAValue,
        *,
        kernel_shape: Sequence[int],
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
        ceil_mode: bool = False,
        count_include_pad: bool = False,
    ):
        x = shape_of(input)
        spatial = self.pooled_sizes(x, kernel_shape, strides, pads, dilations, ceil_mode)
        properties = {
            "kernel_shape": i64_array(kernel_shape),
            **self.window_properties(strides, pads, dilations),
            **unit_flags(ceil_mode=ceil_mode, count_include_pad=count_include_pad),
        }
        super().__init__(input, (*x[:2], *spatial), f32, properties)

    RUN_TIME_DIMS: ClassVar[bool] = True
    """A run-time batch (axis 0) only: channels and spatial axes are static (`window_shape`)."""

    def verify_(self) -> None:
        x = shape_of(self.input)
        kernel = self.kernel_shape.get_values()
        spatial = self.window_shape(x, kernel, self.ceil_mode is not None)
        pads, dilations = self.pads.get_values(), self.dilations.get_values()
        for axis, extent in enumerate(kernel):
            if max(pads[axis], pads[len(kernel) + axis]) >= (extent - 1) * dilations[axis] + 1:
                raise VerifyException(
                    f"{self.name}: pads of spatial axis {axis} must be smaller than the window extent "
                    f"{(extent - 1) * dilations[axis] + 1}"
                )
        check_result_shape(self, (*x[:2], *spatial))


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max over each window, padding never wins: `graph.max_pool %x {kernel_shape = array<i64: 2, 2>,
    strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>`."""

    name = "graph.max_pool"


@irdl_op_definition
class MaxPoolIndicesOp(_WindowOp):
    """Where each window's maximum is (ONNX MaxPool's `Indices`): the int64 flat index into the input of the first
    window element equal to `pooled` (the `graph.max_pool` of the input with the same window), the spatial axes
    row-major or, with `column_major` (ONNX storage_order=1), column-major within each (N, C) plane:
    `graph.max_pool_indices %x, %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
    pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
    : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xi64>`."""

    name = "graph.max_pool_indices"
    input = operand_def(F32Tensor)
    pooled = operand_def(F32Tensor)
    result = result_def(AnyTensor)
    kernel_shape = prop_def(I64Array)
    ceil_mode = opt_prop_def(UnitAttr)
    column_major = opt_prop_def(UnitAttr)
    assembly_format = "$input `,` $pooled attr-dict `:` `(` type($input) `,` type($pooled) `)` `->` type($result)"

    def __init__(self, input: SSAValue, pooled: SSAValue, *, column_major: bool = False):
        """The indices of `pooled`, the result of a `graph.max_pool` of `input` (its window attributes are copied)."""
        pool = pooled.owner
        assert isinstance(pool, MaxPoolOp), "pooled must be the result of a graph.max_pool"
        assert pool.input == input, "pooled must be the graph.max_pool of input"
        properties: dict[str, Attribute] = {
            name: pool.properties[name] for name in ("kernel_shape", "strides", "pads", "dilations", "ceil_mode")
            if name in pool.properties
        }
        properties |= unit_flags(column_major=column_major)
        super().__init__(
            operands=[input, pooled],
            result_types=[TensorType(i64, shape_of(pooled))],
            properties=properties,
        )

    def verify_(self) -> None:
        x = shape_of(self.input)
        spatial = self.window_shape(x, self.kernel_shape.get_values(), self.ceil_mode is not None)
        expected = (*x[:2], *spatial)
        if shape_of(self.pooled) != expected:
            raise VerifyException(f"{self.name}: pooled shape {shape_of(self.pooled)} does not match {expected}")
        element = self.result.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
        if element != i64:
            raise VerifyException(f"{self.name}: result element type must be i64, got {element}")
        check_result_shape(self, expected)


@irdl_op_definition
class AveragePoolOp(PoolOp):
    """Mean over each window, counting padded positions only with `count_include_pad`: `graph.average_pool %x
    {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
    dilations = array<i64: 1, 1>, count_include_pad} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>`."""

    name = "graph.average_pool"
    count_include_pad = opt_prop_def(UnitAttr)


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalisation over axis 1, `(x - mean) * scale / sqrt(var + epsilon) + bias`:
    `graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32}
    : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>`."""

    name = "graph.batch_norm"
    input = operand_def(F32Tensor)
    scale = operand_def(F32Tensor)
    bias = operand_def(F32Tensor)
    mean = operand_def(F32Tensor)
    var = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    epsilon = prop_def(F32Attr)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        mean: SSAValue,
        var: SSAValue,
        epsilon: float,
    ):
        super().__init__(
            operands=[input, scale, bias, mean, var],
            result_types=[input.type],
            properties={"epsilon": f32_attr(epsilon)},
        )

    def verify_(self) -> None:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException(f"{self.name}: input must have rank 2 or more, got {x}")
        check_static_axes(self, self.input, [1], "channels")
        for name in ("scale", "bias", "mean", "var"):
            if shape_of(getattr(self, name)) != (x[1],):
                raise VerifyException(
                    f"{self.name}: {name} shape {shape_of(getattr(self, name))} is not ({x[1]},) "
                    "(one value per channel)"
                )
        check_result_shape(self, x)


@irdl_op_definition
class LRNOp(SameTypeUnaryOp):
    """Local response normalisation across channels, `x / (bias + alpha / size * sum(x^2 over window))^beta`:
    `graph.lrn %x {size = 5 : i64, alpha = 1.0e-04 : f32, beta = 7.5e-01 : f32, bias = 1.0 : f32}
    : tensor<1x8x4x4xf32>`."""

    name = "graph.lrn"
    T: ClassVar = VarConstraint("T", F32Tensor)
    input = operand_def(T)
    result = result_def(T)
    size = prop_def(IntegerAttr[I64])
    alpha = prop_def(F32Attr)
    beta = prop_def(F32Attr)
    bias = prop_def(F32Attr)

    def __init__(self, input: SSAValue, *, size: int, alpha: float, beta: float, bias: float):
        properties = {
            "size": IntegerAttr(size, i64),
            "alpha": f32_attr(alpha),
            "beta": f32_attr(beta),
            "bias": f32_attr(bias),
        }
        super().__init__(input, properties)

    def verify_(self) -> None:
        if len(shape_of(self.input)) < 2:
            raise VerifyException(
                f"{self.name}: input must have rank 2 or more, got {shape_of(self.input)}"
            )
        if self.size.value.data < 1:
            raise VerifyException(f"{self.name}: size must be positive, got {self.size.value.data}")


@irdl_op_definition
class LogSoftmaxOp(AxisOp):
    """`log(softmax(x))` along one axis (ONNX opset-13 semantics):
    `graph.log_softmax %x {axis = 1 : i64} : tensor<1x10xf32>`."""

    name = "graph.log_softmax"
    T: ClassVar = VarConstraint("T", F32Tensor)
    input = operand_def(T)
    result = result_def(T)


PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(GraphOp):
    """Pad (or, with negative pads, crop) every axis; `pads` holds all begin values, then all end values:
    `graph.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "constant", value = 0.0 : f32}
    : (tensor<2x3xf32>) -> tensor<2x5xf32>`. A runtime constant value is a scalar operand instead of `value`. Numbers
    and bools of every width pad too: a constant fill other than f32's is always the operand."""

    name = "graph.pad"
    input = operand_def(AnyTensor)
    fill = opt_operand_def(AnyTensor)
    result = result_def(AnyTensor)
    pads = prop_def(I64Array)
    mode = prop_def(StringAttr)
    value = opt_prop_def(F32Attr)
    assembly_format = "$input (`,` $fill^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        pads: Sequence[int],
        mode: str = "constant",
        value: float | SSAValue = 0.0,
    ):
        x = shape_of(input)
        properties: dict[str, Attribute] = {"pads": i64_array(pads), "mode": StringAttr(mode)}
        if not isinstance(value, SSAValue) and mode == "constant":
            properties["value"] = f32_attr(value)
        shape = [size + pads[axis] + pads[len(x) + axis] for axis, size in enumerate(x)]
        fill = [value] if isinstance(value, SSAValue) else []
        super().__init__(
            operands=[input, fill],
            result_types=[tensor_type(shape, element_type(input))],
            properties=properties,
        )

    RUN_TIME_DIMS: ClassVar[bool] = True
    """A `?` axis only where it is neither padded nor cropped (the run-time batch of a convolution's padded input,
    `graph-pad-conv`)."""

    def verify_(self) -> None:
        element = check_elements(self, (*NUMBERS, BOOL), self.input, *([self.fill] if self.fill else []))
        check_result_element(self, element)
        if element != f32 and self.value is not None:
            raise VerifyException(f"{self.name}: a fill of {element} must be an operand, not `value`")
        x, pads, mode = shape_of(self.input), self.pads.get_values(), self.mode.data
        if len(pads) != 2 * len(x):
            raise VerifyException(
                f"{self.name}: pads has {len(pads)} values, expected {2 * len(x)}"
            )
        if mode not in PAD_MODES:
            raise VerifyException(
                f"{self.name}: unknown mode '{mode}' (expected one of {', '.join(PAD_MODES)})"
            )
        if self.fill is not None and (
            mode != "constant" or self.value is not None or not is_scalar(self.fill)
        ):
            raise VerifyException(
                f"{self.name}: a fill operand must be a one-element tensor, in constant mode, without `value`"
            )
        padded = [axis for axis, size in enumerate(x) if size == DYNAMIC and (pads[axis] or pads[len(x) + axis])]
        if padded:
            raise VerifyException(f"{self.name}: pads a run-time dimension (axis {padded[0]})")
        shape = tuple(
            size if size == DYNAMIC else size + pads[axis] + pads[len(x) + axis] for axis, size in enumerate(x)
        )
        if any(size < 0 and size != DYNAMIC for size in shape):
            raise VerifyException(
                f"{self.name}: pads {list(pads)} crop more than the input shape {x}"
            )
        for axis, size in enumerate(x):
            padding = max(pads[axis], pads[len(x) + axis])
            if (
                mode != "constant"
                and padding > 0
                and (size == 0 or (mode == "reflect" and padding >= size))
            ):
                raise VerifyException(
                    f"{self.name}: {mode} padding of axis {axis} by {padding} needs a larger input dimension "
                    f"than {size}"
                )
        check_result_shape(self, shape)


OPS: list[type[IRDLOperation]] = [
    ConvOp,
    MaxPoolOp,
    MaxPoolIndicesOp,
    AveragePoolOp,
    BatchNormOp,
    LRNOp,
    LogSoftmaxOp,
    PadOp,
]
