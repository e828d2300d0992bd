"""`loop-outline-parallel`: run each outermost `parallel` loop on the thread pool, through `minimlc_parallel_for`.

Runs before `loop-to-scf`. The body of an outermost parallel loop (one not nested in another parallel loop) moves
into a private function `@<function>_<loop>_body(%ctx: !llvm.ptr, %task: i64)` whose induction variable is
`lower + task * step`. Values the body captures from outside (buffers, scalars, outer induction variables) travel in
`ctx`, a struct on the caller's stack (allocated in its entry block); captured constants are cloned instead, and so
are `loop.alloc "local"` scratch buffers used only inside the loop (a register tile, an accumulator): each task gets
its own, instead of every thread sharing the caller's. The loop
becomes a call `minimlc_parallel_for(%pool, @body, %ctx, trip_count)`, implemented by `runtime/threadpool.py` and
bound at JIT time. A band of perfectly nested parallel loops (each the only op of its parent's body: channel panels
then rows) is collapsed into one task range, TVM's `fuse` before `parallel`: the task function gets the product of
their trip counts as tasks and decodes each induction variable from the task, innermost fastest (`task % trips`,
`task / trips`). Other nested parallel loops stay in the body and run serially; loop weights and precomputed buffers
used in the body are hoisted in front of the loop, so that `loop-to-scf` still binds them in the caller.

The pool is a run-time value: every function that needs it (it has a parallel loop, or calls such a function) gets
a trailing `!llvm.ptr` parameter, recorded as its index in `minimlc.pool` (the ABI for outside callers: the runtime
passes its pool there), and its callers pass theirs along, up to the entries. A function referred to other than by
`func.call` (a load-time `loop.precompute` kernel), or called by such a function, keeps its signature, and its
parallel loops run serially.

    loop.for "i" %i = 0 to 64 step 8 parallel { ... %x ... }
    // becomes, with %ctx = llvm.alloca 1 x !llvm.struct<(!llvm.ptr)> in the entry block
    %c = llvm.insertvalue %x_ptr, %undef[0] : !llvm.struct<(!llvm.ptr)>
    llvm.store %c, %ctx : !llvm.struct<(!llvm.ptr)>, !llvm.ptr
    %body = llvm.mlir.addressof @kernel_i_body : !llvm.ptr
    func.call @minimlc_parallel_for(%pool, %body, %ctx, %c8) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()

    loop.for "f_o" %f_o = 0 to 64 step 32 parallel { loop.for "h" %h = 0 to 56 step 1 parallel { ... } }
    // becomes one call with 2 x 56 tasks; in the body %f_o = (task / 56) * 32 and %h = task % 56

A band's outermost loop may have a run-time upper bound `%n` (inner members must be static: the band stops before a
dynamic one, which runs serially in the body). The task count is then computed at the call,
`max(0, ceil((n - lower) / step))` times the inner trip counts, and the pool chunks it as any other count:

    loop.for "i" %i = 0 to %n step 1 parallel { ... }
    // becomes
    %tasks = arith.index_cast %n : index to i64
    func.call @minimlc_parallel_for(%pool, %body, %ctx, %tasks) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolOpInterface, SymbolTable

from minimlc.dialects import loop
from minimlc.lowering.abi import PARALLEL_FOR, POOL_ATTR
from minimlc.lowering.generic import built_ops
from minimlc.lowering.loop.analysis import band_tasks, nested_ops, parallel_band, walk_ops
from minimlc.lowering.loop.extents import extents_of, needs_linear_index
from minimlc.lowering.strategy.data_layout import llvm_type

_PTR = llvm.LLVMPointerType()
_CONTEXT_ALIGNMENT = 32
"""Enough for any field, AVX vectors included."""


def outermost_parallel_loops(root: Operation) -> list[loop.ForOp]:
    """The parallel loops under `root` that are not inside another parallel loop, in program order."""
    found: list[loop.ForOp] = []
    for region in root.regions:
        for block in region.blocks:
            for op in block.ops:
                if isinstance(op, loop.ForOp) and op.kind.data == "parallel":
                    found.append(op)
                else:
                    found.extend(outermost_parallel_loops(op))
    return found


def _pooled_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions that get a pool parameter: those that can take one and run or call parallel loops."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    callers: dict[str, set[str]] = {name: set() for name in functions}
    referenced: set[str] = set()
    for op in walk_ops(module):
        if isinstance(op, func.CallOp):
            if (caller := _enclosing_function(op)) is not None and op.callee.string_value() in callers:
                callers[op.callee.string_value()].add(caller.sym_name.data)
            continue
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, SymbolRefAttr):
                referenced.add(attr.string_value())
    can_take = set(functions) - referenced
    while excluded := {name for name in can_take if not callers[name] <= can_take}:
        can_take -= excluded
    needs = {name for name in can_take if outermost_parallel_loops(functions[name])}
    while grown := {caller for name in needs for caller in callers[name]} - needs:
        needs |= grown
    return [function for name, function in functions.items() if name in needs]


def _enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _pool_parameter(function: func.FuncOp) -> tuple[SSAValue, bool]:
    """The function's pool parameter, and whether it was just added."""
    entry = function.body.block
    if isinstance(index := function.attributes.get(POOL_ATTR), IntegerAttr):
        return entry.args[index.value.data], False
    pool = entry.insert_arg(_PTR, len(entry.args))
    pool.name_hint = "pool"
    function.function_type = func.FunctionType.from_lists(
        [arg.type for arg in entry.args], function.function_type.outputs.data
    )
    if function.arg_attrs is not None:
        function.arg_attrs = ArrayAttr([*function.arg_attrs.data, DictionaryAttr({})])
    function.attributes[POOL_ATTR] = IntegerAttr(len(entry.args) - 1, i64)
    return pool, True


