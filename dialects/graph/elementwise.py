"""Elementwise arithmetic, comparison, logic and math ops: binary ones broadcast as numpy, unary ones keep the type.

Comparisons and logic compute 0/1 float32 masks (runtime tensors are float32). Activations live in `activation`.
"""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition

from minimlc.dialects.graph.core import ElementwiseBinaryOp, ElementwiseUnaryOp

__all__ = [
    "AbsOp",
    "AcosOp",
    "AcoshOp",
    "AddOp",
    "AndOp",
    "AsinOp",
    "AsinhOp",
    "AtanOp",
    "AtanhOp",
    "CeilOp",
    "CosOp",
    "CoshOp",
    "DivOp",
    "EqualOp",
    "ErfOp",
    "ExpOp",
    "FloorOp",
    "GreaterOp",
    "GreaterOrEqualOp",
    "LessOp",
    "LessOrEqualOp",
    "LogOp",
    "MaxOp",
    "MinOp",
    "MulOp",
    "NegOp",
    "NotOp",
    "OrOp",
    "PowOp",
    "ReciprocalOp",
    "RoundOp",
    "SignOp",
    "SinOp",
    "SinhOp",
    "SqrtOp",
    "SubOp",
    "TanOp",
    "TanhOp",
]


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Elementwise `lhs + rhs`: `graph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.add"


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Elementwise `lhs - rhs`: `graph.sub %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.sub"


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Elementwise `lhs * rhs`: `graph.mul %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>`."""

    name = "graph.mul"


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Elementwise `lhs / rhs`: `graph.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.div"


@irdl_op_definition
class MaxOp(ElementwiseBinaryOp):
    """Elementwise maximum (NaN-propagating): `graph.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.max"


@irdl_op_definition
class MinOp(ElementwiseBinaryOp):
    """Elementwise minimum (NaN-propagating): `graph.min %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.min"


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """Elementwise `lhs ** rhs`: `graph.pow %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.pow"


@irdl_op_definition
class EqualOp(ElementwiseBinaryOp):
    """`lhs == rhs` as a 0/1 mask: `graph.equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.equal"


@irdl_op_definition
class LessOp(ElementwiseBinaryOp):
    """`lhs < rhs` as a 0/1 mask: `graph.less %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.less"


@irdl_op_definition
class LessOrEqualOp(ElementwiseBinaryOp):
    """`lhs <= rhs` as a 0/1 mask: `graph.less_or_equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.less_or_equal"


@irdl_op_definition
class GreaterOp(ElementwiseBinaryOp):
    """`lhs > rhs` as a 0/1 mask: `graph.greater %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.greater"


@irdl_op_definition
class GreaterOrEqualOp(ElementwiseBinaryOp):
    """`lhs >= rhs` as a 0/1 mask: `graph.greater_or_equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.greater_or_equal"


@irdl_op_definition
class AndOp(ElementwiseBinaryOp):
    """Logical and of masks as a 0/1 mask: `graph.and %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.and"


@irdl_op_definition
class OrOp(ElementwiseBinaryOp):
    """Logical or of masks as a 0/1 mask: `graph.or %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.or"


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`: `graph.tanh %x : tensor<8xf32>`."""

    name = "graph.tanh"


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`exp(x)`: `graph.exp %x : tensor<8xf32>`."""

    name = "graph.exp"


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """`-x`: `graph.neg %x : tensor<8xf32>`."""

    name = "graph.neg"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`: `graph.abs %x : tensor<8xf32>`."""

    name = "graph.abs"


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """`sqrt(x)`: `graph.sqrt %x : tensor<8xf32>`."""

    name = "graph.sqrt"


@irdl_op_definition
class ReciprocalOp(ElementwiseUnaryOp):
    """`1 / x`: `graph.reciprocal %x : tensor<8xf32>`."""

    name = "graph.reciprocal"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm: `graph.log %x : tensor<8xf32>`."""

    name = "graph.log"


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """Round toward -inf: `graph.floor %x : tensor<8xf32>`."""

    name = "graph.floor"


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """Round toward +inf: `graph.ceil %x : tensor<8xf32>`."""

    name = "graph.ceil"


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """Round half to even: `graph.round %x : tensor<8xf32>`."""

    name = "graph.round"


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """-1, 0 or 1 by the sign of x: `graph.sign %x : tensor<8xf32>`."""

    name = "graph.sign"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function: `graph.erf %x : tensor<8xf32>`."""

    name = "graph.erf"


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """`sin(x)`: `graph.sin %x : tensor<8xf32>`."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """`cos(x)`: `graph.cos %x : tensor<8xf32>`."""

    name = "graph.cos"


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """`tan(x)`: `graph.tan %x : tensor<8xf32>`."""

    name = "graph.tan"


@irdl_op_definition
class AsinOp(ElementwiseUnaryOp):
    """`asin(x)`: `graph.asin %x : tensor<8xf32>`."""

    name = "graph.asin"


@irdl_op_definition
class AcosOp(ElementwiseUnaryOp):
    """`acos(x)`: `graph.acos %x : tensor<8xf32>`."""

    name = "graph.acos"


@irdl_op_definition
class AtanOp(ElementwiseUnaryOp):
    """`atan(x)`: `graph.atan %x : tensor<8xf32>`."""

    name = "graph.atan"


@irdl_op_definition
class SinhOp(ElementwiseUnaryOp):
    """`sinh(x)`: `graph.sinh %x : tensor<8xf32>`."""

    name = "graph.sinh"


@irdl_op_definition
class CoshOp(ElementwiseUnaryOp):
    """`cosh(x)`: `graph.cosh %x : tensor<8xf32>`."""

    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(ElementwiseUnaryOp):
    """`asinh(x)`: `graph.asinh %x : tensor<8xf32>`."""

    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(ElementwiseUnaryOp):
    """`acosh(x)`: `graph.acosh %x : tensor<8xf32>`."""

    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(ElementwiseUnaryOp):
    """`atanh(x)`: `graph.atanh %x : tensor<8xf32>`."""

    name = "graph.atanh"


@irdl_op_definition
class NotOp(ElementwiseUnaryOp):
    """Logical not of a 0/1 mask, `1 - x`: `graph.not %m : tensor<8xf32>`."""

    name = "graph.not"


OPS = [
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxOp,
    MinOp,
    PowOp,
    EqualOp,
    LessOp,
    LessOrEqualOp,
    GreaterOp,
    GreaterOrEqualOp,
    AndOp,
    OrOp,
    TanhOp,
    ExpOp,
    NegOp,
    AbsOp,
    SqrtOp,
    ReciprocalOp,
    LogOp,
    FloorOp,
    CeilOp,
    RoundOp,
    SignOp,
    ErfOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    NotOp,
]
