"""Ops whose result depends only on their attributes (shape, element type, parameters), not on any operand's values:
EyeLike's identity matrix.

They have no operands; native code computes their elements from the indices (`graph-to-te`), like any other kernel.
(The window functions, whose only operand is their size, are folded at import time: their output is an honest
constant.)
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import ELEMENT_TYPES, AnyTensor, check_elements, shape_of, tensor_type
from minimlc.dialects.graph.core import GraphOp

__all__ = ["EyeOp"]


@irdl_op_definition
class EyeOp(GraphOp):
    """ONNX EyeLike: ones on the `k`-th diagonal (above the main one for k > 0), zeros elsewhere,
    `graph.eye {k = 1 : i64} : tensor<3x4xi32>`."""

    name = "graph.eye"
    result = result_def(AnyTensor)
    k = prop_def(IntegerAttr[I64])
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, shape: tuple[int, int], element: Attribute, k: int = 0):
        super().__init__(result_types=[tensor_type(shape, element)], properties={"k": IntegerAttr(k, i64)})

    def verify_(self) -> None:
        if len(shape_of(self.result)) != 2:
            raise VerifyException(f"{self.name}: result must be a matrix, got shape {shape_of(self.result)}")
        check_elements(self, ELEMENT_TYPES, self.result)


OPS = [EyeOp]
