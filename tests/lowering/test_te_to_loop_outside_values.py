"""te-to-loop's `_outside_values`, in one pass over a compute's body: the tensors it reads in first-read order (those
read inside a nested region included), the outside index values it uses, and nothing defined inside the body."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import te
from minimlc.lowering.te.compute_rewriting import computes_of
from minimlc.lowering.te_to_loop.te_to_loop import _outside_values
from tests.lowering.dynamic_entry import parse

NESTED = """
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %s = te.compute "pick" (%i) -> tensor<4xf32> {
    %c = arith.cmpi slt, %i, %n : index
    %v = scf.if %c -> (f32) {
      %a = te.read %y[%i] : tensor<4xf32>
      %b = arith.negf %a : f32
      scf.yield %b : f32
    } else {
      %a = te.read %z[%n] : tensor<4xf32>
      scf.yield %a : f32
    }
    %w = te.read %x[%i] : tensor<4xf32>
    %r = te.read %y[%i] : tensor<4xf32>
    %t = arith.addf %v, %w : f32
    %u = arith.addf %t, %r : f32
    te.yield %u : f32
  }
  func.return %s : tensor<4xf32>
}
"""


def _compute(source: str) -> te.ComputeOp:
    (compute,) = computes_of(parse(source))
    return compute


def test_tensors_in_first_read_order_and_outside_indices() -> None:
    module = parse(NESTED)
    (compute,) = computes_of(module)
    tensors, indices = _outside_values(compute)
    x, y, z, n = module.body.block.first_op.body.block.args  # type: ignore[union-attr]
    assert tensors == [y, z, x]
    assert indices == [n]


OUTSIDE_FLOAT = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = arith.constant 1.000000e+00 : f32
  %s = te.compute "shift" (%i) -> tensor<4xf32> {
    %c = arith.constant true
    %v = scf.if %c -> (f32) {
      %a = te.read %x[%i] : tensor<4xf32>
      %b = arith.addf %a, %k : f32
      scf.yield %b : f32
    } else {
      %a = te.read %x[%i] : tensor<4xf32>
      scf.yield %a : f32
    }
    te.yield %v : f32
  }
  func.return %s : tensor<4xf32>
}
"""


def test_a_float_from_outside_the_body_is_refused_in_a_nested_region() -> None:
    message = r"te-to-loop: te.compute 'shift' uses a value defined outside its body .* \(operand of arith.addf\)"
    with pytest.raises(DiagnosticException, match=message):
        _outside_values(_compute(OUTSIDE_FLOAT))
