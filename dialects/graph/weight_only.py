"""Weight-only quantized matmul: float32 activations times int8 / int4 weights stored packed, with a float32 scale
(and maybe a zero point) per block of `block_size` values along K, as ONNX Runtime's com.microsoft MatMulNBits.

B keeps ORT's layout, `[N, blocks, block_size * bits / 8]` bytes (int4: two values a byte, the lower nibble first);
the lowering unpacks it inside the reduction, so the weight stays packed in memory. A's last axis is padded to
`blocks * block_size` (the frontend pads it with zeros where K is not a multiple of the block size).
`accuracy_level = 4` (ORT's attribute: int8 compute allowed) makes the product an integer one: A quantized to int8
per block (symmetric, `max|a| / 127`), each block's dot product exact in i32, scaled into a float32 sum.

    %y = graph.matmul_nbits %a, %b, %scales {bits = 4 : i64} : (tensor<1x64xf32>, tensor<8x2x16xui8>,
        tensor<8x2xf32>) -> tensor<1x8xf32>
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, f32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import UNSIGNED, AnyTensor, check_result_shape, element_type, shape_of, tensor_type
from minimlc.dialects.graph.core import GraphOp

__all__ = ["INT8_ACCURACY_LEVEL", "WEIGHT_BITS", "MatMulNBitsOp"]

WEIGHT_BITS = (4, 8)
"""The weight widths `graph.matmul_nbits` takes."""

INT8_ACCURACY_LEVEL = 4
"""The `accuracy_level` (ORT's MatMulNBits attribute) at which A is quantized to int8 per block."""


@irdl_op_definition
class MatMulNBitsOp(GraphOp):
    """`a @ dequantized(b)^T` where `dequantized(b)[n, k] = (q[n, k] - zero[n, k // block]) * scale[n, k // block]`,
    `q` unpacked from the bytes of b; `zero_points` (ui8 `[N, blocks]`, one unpacked value per block) defaults to
    `2^(bits-1)`; with `accuracy_level = 4`, `a` is first quantized to int8 per block (see the module docstring):
    `graph.matmul_nbits %a, %b, %s zero_points %z : tensor<8x2xui8> {bits = 8 : i64}
    : (tensor<5x64xf32>, tensor<8x2x32xui8>, tensor<8x2xf32>) -> tensor<5x8xf32>`."""

    name = "graph.matmul_nbits"
    RUN_TIME_DIMS: ClassVar[bool] = True
    a = operand_def(AnyTensor)
    b = operand_def(AnyTensor)
    scales = operand_def(AnyTensor)
    zero_points = opt_operand_def(AnyTensor)
    result = result_def(AnyTensor)
    bits = prop_def(IntegerAttr[I64])
    accuracy_level = opt_prop_def(IntegerAttr[I64])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$a `,` $b `,` $scales (`zero_points` $zero_points^ `:` type($zero_points))? attr-dict "
        "`:` `(` type($a) `,` type($b) `,` type($scales) `)` `->` type($result)"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        scales: SSAValue,
        zero_points: SSAValue | None,
        bits: int,
        accuracy_level: int = 0,
    ):
        shape = (*shape_of(a)[:-1], shape_of(b)[0])
        properties = {"bits": IntegerAttr(bits, i64)}
        if accuracy_level:
            properties["accuracy_level"] = IntegerAttr(accuracy_level, i64)
        super().__init__(
            operands=[a, b, scales, [] if zero_points is None else [zero_points]],
            result_types=[tensor_type(shape, f32)],
            properties=properties,
        )

    @property
    def int8_activations(self) -> bool:
        """Whether A is quantized to int8 per block and the block dot products are integer ones."""
        level = self.accuracy_level
        return level is not None and level.value.data == INT8_ACCURACY_LEVEL

    @property
    def block_size(self) -> int:
        """Values per block along K."""
        return shape_of(self.b)[2] * 8 // self.bits.value.data

    def verify_(self) -> None:
        bits, a, b = self.bits.value.data, shape_of(self.a), shape_of(self.b)
        if bits not in WEIGHT_BITS:
            raise VerifyException(f"{self.name}: bits={bits}, expected one of {WEIGHT_BITS}")
        if element_type(self.a) != f32 or element_type(self.scales) != f32:
            raise VerifyException(f"{self.name}: a and scales must be f32")
        if element_type(self.b) != UNSIGNED[0] or len(b) != 3:
            raise VerifyException(f"{self.name}: b must be a rank-3 ui8 tensor [N, blocks, bytes], got {self.b.type}")
        if not a or a[-1] != b[1] * self.block_size:
            raise VerifyException(
                f"{self.name}: a's last extent must be blocks * block_size = {b[1] * self.block_size}"
            )
        if shape_of(self.scales) != b[:2]:
            raise VerifyException(f"{self.name}: scales must have shape {b[:2]}, got {shape_of(self.scales)}")
        zero = self.zero_points
        if zero is not None and (element_type(zero) != UNSIGNED[0] or shape_of(zero) != b[:2]):
            raise VerifyException(f"{self.name}: zero_points must be ui8 of shape {b[:2]}, got {zero.type}")
        check_result_shape(self, (*a[:-1], b[0]))


OPS = [MatMulNBitsOp]
