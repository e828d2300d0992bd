"""Expand f32 `math.exp`, `math.erf` and `math.tanh` into arith ops (`math_approximations.py`), so that loops computing
them vectorize: LLVM lowers a vector `llvm.exp` to one libm call per lane, and `erff` and `tanhf` have no vector
form, so the vectorizer and the epilogue fusion leave a loop with an erf or tanh scalar (GPT-2's tanh GELU ran 5x
ONNX Runtime's time, most of it in libm's `tanhf`). `math.powf` to a constant 0.25, 0.5 or 0.75 (LRN's beta)
becomes square roots (`quarter_power`). Runs on te bodies, after `te-inline` (one body
holds the whole elementwise chain) and before `te-to-loop`. Other element types keep their math ops.

    %e = math.exp %x : f32
    // becomes
    %c89 = arith.constant 8.900000e+01 : f32 ; %over = arith.cmpf ogt, %x, %c89 : f32 ; ... (about 30 arith ops)
    %e = arith.mulf %scaled, %two_to_the_rest : f32
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, math
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.te import math_approximations
from minimlc.lowering.te.compute_rewriting import erase_dead_ops, rewrite_ops

_EXPANSIONS: dict[type[Operation], Callable[[SSAValue], SSAValue]] = {
    math.ExpOp: math_approximations.exp,
    math.ErfOp: math_approximations.erf,
    math.TanhOp: math_approximations.tanh,
}


class MathLowering(RewritePattern):
    """Replaces an f32 `math.exp`, `math.erf`, `math.tanh` or quarter `math.powf` by its arith expansion. The
    expansion depends on its (first) operand alone, so each is built once, over a placeholder operand, and cloned for
    every op (a model's layers repeat their GELUs and softmaxes; building the ops costs several times cloning
    them)."""

    def __init__(self) -> None:
        self.templates: dict[object, tuple[list[Operation], SSAValue, SSAValue]] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.results or not isinstance(op.results[0].type, builtin.Float32Type):
            return
        key: object = type(op)
        expand = _EXPANSIONS.get(type(op))
        if isinstance(op, math.PowFOp) and (exponent := _quarter_exponent(op)) is not None:
            key = (math.PowFOp, exponent)
            expand = functools.partial(math_approximations.quarter_power, exponent=exponent)
        if expand is None:
            return
        template = self.templates.get(key)
        if template is None:
            block = Block(arg_types=[builtin.f32])
            with ImplicitBuilder(block):
                value = expand(block.args[0])
            template = self.templates[key] = (list(block.ops), block.args[0], value)
        ops, placeholder, value = template
        mapping: dict[SSAValue, SSAValue] = {placeholder: op.operands[0]}
        rewriter.insert([clone_op(template_op, mapping) for template_op in ops], InsertPoint.before(op))
        rewriter.replace(op, [], [mapping[value]])


def _quarter_exponent(op: math.PowFOp) -> float | None:
    """The exponent of `op` where it is a constant of `QUARTER_POWERS`, else None."""
    constant = op.rhs.owner
    if not isinstance(constant, arith.ConstantOp) or not isinstance(constant.value, builtin.FloatAttr):
        return None
    exponent = constant.value.value.data
    return exponent if exponent in math_approximations.QUARTER_POWERS else None


@dataclass(frozen=True)
class TeExpandMathPass(ModulePass):
    """Expand f32 math.exp, math.erf, math.tanh and quarter powers into vectorizable arith ops (polynomials and range
    reduction, square roots)."""

    name = "te-expand-math"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        """What xDSL's walker (not recursive) with a `GreedyRewritePatternApplier` does: the ops dead when reached
        erased (te-inline leaves dead constants), the others offered to the pattern; a rewrite makes dead only the
        ops before the one it replaces (its operands), so the dead ones may be erased first."""
        erase_dead_ops(op)
        rewrite_ops(op, (*_EXPANSIONS, math.PowFOp), MathLowering())
