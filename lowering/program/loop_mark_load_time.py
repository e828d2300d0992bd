"""`loop-mark-load-time`: mark the functions only load-time code runs, which LLVM then compiles for size.

A `loop.precompute` runs its kernel once, when the model loads (`loop-hoist-constants`, `loop-pack`). That kernel,
the functions it references (its parallel bodies, what it calls) and so on get `minimlc.load_time`, unless the
entries' run-time code reaches them too; the LLVM lowerings give them `minsize optsize`
(`abi.llvm_function_flags`), so LLVM neither unrolls nor vectorises them beyond what their schedule wrote:

    func.func @main(%w: ..., %x: ..., %y: ...) attributes {minimlc.entry} {
      %w2 = loop.precompute @winograd_weight_9(%w) ...   // @winograd_weight_9 gets minimlc.load_time
      func.call @conv_10(%x, %w2, %y) ...                // @conv_10 and its bodies stay as they are
    }

ResNet-50's weight packing, batch-norm folding and Winograd weight transforms were 47% of its instructions after
LLVM's O3; marked, the model's LLVM time drops by about a fifth.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from minimlc.dialects import loop
from minimlc.lowering.abi import ENTRY_ATTR, LOAD_TIME_ATTR
from minimlc.lowering.loop.analysis import walk_ops


def referenced_symbols(op: Operation) -> list[str]:
    """The symbols `op`'s properties and attributes name, at their top level (a call's callee, a precompute's
    kernel, a parallel loop's body)."""
    values = (*op.properties.values(), *op.attributes.values())
    return [value.root_reference.data for value in values if isinstance(value, SymbolRefAttr)]


def load_time_functions(module: ModuleOp) -> set[str]:
    """The defined functions of `module` that the entries' `loop.precompute` ops reach and their other ops do not."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    entries = {name for name, function in functions.items() if ENTRY_ATTR in function.attributes}
    load_roots: list[str] = []
    run_roots: list[str] = []
    for name in entries:
        for op in walk_ops(functions[name]):
            (load_roots if isinstance(op, loop.PrecomputeOp) else run_roots).extend(referenced_symbols(op))
    references: dict[str, set[str]] = {}

    def reached(roots: list[str]) -> set[str]:
        seen: set[str] = set()
        while roots:
            name = roots.pop()
            if name in seen or name not in functions:
                continue
            seen.add(name)
            if name not in references:
                references[name] = {ref for op in walk_ops(functions[name]) for ref in referenced_symbols(op)}
            roots.extend(references[name])
        return seen

    return reached(load_roots) - reached(run_roots) - entries


@dataclass(frozen=True)
class LoopMarkLoadTimePass(ModulePass):
    """Mark the functions only load-time code runs (`minimlc.load_time`): LLVM compiles them for size."""

    name = "loop-mark-load-time"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        marked = load_time_functions(op)
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.sym_name.data in marked:
                function.attributes[LOAD_TIME_ATTR] = UnitAttr()
