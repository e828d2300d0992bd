"""Tensor types, a compute's reduction extents and constants' attributes are made once per value and shared (an
attribute is immutable): the same attribute a fresh build gives, printed alike."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, TensorType, f16, f32, i64

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import build_compute, f32_constant, index_constant, read
from tests.lowering.dynamic_entry import parse

ONE_INPUT = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  func.return %x : tensor<2x3xf32>
}
"""


def test_tensor_type_is_shared_per_shape_and_element() -> None:
    first = graph.tensor_type((2, 3))
    assert first is graph.tensor_type([2, 3])
    assert first == TensorType(f32, [2, 3])
    assert graph.tensor_type((2, 3), f16) == TensorType(f16, [2, 3])
    assert graph.tensor_type((3, 2)) != first


def test_computes_share_their_reduction_extents_and_result_type() -> None:
    (x,) = parse(ONE_INPUT).body.block.first_op.body.block.args  # type: ignore[union-attr]

    def row_sum() -> te.ComputeOp:
        return build_compute("sum", (2,), lambda i: read(x, [i[0], i[1]]), reduce_extents=(3,), combiner="sum")

    first, second = row_sum(), row_sum()
    assert first.reduce_extents is second.reduce_extents
    assert first.reduce_extents == DenseArrayBase.from_list(i64, [3])
    assert first.result.type is second.result.type
    assert str(first) == str(second)
    assert str(first.result.type) == "tensor<2xf32>"


def test_constants_share_their_attribute_and_keep_the_sign_of_zero() -> None:
    assert index_constant(3).owner.value is index_constant(3).owner.value  # type: ignore[attr-defined]
    assert str(index_constant(3).owner) == "%0 = arith.constant 3 : index"
    positive, negative = f32_constant(0.0), f32_constant(-0.0)
    assert math.copysign(1.0, negative.owner.value.value.data) == -1.0  # type: ignore[attr-defined]
    assert math.copysign(1.0, positive.owner.value.value.data) == 1.0  # type: ignore[attr-defined]
    assert f32_constant(1).owner.value == FloatAttr(1, f32)  # type: ignore[attr-defined]
