"""The `toy` dialect: two ops on static `tensor<...xf32>` that minimlc's graph dialect spells as several.

    %g = toy.gelu %x : tensor<2x8xf32>
    %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>

The ops reuse the graph dialect's bases, so they get its types, syntax and shape verifiers.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition

from minimlc.dialects.graph.core import BinaryShapeRuleOp, ElementwiseUnaryOp, matmul_shape


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`: `toy.gelu %x : tensor<8xf32>`."""

    name = "toy.gelu"


@irdl_op_definition
class MatmulReluOp(BinaryShapeRuleOp):
    """`relu(matmul(a, b))`: `toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>`."""

    name = "toy.matmul_relu"
    SHAPE_RULE: ClassVar = staticmethod(matmul_shape)
    RELATION: ClassVar[str] = "matmul-compatible"


Toy = Dialect("toy", [GeluOp, MatmulReluOp], [])
