"""`loop-decompose-reduction`: split a reduction into an init nest and an update nest (TVM `decompose_reduction`).

te-to-loop accumulates a reduction in a local scalar: init, update in the reduction loops, final store. This pass
accumulates in the output buffer instead, so that the nest becomes perfect and spatial and reduction loops can be
reordered and tiled freely; `loop-cache-write` later moves a tile of that accumulation back into local storage.
The init nest is a copy of the spatial loops, each renamed `<name>_init`:

    loop.for "i" %i = 0 to 4 step 1 serial {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %acc[] : memref<f32>
      loop.for "k" %k = 0 to 8 step 1 serial { %s = load acc; acc = %s + ...  }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %out[%i] : memref<4xf32>
    }
    // becomes
    loop.for "i_init" %i_init = 0 to 4 step 1 serial { memref.store %zero, %out[%i_init] }
    loop.for "i" %i = 0 to 4 step 1 serial {
      loop.for "k" %k = 0 to 8 step 1 serial { %s = load out[%i]; out[%i] = %s + ... }
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import check_new_names, find_kernel, is_movable, loops_of, walk_ops


def _accumulator(kernel: func.FuncOp, pass_name: str) -> loop.AllocOp:
    for op in walk_ops(kernel):
        if isinstance(op, loop.AllocOp) and op.scope.data == "local":
            memref_type = op.result.type
            if isinstance(memref_type, MemRefType) and not memref_type.get_shape():
                return op
    raise DiagnosticException(f"{pass_name}: kernel '{kernel.sym_name.data}' has no scalar accumulator to decompose")


def decompose_reduction(kernel: func.FuncOp, pass_name: str) -> None:
    """Rewrite the kernel's scalar-accumulator reduction into an init nest and an in-place update nest."""
    acc = _accumulator(kernel, pass_name).result
    init_store = next(op for op in walk_ops(kernel) if isinstance(op, memref.StoreOp) and op.memref is acc)
    block = init_store.parent_block()
    assert block is not None
    final_load = next((op for op in block.ops if isinstance(op, memref.LoadOp) and op.memref is acc), None)
    final_store = final_load.next_op if final_load is not None else None
    outermost = block.parent_op()
    if (
        final_load is None
        or not isinstance(final_store, memref.StoreOp)
        or final_store.value is not final_load.res
        or not isinstance(outermost, loop.ForOp)
    ):
        raise DiagnosticException(
            f"{pass_name}: kernel '{kernel.sym_name.data}' does not store its accumulator straight to its output"
        )
    while isinstance(outermost.parent_op(), loop.ForOp):
        outermost = outermost.parent_op()
    assert isinstance(outermost, loop.ForOp)
    check_new_names(kernel, pass_name, [f"{lp.loop_name.data}_init" for lp in loops_of(outermost)])

    init_nest = clone_op(outermost, {})
    mapping: dict[Operation, Operation] = dict(zip(walk_ops(outermost), walk_ops(init_nest)))
    reduction_loops = [op for op in block.ops if isinstance(op, loop.ForOp)]
    cloned_store = mapping[final_store]
    cloned_init = mapping[init_store]
    assert isinstance(cloned_store, memref.StoreOp)
    assert isinstance(cloned_init, memref.StoreOp)
    cloned_store.operands[0] = cloned_init.value
    for op in [*reduction_loops, final_load, init_store]:
        mapping[op].detach()
        mapping[op].erase()
    for lp in loops_of(init_nest):
        lp.loop_name = StringAttr(f"{lp.loop_name.data}_init")
        lp.induction_var.name_hint = lp.loop_name.data
    kernel_block = outermost.parent_block()
    assert kernel_block is not None
    kernel_block.insert_op_before(init_nest, outermost)

    target, indices = final_store.memref, list(final_store.indices)
    for use in list(acc.uses):
        access = use.operation
        if access in (init_store, final_load):
            continue
        if isinstance(access, memref.LoadOp):
            replacement: Operation = memref.LoadOp.get(target, indices)
        else:
            assert isinstance(access, memref.StoreOp)
            replacement = memref.StoreOp.get(access.value, target, indices)
        access_block = access.parent_block()
        assert access_block is not None
        access_block.insert_op_before(replacement, access)
        for old, new in zip(access.results, replacement.results):
            old.replace_all_uses_with(new)
        access.detach()
        access.erase()
    for op in (final_store, final_load, init_store, acc.owner):
        op.detach()
        op.erase()
    for op in reversed(list(block.ops)):
        if is_movable(op) and not any(result.uses for result in op.results):
            op.detach()
            op.erase()


@dataclass(frozen=True)
class LoopDecomposeReductionPass(ModulePass):
    """Accumulate kernel `kernel`'s reduction in its output, initialised by a separate `_init` nest."""

    name = "loop-decompose-reduction"

    kernel: str

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decompose_reduction(find_kernel(op, self.name, self.kernel), self.name)
