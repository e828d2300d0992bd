"""`loop-rfactor`: compute a reduction's partial results over one of its loops separately, then combine them (TVM
`rfactor`).

`loop-rfactor{kernel=gemv_0 loop=k2_o}` takes a reduction loop `k2_o` that accumulates into a scalar accumulator (as
`te-to-loop` leaves it, its depth loop split first by `loop-split`) and makes each of its iterations a partial result
of its own: a new nest, `k2_o` outermost around copies of the spatial loops (renamed `<name>_rf`), reduces each range
into `partial[k2_o, <output index>]` (a `loop.alloc "local"` buffer, one row of the output per iteration); the
original nest then combines the partials over `k2_o_r` with the update's own operation, before whatever else the
reduction does (a peeled tail of the depth) and the epilogue. With a 4-iteration `k2_o` (`K = 4 * 256 + 3`):

    loop.for "i1" %i1 = 0 to 512 step 1 serial {
      memref.store %zero, %acc[]
      loop.for "k2_o" %k2_o = 0 to 1024 step 256 serial { loop.for "k2_i" ... { acc += x[0, k] * w[k, i1] } }
      loop.for "k2_t" %k2_t = 1024 to 1027 step 1 serial { acc += x[0, k2_t] * w[k2_t, i1] }
      %r = memref.load %acc[] ; memref.store %r, %y[0, %i1]
    }
    // becomes
    %partial = loop.alloc "local" : memref<4x1x512xf32>
    %acc_rf = loop.alloc "local" : memref<f32>
    loop.for "k2_o" %k2_o = 0 to 4 step 1 serial {
      loop.for "i1_rf" %i1_rf = 0 to 512 step 1 serial {
        memref.store %zero, %acc_rf[]
        %k2_o_start = arith.muli %k2_o, %c256 : index
        loop.for "k2_i" ... { acc_rf += x[0, k] * w[k, i1_rf] }     // k = %k2_o_start + k2_i
        %p = memref.load %acc_rf[] ; memref.store %p, %partial[%k2_o, 0, %i1_rf]
      }
    }
    loop.for "i1" %i1 = 0 to 512 step 1 serial {
      memref.store %zero, %acc[]
      loop.for "k2_o_r" %k2_o_r = 0 to 4 step 1 serial { acc += partial[%k2_o_r, 0, %i1] }
      loop.for "k2_t" ... { acc += x[0, k2_t] * w[k2_t, i1] }
      %r = memref.load %acc[] ; memref.store %r, %y[0, %i1]
    }

The iterations of the new `k2_o` write distinct rows of the partials, so it may be marked `parallel` (a split-K
GEMV: each task streams whole rows of its own depth range). The partials' accumulator is allocated first in the
kernel, so that `loop-decompose-reduction` then decomposes the partial nest (the combining nest keeps its scalar
accumulator). Refused: a loop with a run-time trip count, a loop whose body stores anything but one scalar
accumulator updated as `acc = op(acc, value)`, spatial loops holding anything beside the next loop, an output whose
index is computed after the reduction, and partials over `RFACTOR_MAX_BYTES`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import (
    build_form,
    check_new_names,
    enclosing_loops,
    find_kernel,
    find_loop,
    new_loop,
    walk_ops,
)

RFACTOR_MAX_BYTES = 1 << 20
"""Largest partials buffer `loop-rfactor` makes (a local buffer, on the stack of the thread calling the kernel)."""


@dataclass(frozen=True)
class Reduction:
    """What `loop-rfactor` reads of a reduction loop's surroundings."""

    accumulator: SSAValue
    update: Operation
    """The operation combining the accumulator with a value (`arith.addf %acc_value, %product`)."""
    update_load: memref.LoadOp
    """The update's read of the accumulator."""
    final_load: memref.LoadOp
    """The read of the accumulator after the reduction loop."""
    output: memref.StoreOp
    """The store of the result (maybe through an epilogue) after it."""
    outermost: loop.ForOp
    """The outermost spatial loop around the reduction loop."""
    spatial: list[loop.ForOp]
    """The spatial loops around the reduction loop, outermost first."""


