"""te-expand-math and te-conv-layout offer their pattern only the ops it rewrites where the module has no trivially
dead op (`has_dead_op`), and keep xDSL's walker, which also erases dead ops, where it has one: either way the IR is
the walker's."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from minimlc.lowering.pipeline import make_context
from minimlc.lowering.te.compute_rewriting import has_dead_op
from minimlc.lowering.te.te_conv_layout import ConvInputLayout, TeConvLayoutPass
from minimlc.lowering.te.te_expand_math import MathLowering, TeExpandMathPass
from tests.lowering.dynamic_entry import parse

MATH = """
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = te.compute "gelu" (%i) -> tensor<8xf32> {
    %u = te.read %x[%i] : tensor<8xf32>
    %e = math.exp %u : f32
    %t = math.tanh %e : f32
    %h = arith.constant 5.000000e-01 : f32
    %r = math.powf %t, %h : f32
    %UNUSED
    te.yield %r : f32
  }
  func.return %s : tensor<8xf32>
}
"""

CONV = """
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %w = graph.weight "w" : tensor<4x2x3x3xf32>
  %y = te.compute "conv" (%n, %f, %h, %v) reduce sum (%c : 2, %kh : 3, %kw : 3) -> tensor<1x4x2x2xf32> {
    %ih = arith.addi %h, %kh : index
    %iw = arith.addi %v, %kw : index
    %a = te.read %x[%n, %c, %ih, %iw] : tensor<1x2x4x4xf32>
    %b = te.read %w[%f, %c, %kh, %kw] : tensor<4x2x3x3xf32>
    %p = arith.mulf %a, %b : f32
    %UNUSED
    te.yield %p : f32
  }
  func.return %y : tensor<1x4x2x2xf32>
}
"""

DEAD = "%dead = arith.negf %p : f32"


def _source(template: str, dead: bool) -> str:
    value = "%u" if "%u" in template else "%p"
    return template.replace("%UNUSED", DEAD.replace("%p", value) if dead else "")


def _walked(source: str, pattern: RewritePattern, recursively: bool) -> ModuleOp:
    module = parse(source)
    PatternRewriteWalker(GreedyRewritePatternApplier([pattern]), apply_recursively=recursively).rewrite_module(module)
    return module


def _passed(source: str, module_pass: ModulePass) -> ModuleOp:
    module = parse(source)
    module_pass.apply(make_context(), module)
    return module


def test_has_dead_op_finds_an_unused_pure_op_in_a_body() -> None:
    assert not has_dead_op(parse(_source(CONV, dead=False)))
    assert has_dead_op(parse(_source(CONV, dead=True)))
    assert not has_dead_op(parse(_source(MATH, dead=False)))


@pytest.mark.parametrize("dead", [False, True])
def test_te_expand_math_gives_the_walkers_ir(dead: bool) -> None:
    source = _source(MATH, dead)
    expected = _walked(source, MathLowering(), recursively=False)
    result = _passed(source, TeExpandMathPass())
    assert str(result) == str(expected)
    assert not any(op in str(result) for op in ("math.exp", "math.tanh", "math.powf", "arith.negf"))


@pytest.mark.parametrize("dead", [False, True])
def test_te_conv_layout_gives_the_walkers_ir(dead: bool) -> None:
    source = _source(CONV, dead)
    expected = _walked(source, ConvInputLayout(), recursively=True)
    result = _passed(source, TeConvLayoutPass())
    assert str(result) == str(expected)
    assert '"conv_input_nhwc"' in str(result)
    assert "arith.negf" not in str(result)


def test_te_expand_math_erases_what_the_walker_reaches_dead() -> None:
    """Erasing the last negf of a dead chain leaves the first (reached before, when it was used), as the walker
    does; a dead compute goes whole."""
    chain = "%d0 = arith.negf %u : f32\n    %d1 = arith.negf %d0 : f32"
    dead_compute = '%unused = te.compute "unused" (%j) -> tensor<8xf32> {\n    %e = te.read %x[%j] : tensor<8xf32>\n'
    dead_compute += "    %f = math.exp %e : f32\n    te.yield %f : f32\n  }\n  func.return %s"
    source = MATH.replace("%UNUSED", chain).replace("func.return %s", dead_compute)
    expected = _walked(source, MathLowering(), recursively=False)
    result = _passed(source, TeExpandMathPass())
    assert str(result) == str(expected)
    assert str(result).count("arith.negf") == 1
    assert '"unused"' not in str(result)
