"""`loop-merge-functions`: one function for each set of identical functions, so that LLVM compiles each once.

te-to-loop and loop-fuse-kernels share identical kernels as they build them, but the scheduled program still holds
copies made later: `loop-pack`'s packing kernels (one per packed call site), and the parallel bodies
`loop-outline-parallel` outlines from kernels that differ only outside the parallel loop. Functions equal up to SSA
value names and their own symbol (`structural_key`) become the first of them, every reference renamed; a kernel
whose bodies were merged may then equal another kernel, so the pass repeats until nothing changes. Entries are
left alone:

    func.func private @conv_66_pack1(%w: memref<...>, %p: memref<...>) { ... }
    func.func private @conv_78_pack1(%w: memref<...>, %p: memref<...>) { ... }   // the same body
    %a = loop.precompute @conv_66_pack1(%w66) ...
    %b = loop.precompute @conv_78_pack1(%w78) ...
    // becomes
    func.func private @conv_66_pack1(%w: memref<...>, %p: memref<...>) { ... }
    %a = loop.precompute @conv_66_pack1(%w66) ...
    %b = loop.precompute @conv_66_pack1(%w78) ...

Measured on the LLVM IR of light ResNet-50, Inception v2, ShuffleNet and the BERT-style encoder: 5%, 6%, 6% and 14%
of the lines were such copies.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.passes import ModulePass

from minimlc.dialects import loop
from minimlc.lowering.abi import ENTRY_ATTR
from minimlc.lowering.generic.structural_key import structural_key
from minimlc.lowering.loop.analysis import walk_ops


def merge_identical_functions(module: ModuleOp) -> None:
    """Merge the identical non-entry functions of `module` (see the module doc), round after round until none
    merges."""
    keys = _Keys()
    while renames := _one_round(module, keys):
        for name in _rename_references(module, renames):
            keys.forget(name)


class _Keys:
    """Each function's outline and key, kept across rounds for the functions a round did not change."""

    def __init__(self) -> None:
        self.outlines: dict[str, tuple[object, ...]] = {}
        self.keys: dict[str, tuple[object, ...]] = {}

    def outline(self, function: func.FuncOp) -> tuple[object, ...]:
        name = function.sym_name.data
        if name not in self.outlines:
            self.outlines[name] = _outline(function)
        return self.outlines[name]

    def key(self, function: func.FuncOp) -> tuple[object, ...]:
        name = function.sym_name.data
        if name not in self.keys:
            self.keys[name] = structural_key(function)
        return self.keys[name]

    def forget(self, name: str) -> None:
        self.outlines.pop(name, None)
        self.keys.pop(name, None)


def _one_round(module: ModuleOp, keys: _Keys) -> dict[str, str]:
    """Erase every defined non-entry function equal to an earlier one; its name -> the earlier one's. Functions are
    keyed in full (`structural_key`) only where their outline (`_outline`) matches another's."""
    candidates: dict[tuple[object, ...], list[func.FuncOp]] = {}
    for function in module.ops:
        if isinstance(function, func.FuncOp) and function.body.blocks and ENTRY_ATTR not in function.attributes:
            candidates.setdefault(keys.outline(function), []).append(function)
    renames: dict[str, str] = {}
    for alike in candidates.values():
        first: dict[tuple[object, ...], str] = {}
        for function in alike if len(alike) > 1 else ():
            key = keys.key(function)
            if key in first:
                renames[function.sym_name.data] = first[key]
                keys.forget(function.sym_name.data)
                function.detach()
                function.erase()
            else:
                first[key] = function.sym_name.data
    return renames


def _outline(function: func.FuncOp) -> tuple[object, ...]:
    """What equal functions share, a fifth as costly to read as their key: the type, the argument attributes, the
    types of the values the entry block defines (a parallel body's unpacked buffers), each op's name and, for the
    values that tell kernels of one structure apart, the loops' extents and the constants."""
    parts: list[object] = [function.function_type, function.arg_attrs]
    parts.extend(op.result_types for op in function.body.blocks[0].ops)
    for op in walk_ops(function):
        parts.append(op.name)
        if isinstance(op, loop.ForOp):
            parts.append(op.upper.value.data)
        elif isinstance(op, arith.ConstantOp):
            parts.append(op.value)
    return tuple(parts)


def _rename_references(module: ModuleOp, renames: dict[str, str]) -> set[str]:
    """Point every top-level symbol reference (a call's callee, a precompute's kernel, a parallel loop's body) at
    the kept function; returns the names of the functions that held such a reference."""
    changed: set[str] = set()
    for function in module.ops:
        for op in walk_ops(function):
            for fields in (op.properties, op.attributes):
                for field, value in fields.items():
                    if isinstance(value, SymbolRefAttr) and value.root_reference.data in renames:
                        fields[field] = SymbolRefAttr(renames[value.root_reference.data], value.nested_references)
                        if isinstance(function, func.FuncOp):
                            changed.add(function.sym_name.data)
    return changed


@dataclass(frozen=True)
class LoopMergeFunctionsPass(ModulePass):
    """Merge identical functions (up to value names and their symbol) into one, every reference renamed."""

    name = "loop-merge-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_identical_functions(op)
