"""LLVM IR for `scf.for`, `scf.if` and `scf.yield`, so that `emit_llvm_ir` takes the `scf` level as it comes from
`loop-to-scf` and the compile skips `convert-scf-to-cf`. The blocks are those `convert-scf-to-cf` makes, in its order
(the code before the loop, the condition block, the body, the code after it), so the LLVM IR is the same up to local
names:

    scf.for %i = %c0 to %n step %c1 {
      memref.store %v, %buffer[%i] : memref<?xf32>
    }

becomes

      br label %.5
    .5:
      %.6 = phi  i64 [0, %.4], [%.9, %.7]
      %.10 = icmp slt i64 %.6, %.2
      br i1 %.10, label %.7, label %.8
    .7:
      ...store...
      %.9 = add i64 %.6, 1
      br label %.5
    .8:

`scf.index_switch` is not handled (nor is its `cf.switch` by `convert-to-llvm`): `emit_llvm_ir` names it.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Operation

from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Handler, Phi


def _for(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    index_type = fe.module.type(op.lb.type)
    condition = fe.name()[1:]
    phis: list[Phi] = [(fe.name(), index_type, [])]
    phis += [(fe.name(), fe.module.type(value.type), []) for value in op.iter_args]
    fe.incoming(phis, [fe.values[value][1] for value in (op.lb, *op.iter_args)])
    fe.emit(f"br label %{condition}")
    fe.start_block(condition, phis)
    body = op.body.block
    for arg, (name, type, _) in zip(body.args, phis, strict=True):
        fe.values[arg] = (type, name)
    compare = fe.emit(f"icmp slt {index_type} {phis[0][0]}, {fe.values[op.ub][1]}", None, "i1")
    first, after = fe.name()[1:], fe.name()[1:]
    fe.emit(f"br i1 {compare}, label %{first}, label %{after}")
    fe.start_block(first)
    fe.scopes[op] = (condition, phis)
    fe.emit_block(body)
    fe.start_block(after)
    for result, (name, type, _) in zip(op.results, phis[1:], strict=True):
        fe.values[result] = (type, name)


def _if(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    then, otherwise, after = fe.name()[1:], fe.name()[1:] if op.false_region.blocks else None, fe.name()[1:]
    phis: list[Phi] = [(fe.name(), fe.module.type(result.type), []) for result in op.results]
    fe.emit(f"br i1 {fe.values[op.cond][1]}, label %{then}, label %{otherwise or after}")
    fe.scopes[op] = (after, phis)
    fe.start_block(then)
    fe.emit_block(op.true_region.block)
    if otherwise is not None:
        fe.start_block(otherwise)
        fe.emit_block(op.false_region.block)
    fe.start_block(after, phis)
    for result, (name, type, _) in zip(op.results, phis, strict=True):
        fe.values[result] = (type, name)
    if op.results:  # as `convert-scf-to-cf`: the block of the results branches to one with the code after the if
        rest = fe.name()[1:]
        fe.emit(f"br label %{rest}")
        fe.start_block(rest)


def _yield(fe: FunctionEmitter, op: Operation) -> None:
    """A loop's latch (step the index, back to the condition) or the end of an `scf.if` branch."""
    parent = op.parent_op()
    target, phis = fe.scopes[parent]
    yielded = [fe.values[value][1] for value in op.operands]
    if isinstance(parent, scf.ForOp):
        (index, index_type, _) = phis[0]
        yielded.insert(0, fe.emit(f"add {index_type} {index}, {fe.values[parent.step][1]}", None, index_type))
    fe.incoming(phis, yielded)
    fe.emit(f"br label %{target}")


SCF_HANDLERS: dict[type[Operation], Handler] = {scf.ForOp: _for, scf.IfOp: _if, scf.YieldOp: _yield}
"""Handlers of the structured control flow `loop-to-scf` leaves (with `scf.if`, which user passes may add)."""
