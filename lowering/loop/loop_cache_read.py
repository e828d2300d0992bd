"""`loop-cache-read`: copy what one iteration of a loop reads of an operand into a local buffer first (TVM
`cache_read`, BLIS's packing of A).

`loop-cache-read{kernel=matmul_0 loop=i_o_o operand=0}` takes the reads of the kernel's parameter `operand` inside
loop `i_o_o` (one index expression, affine in the loop indices), and gives the buffer one dimension per loop inside
`i_o_o` that the index uses, in nest order, outermost first, each as long as its loop's trip count. A copy nest at
the start of each iteration (loops `<loop>_rd<d>`, unrolled where their loop is) fills the buffer; the reads then
index it by their loops' iteration numbers. The buffer's layout is thus the order in which the nest walks the
operand: for a GEMM tile loop `i_o_i` (rows by 6) over `k_i` over the unrolled rows `i_i`, the `30 x 1024` block of
A that a row block reads becomes `5 x 1024 x 6` panels that the micro-kernel streams front to back, instead of six
rows 4 KB apart:

    loop.for "i_o_o" %i_o_o = 0 to 1020 step 30 parallel {
      loop.for "j_o" ... { loop.for "i_o_i" %i_o_i = 0 to 30 step 6 serial { loop.for "k_i" ... {
        loop.for "i_i" ... unroll { ... %a = memref.load %in0[%row, %k_i] ... } } } }
    }
    // becomes
    %cache = loop.alloc "local" : memref<5x1024x6xf32>
    loop.for "i_o_o" %i_o_o = 0 to 1020 step 30 parallel {
      loop.for "i_o_o_rd0" ... { loop.for "i_o_o_rd1" ... { loop.for "i_o_o_rd2" ... unroll {
        cache[rd0, rd1, rd2] = in0[%i_o_o + 6 * rd0 + rd2, rd1] } } }
      loop.for "j_o" ... { ... %a = memref.load %cache[%i_o_i / 6, %k_i, %i_i] ... }
    }

The operand must not be written by the kernel, no loop inside `loop` that its index uses may run a run-time number
of iterations (`to %n`: the buffer's size would not be static), and the buffer (on the stack of the thread running
the iteration) holds at most `CACHE_READ_MAX_BYTES`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import (
    Affine,
    build_form,
    check_new_names,
    enclosing_loops,
    find_kernel,
    find_loop,
    index_constant,
    loop_of,
    new_loop,
    sparse_form,
    walk_ops,
)

CACHE_READ_MAX_BYTES = 1 << 20
"""Largest local buffer `loop-cache-read` makes (it lives on a worker thread's stack)."""


@dataclass(frozen=True)
class LoopCacheReadPass(ModulePass):
    """Copy the part of parameter `operand` that one iteration of `loop` reads into a local buffer, and read that."""

    name = "loop-cache-read"

    kernel: str
    loop: str
    operand: int

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(
            f"{self.name}: operand {self.operand} in loop '{self.loop}' of kernel '{self.kernel}': {reason}"
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        params = kernel.body.block.args
        if not 0 <= self.operand < len(params):
            raise self.fail(f"no such parameter (the kernel has parameters 0..{len(params) - 1})")
        source = params[self.operand]
        source_type = source.type
        assert isinstance(source_type, MemRefType)
        if any(isinstance(use.operation, memref.StoreOp) for use in source.uses):
            raise self.fail("the kernel writes it: a copy would go stale")
        loads = [a for a in walk_ops(target) if isinstance(a, memref.LoadOp) and a.memref is source]
        if not loads:
            raise self.fail("the loop does not read it")
        forms = [self.index_forms(load) for load in loads]
        if any(form != forms[0] for form in forms[1:]):
            raise self.fail("the loop reads it at more than one index expression")
        inner = self.inner_loops(loads[0], target, forms[0])
        if dynamic := [lp.loop_name.data for lp in inner if lp.is_dynamic]:
            raise self.fail(
                f"loop '{dynamic[0]}' inside it runs a run-time number of iterations: the copy would have no "
                "static size"
            )
        shape = [lp.trip_count for lp in inner]
        size = math.prod(shape) * source_type.element_type.bitwidth // 8  # type: ignore[union-attr]
        if size > CACHE_READ_MAX_BYTES:
            raise self.fail(f"the copy would take {size} bytes, more than {CACHE_READ_MAX_BYTES}")
        check_new_names(kernel, self.name, [f"{self.loop}_rd{d}" for d in range(len(inner))])

        cache = loop.AllocOp(MemRefType(source_type.element_type, shape), "local")
        cache.result.name_hint = "cache"
        kernel.body.block.insert_op_before(cache, kernel.body.block.first_op)  # type: ignore[arg-type]
        self.copy_nest(target, inner, forms[0], source, cache.result)
        for load in loads:
            builder = Builder(InsertPoint.before(load))
            indices = [_iteration_number(builder, lp) for lp in inner]
            new_load = builder.insert(memref.LoadOp.get(cache.result, indices))
            new_load.res.name_hint = load.res.name_hint
            load.res.replace_all_uses_with(new_load.res)
            load.detach()
            load.erase()

    def index_forms(self, load: memref.LoadOp) -> list[Affine]:
        forms = [sparse_form(index) for index in load.indices]
        if any(form is None for form in forms):
            raise self.fail("an index of its read is not affine in the loop indices")
        return forms  # type: ignore[return-value]

    def inner_loops(self, load: memref.LoadOp, target: loop.ForOp, forms: list[Affine]) -> list[loop.ForOp]:
        """The loops inside `target` that the read's indices use, outermost first."""
        used = {value for form in forms for value in form if value is not None}
        return [lp for lp in reversed(enclosing_loops(load, target)) if lp is not target and lp.induction_var in used]

    def copy_nest(
        self, target: loop.ForOp, inner: list[loop.ForOp], forms: list[Affine], source: SSAValue, cache: SSAValue
    ) -> None:
        """At the start of `target`'s body: `cache[n0, n1, ...] = source[index with each inner loop at iteration n]`."""
        loops = [
            new_loop(f"{self.loop}_rd{d}", 0, lp.trip_count, 1, "unroll" if lp.kind.data == "unroll" else "serial")
            for d, lp in enumerate(inner)
        ]
        body = target.body.block
        if not loops:
            builder = Builder(InsertPoint.at_start(body))
        else:
            body.insert_op_before(loops[0], body.first_op)  # type: ignore[arg-type]
            for outer, nested in itertools.pairwise(loops):
                outer.body.block.add_op(nested)
            builder = Builder(InsertPoint.at_end(loops[-1].body.block))
        numbers = {lp.induction_var: copy.induction_var for lp, copy in zip(inner, loops)}
        indices = [build_form(builder, _substitute(form, numbers)) for form in forms]
        value = builder.insert(memref.LoadOp.get(source, indices)).res
        builder.insert(memref.StoreOp.get(value, cache, [copy.induction_var for copy in loops]))


def _substitute(form: Affine, numbers: dict[SSAValue, SSAValue]) -> Affine:
    """`form` with each inner loop's induction variable written as `lower + step * n` of its copy loop's `n`."""
    result: Affine = {}
    for value, coeff in form.items():
        if value not in numbers:
            result[value] = result.get(value, 0) + coeff
            continue
        lp = loop_of(value)
        assert lp is not None
        result[None] = result.get(None, 0) + coeff * lp.lower.value.data
        result[numbers[value]] = coeff * lp.step.value.data
    return result


def _iteration_number(builder: Builder, lp: loop.ForOp) -> SSAValue:
    """`(iv - lower) / step` of loop `lp` at `builder`."""
    lower, step = lp.lower.value.data, lp.step.value.data
    number = lp.induction_var
    if lower:
        number = builder.insert(arith.AddiOp(number, index_constant(builder, -lower))).result
    if step != 1:
        number = builder.insert(arith.DivUIOp(number, index_constant(builder, step))).result
    return number
