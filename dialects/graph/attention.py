"""The fused attention op: a softmax of scaled query-key products, times the values, as one operation.

`graph-fuse-attention` writes it in place of the matmul, scale, bias add, softmax and matmul chain that exporters
write, so that `graph-to-te` can lower it to one kernel whose rows stay in cache (see `graph_to_te/attention.py`).
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import F32Tensor, broadcast_shapes, check_result_shape, shape_of, tensor_type
from minimlc.dialects.graph.core import GraphOp

__all__ = ["AttentionOp"]


@irdl_op_definition
class AttentionOp(GraphOp):
    """`softmax(query @ key^T * scale + bias) @ value`, the value given transposed (`value_t` is [..., E, T]) so
    that both products are dot products along unit-stride rows; batch axes equal, the bias broadcast:
    `graph.attention %q, %k, %vt, %s, %b : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>,
    tensor<8x6xf32>) -> tensor<2x8x5xf32>`."""

    name = "graph.attention"
    query = operand_def(F32Tensor)
    key = operand_def(F32Tensor)
    value_t = operand_def(F32Tensor)
    scale = operand_def(F32Tensor)
    bias = opt_operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = (
        "$query `,` $key `,` $value_t `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(
        self, query: SSAValue, key: SSAValue, value_t: SSAValue, scale: SSAValue, bias: SSAValue | None = None
    ):
        shape = (*shape_of(query)[:-1], shape_of(value_t)[-2])
        super().__init__(
            operands=[query, key, value_t, scale, [] if bias is None else [bias]], result_types=[tensor_type(shape)]
        )

    def verify_(self) -> None:
        query, key, value_t = shape_of(self.query), shape_of(self.key), shape_of(self.value_t)
        if len(query) < 2 or len(key) != len(query) or len(value_t) != len(query):
            raise VerifyException(f"{self.name}: query, key and value_t must have one rank, at least 2")
        if key[:-2] != query[:-2] or value_t[:-2] != query[:-2]:
            raise VerifyException(f"{self.name}: batch axes of query {query}, key {key}, value_t {value_t} differ")
        if key[-1] != query[-1] or value_t[-1] != key[-2]:
            raise VerifyException(
                f"{self.name}: query {query}, key {key} and value_t {value_t} do not chain ([.., S, D], [.., T, D], "
                "[.., E, T])"
            )
        if math.prod(shape_of(self.scale)) != 1:
            raise VerifyException(f"{self.name}: scale must hold one element, got shape {shape_of(self.scale)}")
        scores = (*query[:-1], key[-2])
        if self.bias is not None:
            bias = shape_of(self.bias)
            if len(bias) > len(scores) or broadcast_shapes(bias, scores) != scores:
                raise VerifyException(f"{self.name}: bias shape {bias} does not broadcast to the scores' {scores}")
        check_result_shape(self, (*query[:-1], value_t[-2]))


OPS = [AttentionOp]
