"""Compute weight-only kernels once, at load time, instead of on every call (constant folding over weights).

A kernel call in a function body whose inputs are all weights or precomputed buffers, and whose output is an
intermediate buffer (`loop.alloc "global"`), computes a constant: it becomes a `loop.precompute`, which the init
entry runs once when the model loads (see `loop-to-scf`). Calls are visited in order, so chains of such kernels
(for example batch-norm folding's `scale / sqrt(var + eps)`, then `weight * that`) are all hoisted. Kernels writing a
function output stay, since outputs are fresh buffers on every call.

    %w = loop.weight "w" : memref<8xf32>
    %t = loop.alloc "global" : memref<8xf32>
    func.call @scale_0(%w, %t) : (memref<8xf32>, memref<8xf32>) -> ()
    // becomes
    %t = loop.precompute @scale_0(%w) : (memref<8xf32>) -> memref<8xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, loop.WeightOp | loop.PrecomputeOp)


def _hoistable_output(call: func.CallOp) -> loop.AllocOp | None:
    """The intermediate buffer `call` fills from constants only, if it is one that nothing else writes."""
    *inputs, output = call.arguments
    if not inputs or not all(_is_constant(value) for value in inputs):
        return None
    alloc = output.owner
    if not isinstance(alloc, loop.AllocOp) or alloc.scope.data != "global":
        return None
    writers = [use.operation for use in alloc.result.uses if _writes(use.operation, use.index)]
    return alloc if writers == [call] else None


def _writes(user: Operation, operand_index: int) -> bool:
    """Kernels write only their last parameter; anything else that takes the buffer may write it too."""
    return not isinstance(user, func.CallOp) or operand_index == len(user.arguments) - 1


def hoist_constant_kernels(function: func.FuncOp) -> None:
    """Turn every constant-only kernel call of `function`'s body into a `loop.precompute`."""
    for call in [op for op in function.body.block.ops if isinstance(op, func.CallOp)]:
        alloc = _hoistable_output(call)
        if alloc is None:
            continue
        assert isinstance(alloc.result.type, MemRefType)
        precompute = loop.PrecomputeOp(call.callee.string_value(), call.arguments[:-1], alloc.result.type)
        precompute.result.name_hint = alloc.result.name_hint
        Rewriter.insert_op(precompute, InsertPoint.before(call))
        Rewriter.erase_op(call)
        alloc.result.replace_all_uses_with(precompute.result)
        Rewriter.erase_op(alloc)


@dataclass(frozen=True)
class LoopHoistConstantsPass(ModulePass):
    """Run kernels whose inputs are all weights once at load time (as loop.precompute), not on every call."""

    name = "loop-hoist-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                hoist_constant_kernels(function)
