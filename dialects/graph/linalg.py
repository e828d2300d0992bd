"""Linear algebra on batches of small square matrices: the determinant.

    %d = graph.det %m : tensor<3x4x4xf32> -> tensor<3xf32>
"""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import FLOATS, check_elements, check_result_element, check_result_shape, shape_of
from minimlc.dialects.graph.core import UnaryOp

__all__ = ["DET_MAX_ORDER", "DetOp"]

DET_MAX_ORDER = 8
"""The largest matrix order `graph.det` takes: its kernel unrolls an elimination of n^3 / 3 steps per matrix."""


@irdl_op_definition
class DetOp(UnaryOp):
    """The determinant of each square matrix of the two innermost axes, for n up to `DET_MAX_ORDER` (ONNX Det):
    `graph.det %m : tensor<3x4x4xf32> -> tensor<3xf32>`."""

    name = "graph.det"

    def __init__(self, input: SSAValue):
        super().__init__(input, shape_of(input)[:-2])

    def verify_(self) -> None:
        shape = shape_of(self.input)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise VerifyException(f"{self.name}: input shape {shape} is not a batch of square matrices")
        if not 1 <= shape[-1] <= DET_MAX_ORDER:
            raise VerifyException(f"{self.name}: matrices of order {shape[-1]} are outside 1..{DET_MAX_ORDER}")
        check_result_element(self, check_elements(self, FLOATS, self.input))
        check_result_shape(self, shape[:-2])


OPS = [DetOp]