def _pass_pool_to_callees(function: func.FuncOp, pools: dict[str, SSAValue], added: set[str]) -> None:
    """Append the caller's pool to every call of a function that just got a pool parameter."""
    for call in nested_ops(function, func.CallOp):
        if call.callee.string_value() in added:
            new_call = func.CallOp(call.callee, [*call.arguments, pools[function.sym_name.data]], call.res.types)
            Rewriter.replace_op(call, new_call)


def _context_type(packed: list[SSAValue]) -> llvm.LLVMStructType:
    """The C struct that carries the captured values: memrefs as pointers, indices as i64, scalars as they are."""
    return llvm.LLVMStructType.from_type_list([llvm_type(value.type) for value in packed])


@functools.cache
def _field(position: int) -> DenseArrayBase:
    """`[position]`, a field of the context struct (attributes are immutable: one per position serves every body)."""
    return DenseArrayBase.from_list(i64, [position])


def _captured_values(ops: list[Operation], inside: set[Operation]) -> list[SSAValue]:
    """Values used in the loop's body but defined outside it, in order of first use (not its own run-time bound:
    the caller counts the tasks with it); `ops` is `walk_ops` of the loop, `inside` their set (it answers
    `is_ancestor`)."""
    captured: dict[SSAValue, None] = {}
    for op in ops[1:]:
        for operand in op.operands:
            owner = operand.owner
            defining = owner if isinstance(owner, Operation) else owner.parent_op()
            if defining is not None and defining not in inside:
                captured[operand] = None
    return list(captured)


def _hoist_bindings(loop_op: loop.ForOp) -> None:
    """Move weight handles and precomputed buffers out of the loop: `loop-to-scf` binds them per function."""
    for op in nested_ops(loop_op, (loop.WeightOp, loop.PrecomputeOp)):
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(loop_op))


def _is_private(value: SSAValue, inside: set[Operation]) -> bool:
    """Whether `value` is a local scratch buffer that only the loop of ops `inside` uses (so each task may have its
    own)."""
    owner = value.owner
    return (
        isinstance(owner, loop.AllocOp)
        and owner.scope.data == "local"
        and all(use.operation in inside for use in value.uses)
    )


