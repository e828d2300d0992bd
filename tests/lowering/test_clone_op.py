"""`clone_op` (lowering/generic/clone.py) gives the IR xDSL's `clone` gives: a te.compute with a run-time size, a
reduction and named indices, an op with a region of several blocks (cloned by xDSL's clone), an op with successors,
and every function of a real model at each stage lowering copies IR in, down to the use lists of every value and
the links between the ops of every block."""

from __future__ import annotations

from collections.abc import Callable

import onnx
import pytest
from xdsl.dialects import cf, func
from xdsl.ir import Block, Operation, SSAValue

from minimlc.dialects import te
from minimlc.frontend.onnx import import_model
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.target import set_target, target_from_name
from minimlc.tools.conformance import light_model_paths
from tests.lowering.dynamic_entry import parse

ROW_SUMS = """
func.func @sums(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %n: index) -> tensor<?xf32> {
  %s = te.compute "row_sum" (%row) [%n] reduce sum (%col : 8) -> tensor<?xf32> {
    %v = te.read %x[%row, %col] : tensor<?x8xf32>
    %two = arith.constant 2.0 : f32
    %scaled = arith.mulf %v, %two : f32
    te.yield %scaled : f32
  }
  func.return %s : tensor<?xf32>
}
"""

BRANCHES = """
func.func @outer() {
  "test.op"() ({
    %a = arith.constant 1 : index
    cf.br ^next(%a : index)
  ^next(%b: index):
    %c = arith.addi %b, %b : index
    "test.op"(%c) : (index) -> ()
  }) : () -> ()
  func.return
}
"""


def cloned(source: str, clone: Callable[[Operation, dict[SSAValue, SSAValue]], Operation]) -> str:
    """`source` with its function's first op cloned by `clone` before the return (reading `%y` for `%x` where it
    has both), the clone's results returned in place of the original's: the module's text."""
    module = parse(source)
    (function,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    block = function.body.block
    original, terminator = block.first_op, block.last_op
    assert original is not None
    assert terminator is not None
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args[:1], block.args[1:2]))
    copy = clone(original, mapping)
    block.insert_op_before(copy, terminator)
    terminator.operands = [mapping.get(value, value) for value in terminator.operands]
    return str(module)


def test_a_compute_clones_as_xdsl_clones_it_reading_the_mapped_tensor() -> None:
    expected = cloned(ROW_SUMS, lambda op, mapping: op.clone(mapping))
    got = cloned(ROW_SUMS, clone_op)
    assert got == expected
    assert "te.read %y[%row_1, %col_1]" in got
    assert "(%row_1) [%n] reduce sum (%col_1 : 8)" in got
    assert "func.return %s_1" in got
    original = parse(ROW_SUMS)
    compute = next(op for op in original.walk() if isinstance(op, te.ComputeOp))
    copies: dict[SSAValue, SSAValue] = {}
    copy = clone_op(compute, copies)
    assert isinstance(copy, te.ComputeOp)
    assert copies[compute.result] is copy.result
    assert [copies[arg] for arg in compute.body.block.args] == list(copy.body.block.args)
    assert [arg.name_hint for arg in copy.body.block.args] == ["row", "col"]


def test_an_op_with_several_blocks_clones_as_xdsl_clones_it() -> None:
    expected = cloned(BRANCHES, lambda op, mapping: op.clone(mapping))
    got = cloned(BRANCHES, clone_op)
    assert got == expected
    assert got.count("cf.br ^") == 2


def test_a_branch_keeps_its_successors_and_their_uses() -> None:
    target = Block()
    branch = cf.BranchOp(target)
    copy = clone_op(branch, {})
    assert tuple(copy.successors) == (target,) == tuple(branch.successors)
    assert [use.operation for use in target.uses] == [copy, branch]


def _links(op: Operation) -> list[list[Operation]]:
    """Per block inside `op`, its ops read backwards from `last_op` by `prev_op`, each checked to name the block as
    its parent and the one before it as its `next_op` (what `add_op` sets, and printing never reads)."""
    blocks = []
    for inner in op.walk():
        for region in inner.regions:
            for block in region.blocks:
                backwards, following = [], None
                current = block.last_op
                while current is not None:
                    assert current.parent is block
                    assert current.next_op is following
                    backwards.append(current)
                    following, current = current, current.prev_op
                assert following is block.first_op
                blocks.append(backwards[::-1])
    return blocks


def _uses(op: Operation) -> list[tuple[int, ...]]:
    """Per op inside `op` in walk order, how many uses each of its results and block arguments has."""
    counts = []
    for inner in op.walk():
        counts.append(tuple(len(list(result.uses)) for result in inner.results))
        for region in inner.regions:
            for block in region.blocks:
                counts.append(tuple(len(list(arg.uses)) for arg in block.args))
    return counts


@pytest.mark.parametrize(
    ("model", "stage"),
    [("squeezenet", "te"), ("squeezenet", "schedule"), ("squeezenet", "scf"), ("inception_v2", "program")],
)
def test_every_function_of_a_lowered_model_clones_as_xdsl_clones_it(model: str, stage: str) -> None:
    (path,) = [path for path in light_model_paths() if path.stem == f"light_{model}"]
    imported = import_model(onnx.load(path))
    set_target(imported.module, target_from_name("x86-64-v3"))
    run_pipeline(imported.module, 3, stop_after=stage)
    functions = [op for op in imported.module.ops if isinstance(op, func.FuncOp)]
    assert sum(1 for function in functions for _ in function.walk()) > 1000
    for function in functions:
        expected, got = function.clone(), clone_op(function, {})
        assert str(got) == str(expected)
        assert _uses(got) == _uses(expected) == _uses(function)
        assert [len(ops) for ops in _links(got)] == [len(ops) for ops in _links(expected)]