@dataclass(frozen=True)
class LoopRfactorPass(ModulePass):
    """Reduce each iteration of reduction loop `loop` into a partial result, then combine them (module docstring)."""

    name = "loop-rfactor"

    kernel: str
    loop: str

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(f"{self.name}: loop '{self.loop}' of kernel '{self.kernel}' {reason}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        if target.is_dynamic:
            raise self.fail("runs a run-time number of iterations: the partials would have no static size")
        found = self.reduction(target)
        shape = [target.trip_count, *found.output.memref.type.get_shape()]  # type: ignore[union-attr]
        element = found.output.memref.type.element_type  # type: ignore[union-attr]
        size = math.prod(shape) * element.bitwidth // 8
        if size > RFACTOR_MAX_BYTES:
            raise self.fail(f"would need {size} bytes of partials, more than {RFACTOR_MAX_BYTES}")
        check_new_names(kernel, self.name, [*(f"{lp.loop_name.data}_rf" for lp in found.spatial), f"{self.loop}_r"])
        partial = loop.AllocOp(MemRefType(element, shape), "local")
        partial.result.name_hint = "partial"
        accumulator = loop.AllocOp(found.accumulator.type, "local")  # type: ignore[arg-type]
        accumulator.result.name_hint = "acc_rf"
        first = kernel.body.block.first_op
        assert first is not None
        kernel.body.block.insert_ops_before([partial, accumulator], first)
        self.partial_nest(target, found, partial.result, accumulator.result)
        self.combine(target, found, partial.result)

    def reduction(self, target: loop.ForOp) -> Reduction:
        """The accumulator `target` updates, its update, final load and output store, and the spatial loops."""
        stores = [s for s in walk_ops(target) if isinstance(s, memref.StoreOp)]
        buffers = {s.memref for s in stores}
        acc = next(iter(buffers)) if len(buffers) == 1 else None
        if acc is None or not isinstance(acc.owner, loop.AllocOp) or acc.type.get_shape():  # type: ignore[union-attr]
            raise self.fail("does not update one scalar accumulator: only a reduction loop can be factored")
        loads = [a for a in walk_ops(target) if isinstance(a, memref.LoadOp) and a.memref is acc]
        update = stores[0].value.owner if len(stores) == len(loads) == 1 else None
        if not isinstance(update, Operation) or len(update.operands) != 2 or loads[0].res not in update.operands:
            raise self.fail("does not update its accumulator as acc = op(acc, value)")
        block = target.parent_block()
        assert block is not None
        position = list(block.ops).index(target)
        before, after = list(block.ops)[:position], list(block.ops)[position + 1 :]
        if not any(isinstance(s, memref.StoreOp) and s.memref is acc for s in before):
            raise self.fail("has no initial store of its accumulator before it")
        final_load = next((a for a in after if isinstance(a, memref.LoadOp) and a.memref is acc), None)
        output = next((s for s in after if isinstance(s, memref.StoreOp) and s.memref is not acc), None)
        if final_load is None or output is None:
            raise self.fail("is not followed by a load of its accumulator and a store of the output")
        if any(self.after(index, target) for index in output.indices):
            raise self.fail("has an output index computed after it: the partials could not be indexed by it")
        if not output.memref.type.has_static_shape():  # type: ignore[union-attr]
            raise self.fail("writes an output of a run-time shape: the partials would have no static size")
        spatial = enclosing_loops(target, _outermost(target))[::-1]
        if not spatial:
            raise self.fail("has no spatial loop around it")
        for outer, inner in itertools.pairwise(spatial):
            others = [
                o for o in outer.body.block.ops if o is not inner and (o.regions or isinstance(o, memref.StoreOp))
            ]
            if others:
                raise self.fail(f"is inside loop '{outer.loop_name.data}', which holds more than the next loop")
        return Reduction(acc, update, loads[0], final_load, output, spatial[0], spatial)

    @staticmethod
    def after(value: SSAValue, target: loop.ForOp) -> bool:
        """Whether `value` is defined by an op of `target`'s block after it."""
        owner = value.owner
        return (
            isinstance(owner, Operation)
            and owner.parent_block() is target.parent_block()
            and target.is_before_in_block(owner)
        )

    def partial_nest(self, target: loop.ForOp, found: Reduction, partial: SSAValue, accumulator: SSAValue) -> None:
        """Before the outermost spatial loop: `loop` (now from 0, step 1) around a copy of the spatial loops, each
        iteration reducing its range into `partial[loop, output index]`."""
        copy = clone_op(found.outermost, {})
        values: dict[SSAValue, SSAValue] = {}
        ops: dict[Operation, Operation] = {}
        for old, new in zip(walk_ops(found.outermost), walk_ops(copy)):
            ops[old] = new
            values.update(zip(old.results, new.results))
            if isinstance(old, loop.ForOp):
                assert isinstance(new, loop.ForOp)
                values[old.induction_var] = new.induction_var
        for inner in walk_ops(copy):
            for n, operand in enumerate(inner.operands):
                if operand is found.accumulator:
                    inner.operands[n] = accumulator
        outer = new_loop(self.loop, 0, target.trip_count)
        body = ops[target]
        assert isinstance(body, loop.ForOp)
        block = body.parent_block()
        assert block is not None
        final_load = ops[found.final_load]
        assert isinstance(final_load, memref.LoadOp)
        indices = [outer.induction_var, *(values.get(index, index) for index in found.output.indices)]
        store = memref.StoreOp.get(final_load.res, partial, indices)
        block.insert_op_after(store, final_load)
        _erase_after(block, store.next_op)
        for other in [o for o in block.ops if isinstance(o, loop.ForOp) and o is not body]:
            _erase_nest(other)
        builder = Builder(InsertPoint.before(body))
        start = build_form(builder, {outer.induction_var: target.step.value.data, None: target.lower.value.data})
        start.name_hint = f"{self.loop}_start"
        body.induction_var.replace_all_uses_with(start)
        for inner in list(body.body.block.ops):
            inner.detach()
            block.insert_op_before(inner, body)
        body.detach()
        body.erase()
        for spatial in found.spatial:
            copied = ops[spatial]
            assert isinstance(copied, loop.ForOp)
            copied.loop_name = StringAttr(f"{spatial.loop_name.data}_rf")
            copied.induction_var.name_hint = copied.loop_name.data
        outer.body.block.add_op(copy)
        parent = found.outermost.parent_block()
        assert parent is not None
        parent.insert_op_before(outer, found.outermost)

    def combine(self, target: loop.ForOp, found: Reduction, partial: SSAValue) -> None:
        """`target` becomes `<loop>_r`: `acc = op(acc, partial[<loop>_r, output index])` over the partials."""
        combine = new_loop(f"{self.loop}_r", 0, target.trip_count)
        builder = Builder(InsertPoint.at_end(combine.body.block))
        value = builder.insert(memref.LoadOp.get(partial, [combine.induction_var, *found.output.indices])).res
        current = builder.insert(memref.LoadOp.get(found.accumulator, [])).res
        update = clone_op(found.update, {})
        for n, operand in enumerate(found.update.operands):
            update.operands[n] = current if operand is found.update_load.res else value
        builder.insert(update)
        builder.insert(memref.StoreOp.get(update.results[0], found.accumulator, []))
        block = target.parent_block()
        assert block is not None
        block.insert_op_before(combine, target)
        _erase_nest(target)


def _outermost(target: loop.ForOp) -> loop.ForOp:
    """The outermost loop around `target` (itself if none)."""
    current = target
    while isinstance(current.parent_op(), loop.ForOp):
        current = current.parent_op()  # type: ignore[assignment]
    return current


def _erase_nest(op: Operation) -> None:
    op.detach()
    op.erase()


def _erase_after(block: Block, first: Operation | None) -> None:
    """Erase the ops of `block` from `first` on that store or hold loops, and then those left without uses."""
    ops = []
    while first is not None:
        ops.append(first)
        first = first.next_op
    for op in reversed(ops):
        if op.regions or isinstance(op, memref.StoreOp) or not any(result.uses for result in op.results):
            _erase_nest(op)