def _body_function(
    band: list[loop.ForOp],
    name: str,
    packed: list[SSAValue],
    cloned: list[Operation],
    extents: dict[SSAValue, list[SSAValue]],
) -> func.FuncOp:
    """`@name(%ctx, %task)`: clones `cloned` (constants, private buffers), unpacks the captured values, gives each
    buffer of `extents` its unpacked extents (`loop.extents`) and runs the band's iteration number `task` (each
    loop's `lower + index * step`, innermost index fastest)."""
    entry = Block(arg_types=[_PTR, i64])
    ctx, task = entry.args
    ctx.name_hint, task.name_hint = "ctx", "task"
    replacements: dict[SSAValue, SSAValue] = {}
    for op in cloned:
        clone = op.clone()
        entry.add_op(clone)
        replacements[op.results[0]] = clone.results[0]
    if packed:
        load = llvm.LoadOp(ctx, _context_type(packed))
        entry.add_op(load)
        context = load.dereferenced_value
    for field, value in enumerate(packed):
        extract = built_ops.extract_value(_field(field), context, llvm_type(value.type))
        entry.add_op(extract)
        unpacked = extract.res
        if unpacked.type != value.type:
            cast = built_ops.cast(unpacked, value.type)
            entry.add_op(cast)
            unpacked = cast.results[0]
        unpacked.name_hint = value.name_hint
        replacements[value] = unpacked
    for buffer, sizes in extents.items():
        with_extents = loop.ExtentsOp(replacements[buffer], [replacements[size] for size in sizes])
        entry.add_op(with_extents)
        with_extents.result.name_hint = buffer.name_hint
        replacements[buffer] = with_extents.result
    cast = arith.IndexCastOp(task, IndexType())
    entry.add_op(cast)
    remaining: SSAValue = cast.result
    for position, member in reversed(list(enumerate(band))):
        index = remaining
        if position > 0:
            trips = arith.ConstantOp(IntegerAttr(member.trip_count, IndexType()))
            index_op, quotient = arith.RemUIOp(remaining, trips), arith.DivUIOp(remaining, trips)
            entry.add_ops([trips, index_op, quotient])
            index, remaining = index_op.result, quotient.result
        member.body.block.args[0].replace_all_uses_with(_induction_variable(entry, index, member))
    for op in list(band[-1].body.block.ops):
        op.detach()
        entry.add_op(op)
    for value, unpacked in replacements.items():
        value.replace_uses_with_if(unpacked, lambda use: entry.is_ancestor(use.operation))
    entry.add_op(func.ReturnOp())
    return func.FuncOp(name, ([_PTR, i64], []), Region(entry), visibility="private")


def _induction_variable(entry: Block, index: SSAValue, loop_op: loop.ForOp) -> SSAValue:
    """`lower + index * step`, computed by ops appended to `entry`."""
    value = index
    lower, step = loop_op.lower.value.data, loop_op.step.value.data
    if step != 1:
        step_op = arith.ConstantOp(IntegerAttr(step, IndexType()))
        scaled = arith.MuliOp(value, step_op)
        entry.add_ops([step_op, scaled])
        value = scaled.result
    if lower != 0:
        lower_op = arith.ConstantOp(IntegerAttr(lower, IndexType()))
        shifted = arith.AddiOp(value, lower_op)
        entry.add_ops([lower_op, shifted])
        value = shifted.result
    value.name_hint = loop_op.induction_var.name_hint
    return value


def _outline(symbols: set[str], function: func.FuncOp, loop_op: loop.ForOp, pool: SSAValue) -> None:
    """Replace `loop_op` by a `minimlc_parallel_for` call on an outlined body function, named apart from
    `symbols` (the module's symbols, which it joins)."""
    _hoist_bindings(loop_op)
    ops = walk_ops(loop_op)
    inside = set(ops)
    captured = _captured_values(ops, inside)
    private = [value for value in captured if _is_private(value, inside)]
    cloned = [value.owner for value in captured if isinstance(value.owner, arith.ConstantOp) or value in private]
    packed = [value for value in captured if not isinstance(value.owner, arith.ConstantOp) and value not in private]
    # A buffer with a run-time inner extent travels with its extents and gets a `loop.extents` in the body, where
    # loop-to-scf reads them.
    extents = {
        value: [size for size in extents_of(value) if isinstance(size, SSAValue)]
        for value in packed
        if needs_linear_index(value)
    }
    for sizes in extents.values():
        packed += [size for size in sizes if size not in packed]
    name = _unique_symbol(symbols, f"{function.sym_name.data}_{loop_op.loop_name.data}_body")
    band = parallel_band(loop_op)
    body = _body_function(band, name, packed, cloned, extents)  # type: ignore[arg-type]
    Rewriter.insert_op(body, InsertPoint.after(function))
    call_site = InsertPoint.before(loop_op)
    ctx = _pack_context(function, packed, call_site)
    address = llvm.AddressOfOp(name, _PTR)
    tasks = _run_time_tasks(band) if band[0].is_dynamic else [llvm.ConstantOp(IntegerAttr(band_tasks(band), i64), i64)]
    call = func.CallOp(PARALLEL_FOR, [pool, address, ctx, tasks[-1].results[0]], [])
    Rewriter.insert_op([address, *tasks, call], call_site)
    loop_op.detach()
    loop_op.erase()
    for value in private:
        Rewriter.erase_op(value.owner)  # type: ignore[arg-type]


