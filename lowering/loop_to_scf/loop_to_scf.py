"""Lower the `loop` dialect to `scf`, `memref` and `func`.

- `loop.for` of kind `vectorize` -> straight-line `vector` code, of kind `unroll` -> one body copy per iteration
  (`loop/expand.py`); every other loop -> `scf.for` over index constants (`loop-outline-parallel`, which runs
  first, has turned outermost `parallel` loops into thread-pool calls; nested ones run serially); a loop with a
  run-time upper bound -> `scf.for` to that operand.
- `loop.alloc "global"` -> `memref.alloc` (with its run-time sizes), freed by `memref.dealloc` before every return
  of its function; `loop.alloc "local"` -> `memref.alloca` (LLVM promotes scalar ones to registers).
- accesses to a buffer with a `?` below its outermost dimension -> one-dimensional accesses at the row-major index
  (`linearize.py`); `loop.extents` is dropped.
- `loop.call_extern` -> the same call through a trailing `!llvm.ptr` parameter (before the weights), recorded in
  `minimlc.externs` for the runtime, which binds the registered function's address there; one more parameter, the
  run's status word (`minimlc.extern_status`), records the first call that fails.
- `loop.weight` -> a trailing buffer parameter of the enclosing function. The function records the weight names in
  parameter order in `minimlc.weights`, so the runtime knows which buffer to bind to which parameter.
- `loop.precompute` -> a further trailing parameter (after the weights), filled once at load time by a new entry
  `@<name>_init` that takes the same trailing parameters (weights, then precomputed buffers) and calls each
  precompute kernel; the function names it in `minimlc.init`.

    loop.for "i" %i = 0 to 128 step 4 serial { ... }
    // becomes
    %lb = arith.constant 0 : index  ...
    scf.for %i = %lb to %ub step %step { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.abi import ENTRY_ATTR, EXTERN_STATUS_ATTR, EXTERNS_ATTR, INIT_ATTR, WEIGHTS_ATTR, init_name
from minimlc.lowering.loop.analysis import index_constant_op, ops_by_kind
from minimlc.lowering.loop.expand import expand_loops
from minimlc.lowering.loop_to_scf.linearize import linearize_dynamic_accesses


def lower_for(op: loop.ForOp) -> None:
    """`loop.for` -> `scf.for` with constant bounds, or to its run-time upper bound operand."""
    static = (op.lower, op.step) if op.is_dynamic else (op.lower, op.upper, op.step)
    constants = [index_constant_op(attr.value.data) for attr in static]
    bounds: list[SSAValue] = [constant.result for constant in constants]
    if op.dynamic_upper is not None:
        bounds.insert(1, op.dynamic_upper)
    body = op.body.detach_block(0)
    body.add_op(scf.YieldOp.create())
    # `create`: the ops `scf.ForOp(*bounds, [], body)` and `scf.YieldOp()` build, without checking their arguments
    for_op = scf.ForOp.create(operands=bounds, regions=[Region(body)])
    Rewriter.replace_op(op, [*constants, for_op])


def lower_alloc(op: loop.AllocOp, returns: list[func.ReturnOp]) -> None:
    """`loop.alloc` -> `memref.alloca` (local) or `memref.alloc` (with the same run-time sizes) + `memref.dealloc`
    before each of `returns`, its function's (global)."""
    if op.scope.data == "local":
        memref_type = op.result.type
        Rewriter.replace_op(op, memref.AllocaOp.get(memref_type.element_type, 64, memref_type.get_shape()))
        return
    alloc = memref.AllocOp(list(op.dynamic_sizes), [], op.result.type, IntegerAttr(64, 64))
    Rewriter.replace_op(op, alloc)
    for ret in returns:
        Rewriter.insert_op(memref.DeallocOp.get(alloc), InsertPoint.before(ret))


def bind_externs_as_parameters(function: func.FuncOp, calls: list[loop.CallExternOp]) -> None:
    """Give each of `calls` (the `loop.call_extern`s of `function` without a function operand) a trailing
    `!llvm.ptr` parameter, the external function's address, and one more for the run's status word; record the calls
    in `minimlc.externs` (the runtime binds each address by name) and the status parameter in
    `minimlc.extern_status`."""
    if not calls:
        return
    entry = function.body.block
    records: list[Attribute] = []
    for call in calls:
        param = entry.insert_arg(llvm.LLVMPointerType(), len(entry.args))
        param.name_hint = "extern"
        records.append(
            DictionaryAttr(
                {
                    "callee": call.callee,
                    "slot": IntegerAttr(len(entry.args) - 1, i64),
                    "buffers": ArrayAttr([buffer.type for buffer in call.buffers]),
                    "num_outputs": call.num_outputs,
                }
            )
        )
    status = entry.insert_arg(llvm.LLVMPointerType(), len(entry.args))
    status.name_hint = "extern_status"
    for call, param in zip(calls, entry.args[len(entry.args) - 1 - len(calls) : -1]):
        outputs = call.num_outputs.value.data
        Rewriter.replace_op(call, loop.CallExternOp(call.callee.data, list(call.buffers), outputs, param, status))
    function.function_type = func.FunctionType.from_lists(
        [arg.type for arg in entry.args], function.function_type.outputs.data
    )
    if function.arg_attrs is not None:
        function.arg_attrs = ArrayAttr([*function.arg_attrs.data, *[DictionaryAttr({})] * (len(calls) + 1)])
    function.attributes[EXTERNS_ATTR] = ArrayAttr(records)
    function.attributes[EXTERN_STATUS_ATTR] = IntegerAttr(len(entry.args) - 1, i64)


