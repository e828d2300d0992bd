"""Activations: unary elementwise functions of one tensor, some with float parameters (`alpha`, `beta`), PReLU with a
slope tensor, and Clip with bounds that may be runtime scalars.

The parameterless ones share `ElementwiseUnaryOp` (from `core`) with the math ops in `elementwise`; those with
parameters keep them as typed properties.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
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

from minimlc.dialects.graph.common import NUMBERS, F32Attr, F32Tensor, broadcast_shapes, f32_attr, is_scalar
from minimlc.dialects.graph.core import BinaryShapeRuleOp, ElementwiseUnaryOp, GraphOp

__all__ = [
    "CeluOp",
    "ClipOp",
    "EluOp",
    "GeluOp",
    "HardSigmoidOp",
    "HardSwishOp",
    "LeakyReluOp",
    "MishOp",
    "PReluOp",
    "ReluOp",
    "SeluOp",
    "ShrinkOp",
    "SigmoidOp",
    "SoftplusOp",
    "SoftsignOp",
    "SwishOp",
    "ThresholdedReluOp",
]


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`: `graph.relu %x : tensor<1x128xf32>`."""

    name = "graph.relu"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + exp(-x))`: `graph.sigmoid %x : tensor<8xf32>`."""

    name = "graph.sigmoid"


@irdl_op_definition
class ClipOp(GraphOp):
    """`min(max(x, min), max)` with optional bounds, each a property or a runtime scalar operand:
    `graph.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<8xf32>`, `graph.clip %x low %lo : tensor<f32> : tensor<8xf32>`."""

    name = "graph.clip"
    T: ClassVar = VarConstraint("T", F32Tensor)
    input = operand_def(T)
    low = opt_operand_def(F32Tensor)
    high = opt_operand_def(F32Tensor)
    result = result_def(T)
    min = opt_prop_def(F32Attr)
    max = opt_prop_def(F32Attr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = "$input (`low` $low^ `:` type($low))? (`high` $high^ `:` type($high))? attr-dict `:` type($result)"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(
        self, input: SSAValue, low: float | SSAValue | None, high: float | SSAValue | None
    ):
        properties: dict[str, Attribute] = {}
        if low is not None and not isinstance(low, SSAValue):
            properties["min"] = f32_attr(low)
        if high is not None and not isinstance(high, SSAValue):
            properties["max"] = f32_attr(high)
        operands = [[bound] if isinstance(bound, SSAValue) else [] for bound in (low, high)]
        super().__init__(
            operands=[input, *operands], result_types=[input.type], properties=properties
        )

    def verify_(self) -> None:
        for operand, prop, name in ((self.low, self.min, "min"), (self.high, self.max, "max")):
            if operand is not None and (prop is not None or not is_scalar(operand)):
                raise VerifyException(
                    f"{self.name}: the {name} bound operand must be a one-element tensor, given without `{name}`"
                )


@irdl_op_definition
class PReluOp(BinaryShapeRuleOp):
    """`x < 0 ? slope * x : x`, slope broadcast to x: `graph.prelu %x, %slope
    : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>`."""

    name = "graph.prelu"
    SHAPE_RULE = staticmethod(lambda x, slope: x if broadcast_shapes(x, slope) == x else None)
    RELATION: ClassVar[str] = "unidirectionally broadcastable (slope to input)"


class _AlphaActivationOp(ElementwiseUnaryOp):
    """Base of unary activations with one parameter `alpha`."""

    alpha = prop_def(F32Attr)

    def __init__(self, input: SSAValue, alpha: float):
        super().__init__(input, {"alpha": f32_attr(alpha)})


@irdl_op_definition
class LeakyReluOp(_AlphaActivationOp):
    """`x < 0 ? alpha * x : x`: `graph.leaky_relu %x {alpha = 0.01 : f32} : tensor<8xf32>`."""

    name = "graph.leaky_relu"


@irdl_op_definition
class EluOp(_AlphaActivationOp):
    """`x < 0 ? alpha * (exp(x) - 1) : x`: `graph.elu %x {alpha = 1.0 : f32} : tensor<8xf32>`."""

    name = "graph.elu"


@irdl_op_definition
class CeluOp(_AlphaActivationOp):
    """`max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`: `graph.celu %x {alpha = 1.0 : f32} : tensor<8xf32>`."""

    name = "graph.celu"


@irdl_op_definition
class ThresholdedReluOp(_AlphaActivationOp):
    """`x > alpha ? x : 0`: `graph.thresholded_relu %x {alpha = 1.0 : f32} : tensor<8xf32>`."""

    name = "graph.thresholded_relu"


@irdl_op_definition
class SwishOp(_AlphaActivationOp):
    """`x * sigmoid(alpha * x)`: `graph.swish %x {alpha = 1.0 : f32} : tensor<8xf32>`."""

    name = "graph.swish"


class _AlphaBetaActivationOp(ElementwiseUnaryOp):
    """Base of unary activations with parameters `alpha` and `beta`."""

    alpha = prop_def(F32Attr)
    beta = prop_def(F32Attr)

    def __init__(self, input: SSAValue, alpha: float, beta: float):
        super().__init__(input, {"alpha": f32_attr(alpha), "beta": f32_attr(beta)})


@irdl_op_definition
class HardSigmoidOp(_AlphaBetaActivationOp):
    """`max(0, min(1, alpha * x + beta))`: `graph.hard_sigmoid %x {alpha = 0.2 : f32, beta = 0.5 : f32}
    : tensor<8xf32>`."""

    name = "graph.hard_sigmoid"


@irdl_op_definition
class SeluOp(_AlphaBetaActivationOp):
    """`beta * (x <= 0 ? alpha * (exp(x) - 1) : x)` (ONNX calls beta gamma):
    `graph.selu %x {alpha = 1.67 : f32, beta = 1.05 : f32} : tensor<8xf32>`."""

    name = "graph.selu"


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """`x * Phi(x)`, exact (erf) or with the tanh approximation:
    `graph.gelu %x {approximate = "tanh"} : tensor<8xf32>`."""

    name = "graph.gelu"
    approximate = prop_def(StringAttr)

    def __init__(self, input: SSAValue, approximate: str = "none"):
        super().__init__(input, {"approximate": StringAttr(approximate)})

    def verify_(self) -> None:
        if self.approximate.data not in ("none", "tanh"):
            raise VerifyException(
                f'{self.name}: approximate must be "none" or "tanh", got "{self.approximate.data}"'
            )


@irdl_op_definition
class HardSwishOp(ElementwiseUnaryOp):
    """`x * max(0, min(1, x / 6 + 1 / 2))`: `graph.hard_swish %x : tensor<8xf32>`."""

    name = "graph.hard_swish"


@irdl_op_definition
class SoftplusOp(ElementwiseUnaryOp):
    """`log(1 + exp(x))`: `graph.softplus %x : tensor<8xf32>`."""

    name = "graph.softplus"


@irdl_op_definition
class SoftsignOp(ElementwiseUnaryOp):
    """`x / (1 + |x|)`: `graph.softsign %x : tensor<8xf32>`."""

    name = "graph.softsign"


@irdl_op_definition
class MishOp(ElementwiseUnaryOp):
    """`x * tanh(softplus(x))`: `graph.mish %x : tensor<8xf32>`."""

    name = "graph.mish"


@irdl_op_definition
class ShrinkOp(ElementwiseUnaryOp):
    """`x < -lambd ? x + bias : x > lambd ? x - bias : 0` (ONNX Shrink; integers computed in f32 and truncated, as
    ONNX Runtime does): `graph.shrink %x {lambd = 0.5 : f32, bias = 0.0 : f32} : tensor<8xf32>`."""

    name = "graph.shrink"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    lambd = prop_def(F32Attr)
    bias = prop_def(F32Attr)

    def __init__(self, input: SSAValue, lambd: float, bias: float):
        super().__init__(input, {"lambd": f32_attr(lambd), "bias": f32_attr(bias)})


OPS: list[type[IRDLOperation]] = [
    ReluOp,
    SigmoidOp,
    PReluOp,
    LeakyReluOp,
    EluOp,
    CeluOp,
    ThresholdedReluOp,
    SwishOp,
    HardSigmoidOp,
    SeluOp,
    GeluOp,
    HardSwishOp,
    SoftplusOp,
    SoftsignOp,
    MishOp,
    ClipOp,
    ShrinkOp,
]