def _run_time_tasks(band: list[loop.ForOp]) -> list[Operation]:
    """The ops computing the tasks of a band whose outermost loop has a run-time upper bound `%n` (the inner ones are
    static): `max(0, ceil((n - lower) / step)) * (inner trip counts)`, as an `i64`; the last op yields it."""
    first = band[0]
    assert first.dynamic_upper is not None
    lower, step = first.lower.value.data, first.step.value.data
    ops: list[Operation] = []

    def constant(value: int) -> SSAValue:
        ops.append(arith.ConstantOp(IntegerAttr(value, IndexType())))
        return ops[-1].results[0]

    count: SSAValue = first.dynamic_upper
    if (lower, step) != (0, 1):
        ops.append(arith.SubiOp(count, constant(lower - step + 1)))
        ops.append(arith.DivSIOp(ops[-1].results[0], constant(step)))
        ops.append(arith.MaxSIOp(ops[-1].results[0], constant(0)))
        count = ops[-1].results[0]
    if (inner := band_tasks(band[1:])) != 1:
        ops.append(arith.MuliOp(count, constant(inner)))
        count = ops[-1].results[0]
    ops.append(arith.IndexCastOp(count, i64))
    ops[-1].results[0].name_hint = "tasks"
    return ops


def _pack_context(function: func.FuncOp, packed: list[SSAValue], call_site: InsertPoint) -> SSAValue:
    """A pointer to the captured values, stored into a stack struct at `call_site` (null if there are none)."""
    if not packed:
        null = llvm.ZeroOp(result_types=[_PTR])
        null.res.name_hint = "ctx"
        Rewriter.insert_op(null, call_site)
        return null.res
    context_type = _context_type(packed)
    count = llvm.ConstantOp(IntegerAttr(1, i64), i64)
    ctx = llvm.AllocaOp(count, context_type, alignment=_CONTEXT_ALIGNMENT)
    ctx.res.name_hint = "ctx"
    Rewriter.insert_op([count, ctx], InsertPoint.at_start(function.body.block))
    undef = llvm.UndefOp(context_type)
    ops: list[Operation] = [undef]
    context: SSAValue = undef.res
    for field, value in enumerate(packed):
        if llvm_type(value.type) != value.type:
            cast = built_ops.cast(value, llvm_type(value.type))
            ops.append(cast)
            value = cast.results[0]
        insert = built_ops.insert_value(_field(field), context, value)
        ops.append(insert)
        context = insert.res
    ops.append(llvm.StoreOp(context, ctx.res))
    Rewriter.insert_op(ops, call_site)
    return ctx.res


def _unique_symbol(symbols: set[str], base: str) -> str:
    """`base`, or `base_1`, `base_2`, ... if `symbols` has it; added to `symbols`."""
    name, suffix = base, 0
    while name in symbols:
        suffix += 1
        name = f"{base}_{suffix}"
    symbols.add(name)
    return name


def _symbols(module: ModuleOp) -> set[str]:
    """The names of the module's symbols, as `SymbolTable.lookup_symbol` finds them (one walk of its ops, where a
    lookup per outlined loop walked them all each time)."""
    names: set[str] = set()
    for op in module.ops:
        if (interface := op.get_trait(SymbolOpInterface)) is not None and (name := interface.get_sym_attr_name(op)):
            names.add(name.data)
    return names


def _declare_parallel_for(module: ModuleOp) -> None:
    if SymbolTable.lookup_symbol(module, PARALLEL_FOR) is None:
        declaration = func.FuncOp(PARALLEL_FOR, ([_PTR, _PTR, _PTR, i64], []), Region(), visibility="private")
        module.body.block.add_op(declaration)


@dataclass(frozen=True)
class LoopOutlineParallelPass(ModulePass):
    """Outline outermost parallel loops into task functions run by `minimlc_parallel_for` on the entry's pool."""

    name = "loop-outline-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = _pooled_functions(op)
        if not functions:
            return
        _declare_parallel_for(op)
        pools: dict[str, SSAValue] = {}
        added: set[str] = set()
        for function in functions:
            pools[function.sym_name.data], is_new = _pool_parameter(function)
            if is_new:
                added.add(function.sym_name.data)
        symbols = _symbols(op)
        for function in functions:
            _pass_pool_to_callees(function, pools, added)
            for loop_op in outermost_parallel_loops(function):
                _outline(symbols, function, loop_op, pools[function.sym_name.data])
