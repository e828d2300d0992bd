"""`compute_rewriting.py`: the te passes' patterns offered the computes (or the ops of given types) that xDSL's
walker would offer them, in its order, without the ops a rewrite inserted or erased."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from minimlc.dialects import te
from minimlc.lowering.te.compute_rewriting import computes_of, rewrite_computes, rewrite_ops
from tests.lowering.dynamic_entry import parse

TWO_FUNCTIONS = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = te.compute "a" (%i) -> tensor<4xf32> {
    %v = te.read %x[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    %m = arith.negf %n : f32
    te.yield %m : f32
  }
  %b = te.compute "b" (%i) -> tensor<4xf32> {
    %v = te.read %a[%i] : tensor<4xf32>
    te.yield %v : f32
  }
  func.return %b : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = te.compute "c" (%i) -> tensor<4xf32> {
    %v = te.read %x[%i] : tensor<4xf32>
    te.yield %v : f32
  }
  func.return %c : tensor<4xf32>
}
"""


class Record(RewritePattern):
    """Records what it is offered; replaces a compute tagged "a" by a copy of it (inserted before it), and a negf
    by its operand after erasing the negf that reads it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.seen.append(op.tag.data if isinstance(op, te.ComputeOp) else op.name)
        if isinstance(op, te.ComputeOp) and op.tag.data == "a":
            rewriter.replace(op, op.clone())
        if isinstance(op, arith.NegfOp):
            for use in list(op.result.uses):
                rewriter.replace(use.operation, [], [op.operand])
            rewriter.replace(op, [], [op.operand])


class NoRewrite(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        return


def test_computes_of_lists_the_computes_in_program_order() -> None:
    assert [c.tag.data for c in computes_of(parse(TWO_FUNCTIONS))] == ["a", "b", "c"]


def test_each_compute_is_offered_once_and_an_inserted_one_is_not() -> None:
    module, pattern = parse(TWO_FUNCTIONS), Record()
    assert rewrite_computes(module, pattern)
    assert pattern.seen == ["a", "b", "c"]
    assert [c.tag.data for c in computes_of(module)] == ["a", "b", "c"]  # the copy of "a", not offered
    assert not rewrite_computes(module, NoRewrite())


def test_ops_of_the_types_are_offered_unless_erased_before() -> None:
    """The first negf erases the second, which is not offered."""
    module, pattern = parse(TWO_FUNCTIONS), Record()
    rewrite_ops(module, (arith.NegfOp,), pattern)
    assert pattern.seen == ["arith.negf"]
    assert "arith.negf" not in str(module)
