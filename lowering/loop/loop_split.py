"""`loop-split`: split one loop into an outer and an inner loop (TVM `split`), peeling off a tail if needed.

`loop-split{kernel=matmul_0 loop=j factor=8}` turns loop `j` into `j_o` (step multiplied by 8, same kind) around
`j_i` (8 iterations, serial); the old index is `j_o + j_i`:

    loop.for "j" %j = 0 to 64 step 1 serial { body(%j) }
    // becomes
    loop.for "j_o" %j_o = 0 to 64 step 8 serial {
      loop.for "j_i" %j_i = 0 to 8 step 1 serial {
        %j = arith.addi %j_o, %j_i : index
        body(%j)
      }
    }

A factor that does not divide the trip count is accepted, as TVM's split accepts it, but with the tail peeled off
instead of guarded: `j_o`/`j_i` cover the largest multiple of the factor, and a copy of the loop named `j_t` runs
the remaining iterations right after them. The main nest stays perfect and its inner loop keeps a constant trip
count (what `loop-vectorize`, `loop-unroll`, `loop-reorder` and `loop-tile` need); the tail stays as it was, a scalar
loop the later primitives do not touch (its own loops are renamed `<name>_in_j_t` so that names stay unique). With
10 iterations and factor 4:

    loop.for "j" %j = 0 to 10 step 1 serial { loop.for "k" ... { body(%j) } }
    // becomes
    loop.for "j_o" %j_o = 0 to 8 step 4 serial {
      loop.for "j_i" %j_i = 0 to 4 step 1 serial {
        %j = arith.addi %j_o, %j_i : index
        loop.for "k" ... { body(%j) }
      }
    }
    loop.for "j_t" %j_t = 8 to 10 step 1 serial { loop.for "k_in_j_t" ... { body(%j_t) } }

A factor larger than the trip count (no main nest at all) is refused.

A loop with a run-time upper bound `%n` splits the same way around a run-time main part: `j_o` runs to
`%main = n - n % factor` (a run-time trip count of n / factor), `j_i` keeps its static `factor` iterations, and the
remainder `j_t` runs from 0 to `n % factor` (lower bounds stay static), its body indexing `%main + r`:

    loop.for "j" %j = 0 to %n step 1 serial { body(%j) }
    // becomes
    %rem = arith.remui %n, %c4 : index
    %main = arith.subi %n, %rem : index
    loop.for "j_o" %j_o = 0 to %main step 4 serial {
      loop.for "j_i" %j_i = 0 to 4 step 1 serial {
        %j = arith.addi %j_o, %j_i : index
        body(%j)
      }
    }
    loop.for "j_t" %j_t = 0 to %rem step 1 serial {
      %j = arith.addi %main, %j_t : index
      body(%j)
    }

With a lower bound L or a step s other than 0 and 1, the trip count is `t = (n - L + s - 1) / s` (signed: none if
n <= L), `%main = L + (t - t % factor) * s` and the remainder's index `%main + r * s`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.built_ops import addi, muli
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import check_new_names, find_kernel, find_loop, index_constant, loops_of, new_loop


def split_loop(kernel: func.FuncOp, target: loop.ForOp, factor: int, names: tuple[str, str], pass_name: str):
    """Split `target` by `factor` into loops named `names`, peeling a tail `<loop>_t` off after them if `factor`
    does not divide the trip count; returns (outer, inner)."""
    name = target.loop_name.data
    if target.is_dynamic:
        return _split_dynamic(kernel, target, factor, names, pass_name)
    trip = target.trip_count
    if factor < 1 or factor > trip:
        raise DiagnosticException(
            f"{pass_name}: factor {factor} is not between 1 and the {trip} iterations of loop '{name}' "
            f"in kernel '{kernel.sym_name.data}'"
        )
    check_new_names(kernel, pass_name, names)
    lower, step = target.lower.value.data, target.step.value.data
    main_upper = lower + (trip - trip % factor) * step
    if trip % factor:
        _peel_tail(kernel, target, main_upper, pass_name)
    return _split_main(target, factor, names, main_upper)


def _split_main(target: loop.ForOp, factor: int, names: tuple[str, str], main_upper: int | SSAValue):
    """Replace `target` by `names[0]` up to `main_upper` (step x factor) around `names[1]` (`factor` iterations)."""
    lower, step = target.lower.value.data, target.step.value.data
    outer = new_loop(names[0], lower, main_upper, step * factor, target.kind.data)
    inner = new_loop(names[1], 0, step * factor, step)
    outer.body.block.add_op(inner)
    index = Builder(InsertPoint.at_start(inner.body.block)).insert(addi(outer.induction_var, inner.induction_var))
    index.result.name_hint = target.loop_name.data
    old_body = target.body.block
    old_body.args[0].replace_all_uses_with(index.result)
    for op in list(old_body.ops):
        op.detach()
        inner.body.block.add_op(op)
    Rewriter.replace_op(target, outer)
    return outer, inner


def _split_dynamic(kernel: func.FuncOp, target: loop.ForOp, factor: int, names: tuple[str, str], pass_name: str):
    """Split a loop with a run-time upper bound: the main nest to `n - n % factor`, then the remainder loop from 0
    (see the module docstring); returns (outer, inner)."""
    name = target.loop_name.data
    if factor < 1:
        raise DiagnosticException(
            f"{pass_name}: factor {factor} of loop '{name}' in kernel '{kernel.sym_name.data}' must be positive"
        )
    check_new_names(kernel, pass_name, names)
    lower, step = target.lower.value.data, target.step.value.data
    upper = target.dynamic_upper
    assert upper is not None
    builder = Builder(InsertPoint.before(target))
    if (lower, step) == (0, 1):
        remainder = builder.insert(arith.RemUIOp(upper, index_constant(builder, factor))).result
        main_upper = builder.insert(arith.SubiOp(upper, remainder)).result
    else:
        span = builder.insert(arith.SubiOp(upper, index_constant(builder, lower - step + 1))).result
        trip = builder.insert(arith.DivSIOp(span, index_constant(builder, step))).result
        remainder = builder.insert(arith.RemSIOp(trip, index_constant(builder, factor))).result
        main_trip = builder.insert(arith.SubiOp(trip, remainder)).result
        main_span = builder.insert(muli(main_trip, index_constant(builder, step))).result
        main_upper = builder.insert(addi(main_span, index_constant(builder, lower))).result
    remainder.name_hint, main_upper.name_hint = f"{name}_rem", f"{name}_main"
    _peel_remainder(kernel, target, main_upper, remainder, pass_name)
    return _split_main(target, factor, names, main_upper)


def _peel_remainder(
    kernel: func.FuncOp, target: loop.ForOp, main_upper: SSAValue, remainder: SSAValue, pass_name: str
) -> None:
    """Insert after `target` a copy of it named `<loop>_t` over `0 to remainder`, its body indexing
    `main_upper + r * step`."""
    name = target.loop_name.data
    copy = clone_op(target, {})
    tail = new_loop(tail_name(name), 0, remainder)
    _rename_tail_loops(kernel, copy, name, pass_name)
    builder = Builder(InsertPoint.at_start(tail.body.block))
    offset = tail.induction_var
    if (step := target.step.value.data) != 1:
        offset = builder.insert(muli(offset, index_constant(builder, step))).result
    index = builder.insert(addi(main_upper, offset)).result
    index.name_hint = name
    copy.induction_var.replace_all_uses_with(index)
    for op in list(copy.body.block.ops):
        op.detach()
        tail.body.block.add_op(op)
    copy.erase()
    Rewriter.insert_op(tail, InsertPoint.after(target))


def tail_name(name: str) -> str:
    """The tail loop that splitting loop `name` by a factor that does not divide it peels off."""
    return f"{name}_t"


def in_tail(inner: str, name: str) -> str:
    """What loop `inner`, nested in loop `name`, is called inside the tail that splitting `name` peels off."""
    return f"{inner}_in_{tail_name(name)}"


def _peel_tail(kernel: func.FuncOp, target: loop.ForOp, start: int, pass_name: str) -> None:
    """Insert after `target` a copy of it named `<loop>_t` over the iterations from `start` on."""
    tail = clone_op(target, {})
    _rename_tail_loops(kernel, tail, target.loop_name.data, pass_name)
    tail.loop_name = StringAttr(tail_name(target.loop_name.data))
    tail.lower = IntegerAttr(start, i64)
    tail.body.block.args[0].name_hint = tail.loop_name.data
    Rewriter.insert_op(tail, InsertPoint.after(target))


def _rename_tail_loops(kernel: func.FuncOp, tail: loop.ForOp, name: str, pass_name: str) -> None:
    """Rename the loops nested in `tail`, a copy of loop `name`, `<inner>_in_<name>_t`, checking that these names
    and the tail's are new."""
    renamed = {lp: in_tail(lp.loop_name.data, name) for lp in loops_of(tail) if lp is not tail}
    check_new_names(kernel, pass_name, [tail_name(name), *renamed.values()])
    for inner, inner_name in renamed.items():
        inner.loop_name = StringAttr(inner_name)
        inner.induction_var.name_hint = inner_name


@dataclass(frozen=True)
class LoopSplitPass(ModulePass):
    """Split loop `loop` of kernel `kernel` by `factor` into `<loop>_o` and `<loop>_i` (and a tail `<loop>_t`)."""

    name = "loop-split"

    kernel: str
    loop: str
    factor: int

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        split_loop(kernel, target, self.factor, (f"{self.loop}_o", f"{self.loop}_i"), self.name)