def bind_weights_as_parameters(function: func.FuncOp, weights: list[loop.WeightOp]) -> None:
    """Turn each distinct one of `weights`, the `loop.weight`s of `function`, into a trailing parameter and record the
    names."""
    entry = function.body.block
    names: list[str] = []
    params: dict[str, BlockArgument] = {}
    for weight in weights:
        name = weight.weight_name.data
        if name not in params:
            param = entry.insert_arg(weight.result.type, len(entry.args))
            param.name_hint = weight.result.name_hint
            params[name] = param
            names.append(name)
        weight.result.replace_all_uses_with(params[name])
        weight.detach()
        weight.erase()
    if not names:
        return
    function.function_type = func.FunctionType.from_lists(
        [arg.type for arg in entry.args], function.function_type.outputs.data
    )
    if function.arg_attrs is not None:
        padding = [DictionaryAttr({})] * len(names)
        function.arg_attrs = ArrayAttr([*function.arg_attrs.data, *padding])
    function.attributes[WEIGHTS_ATTR] = ArrayAttr([StringAttr(name) for name in names])


def bind_precomputed_as_parameters(function: func.FuncOp, precomputes: list[loop.PrecomputeOp]) -> func.FuncOp | None:
    """Turn each of `precomputes`, the `loop.precompute`s of `function`, into a trailing parameter; returns the init
    function, if any."""
    if not precomputes:
        return None
    entry = function.body.block
    first_trailing = len(entry.args) - len(function.attributes.get(WEIGHTS_ATTR, ArrayAttr([])))
    for precompute in precomputes:
        param = entry.insert_arg(precompute.result.type, len(entry.args))
        param.name_hint = precompute.result.name_hint
        precompute.result.replace_all_uses_with(param)
    trailing_types = [arg.type for arg in entry.args[first_trailing:]]
    init = func.FuncOp(init_name(function.sym_name.data), (trailing_types, []))
    init.attributes[ENTRY_ATTR] = UnitAttr()
    init_args = dict(zip(entry.args[first_trailing:], init.body.block.args))
    for precompute, param in zip(precomputes, entry.args[len(entry.args) - len(precomputes) :]):
        sources = [init_args[source] if source in init_args else source for source in precompute.sources]
        init.body.block.add_op(func.CallOp(precompute.kernel, [*sources, init_args[param]], []))
        precompute.detach()
        precompute.erase()
    init.body.block.add_op(func.ReturnOp())
    function.function_type = func.FunctionType.from_lists(
        [arg.type for arg in entry.args], function.function_type.outputs.data
    )
    if function.arg_attrs is not None:
        padding = [DictionaryAttr({})] * len(precomputes)
        function.arg_attrs = ArrayAttr([*function.arg_attrs.data, *padding])
    function.attributes[INIT_ATTR] = SymbolRefAttr(init.sym_name.data)
    return init


_COLLECTED = (loop.CallExternOp, loop.WeightOp, loop.PrecomputeOp, loop.ForOp, loop.AllocOp)
"""What `loop-to-scf` rewrites in each function, collected in one walk."""


@dataclass(frozen=True)
class LoopToScfPass(ModulePass):
    """Lower loop.for/alloc/weight to scf, memref and function parameters."""

    name = "loop-to-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_loops(op)
        linearize_dynamic_accesses(op)
        for function in list(op.ops):
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            found = ops_by_kind(function, _COLLECTED)
            bind_externs_as_parameters(function, [c for c in found[loop.CallExternOp] if c.function is None])
            bind_weights_as_parameters(function, found[loop.WeightOp])
            if (init := bind_precomputed_as_parameters(function, found[loop.PrecomputeOp])) is not None:
                op.body.block.add_op(init)
            for for_op in found[loop.ForOp]:
                lower_for(for_op)
            returns = [block.last_op for block in function.body.blocks if isinstance(block.last_op, func.ReturnOp)]
            for alloc in found[loop.AllocOp]:
                lower_alloc(alloc, returns)
