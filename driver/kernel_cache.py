"""The kernel cache: each kernel's object code, kept across models, so a model whose kernels were compiled before (a
BERT with more layers after a smaller one) compiles only its entry and the kernels that are new.

It works at the `program` stage, the boundary where `codegen.py` already splits a module into partitions: past it,
every pass works function by function, so a kernel (with the parallel bodies it names, a reference group) compiles
to the same object code whatever model holds it. Fusion, memory planning, hoisting and outlining have all run by
then, so what they did to a kernel is in the IR that is keyed. A group's key hashes its functions' text (what
printing them holds, their own symbols replaced by their position in the group: `_GroupKeys`), the declarations they
reference, the module's attributes, and the caller's `context` (target, host CPU, the passes after `program`, LLVM's
level, the compiler's versions and source). Each group is renamed to its key, so its object code defines the same
symbols in every model:

    func.func private @fused_matmul_add_5(...)          ->  func.func @mlk_1f0c...(...)
    func.func private @fused_matmul_add_5_i1_o_body     ->  func.func @mlk_1f0c..._1
    func.call @fused_matmul_add_5(...) (in @main)       ->  func.call @mlk_1f0c...(...)

Two groups of one model with the same key are one kernel: the second's calls go to the first. A hit's object code
and LLVM IR come from its entry; each miss compiles to an object of its own (stored afterwards), the entry to
another, on up to `jobs` processes (`fork_map`). An entry is an `artifact` file (checksummed, written to a temporary
name and renamed into place); one that fails its checks is recompiled with a warning. Entries live in
`cache_dir()/kernels`, beside the whole-model entries, and `MINIMLC_CACHE=0` turns both off.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from minimlc.driver import cache
from minimlc.driver.cache import cache_dir
from minimlc.driver.codegen import (
    MIN_OPS_PER_PARTITION,
    CompiledPartition,
    Optimizer,
    PartitionJob,
    compile_partition,
    defined_functions,
    partition_costs,
    reference_groups,
)
from minimlc.lowering.abi import ENTRY_ATTR
from minimlc.lowering.program.loop_mark_load_time import referenced_symbols
from minimlc.lowering.target import Target
from minimlc.lowering.workers import compile_jobs, fork_map
from minimlc.runtime import artifact

SUFFIX = ".mlk"
PREFIX = "mlk_"
"""Kernel symbols are `mlk_<key>` (the group's first function) and `mlk_<key>_<i>` (the others)."""


@dataclass
class KernelCacheResult:
    """The compiled partitions (the entry's first), and how many kernel groups came from the cache or were compiled."""

    partitions: list[CompiledPartition]
    hits: int
    misses: int


def kernel_dir() -> Path:
    """Where kernel entries live: `cache_dir()/kernels`."""
    return cache_dir() / "kernels"


def entries() -> list[Path]:
    """The kernel cache's entries."""
    return cache.entries(kernel_dir(), SUFFIX)


def clear() -> int:
    """Remove every kernel entry; returns how many there were."""
    return cache.clear(kernel_dir(), SUFFIX)


def cacheable(module: ModuleOp) -> bool:
    """Whether `module` (at the `program` stage) holds only functions: a module-level global would be defined again
    by every kernel object, so such a module is compiled without the kernel cache."""
    return all(isinstance(op, func.FuncOp) for op in module.ops)


def compile_with_kernel_cache(
    module: ModuleOp,
    passes: Sequence[str],
    optimize: Optimizer,
    target: Target,
    context: str,
    jobs: int | None = None,
) -> KernelCacheResult:
    """`codegen.compile_partitions` through the kernel cache: `module` (at the `program` stage, `cacheable`) has its
    kernel groups renamed to their keys (`context` is hashed into each), hits loaded, misses compiled (and stored)
    one object each, the entry in the first partition. `module` is consumed."""
    keyed = rename_to_keys(module, context)
    loaded: list[CompiledPartition] = []
    missed: list[tuple[str, set[str]]] = []
    for key, names in keyed.kernels.items():
        hit = _load(kernel_dir() / (key + SUFFIX), names)
        if hit is not None:
            loaded.append(hit)
        else:
            missed.append((key, set(names)))
    for function in defined_functions(module):
        function.sym_visibility = None  # called from other objects
    job = PartitionJob(passes, optimize, frozenset(f.sym_name.data for f in defined_functions(module)))
    compiled = _compile_shares(module, job, keyed.with_entry, missed, jobs)
    for (key, names), partition in zip(missed, compiled[1:], strict=True):
        _store(kernel_dir() / (key + SUFFIX), key, sorted(names), partition, target)
    return KernelCacheResult([compiled[0], *compiled[1:], *loaded], len(loaded), len(missed))


@dataclass
class KeyedGroups:
    """What `rename_to_keys` did: each key's kernel (its functions' new names) and the functions compiled with the
    entry (its group and the groups that cannot be keyed), which keep their names."""

    kernels: dict[str, list[str]]
    with_entry: set[str]


def rename_to_keys(module: ModuleOp, context: str) -> KeyedGroups:
    """Rename each kernel group of `module` (at the `program` stage) to its key (`context` hashed into it); a second
    group with a key already seen is erased and its calls go to the first. A group `_GroupKeys` cannot key is
    compiled with the entry and never stored."""
    functions = {f.sym_name.data: f for f in defined_functions(module)}
    entry_names = {name for name, f in functions.items() if ENTRY_ATTR in f.attributes}
    groups = [sorted(g, key=list(functions).index) for g in reference_groups(module, entry_names)]
    with_entry = {name for group in groups if set(group) & entry_names for name in group}
    renames: dict[str, str] = {}
    kernels: dict[str, list[str]] = {}  # key -> the group's new names
    keys = _GroupKeys(module, context)
    for group in groups:
        if set(group) & entry_names:
            continue
        key = keys.key([functions[name] for name in group])
        if key is None:
            with_entry.update(group)
            continue
        if key in kernels:  # the same kernel twice: its calls go to the first copy
            for name in group:
                Rewriter.erase_op(functions[name])
        renames.update(zip(group, kernels.setdefault(key, [_symbol(key, i) for i in range(len(group))]), strict=True))
    _rename_symbols(module, renames)
    return KeyedGroups(kernels, with_entry)


def _symbol(key: str, position: int) -> str:
    return PREFIX + key if position == 0 else f"{PREFIX}{key}_{position}"


class _GroupKeys:
    """Keys the kernel groups of one module. A group's text is its functions walked op by op: name, operands (by
    their number in the group), results' types and names, properties and attributes, regions, blocks and
    successors, so two groups share a text only where they print alike. Each distinct attribute is printed once
    (most are types and flags repeated throughout), which is what printing whole functions spent its time on (BERT-6's
    14 groups: 0.09 s of CPU against 0.04). Printed, not `repr`ed: `repr` writes a set attribute (an op's fastmath
    flags) in an order that changes from process to process. References to a group's own symbols are their
    position in the group (`@{0}`, `@{1}`), so its key is the same in every model. `@matmul_0_pack1`'s text:

        @{0}
        func.func()[] {function_type=(memref<16x16xf32>, memref<1x16x16xf32>) -> (), sym_visibility="private"} ->
        region 1
        block 0 (memref<16x16xf32> %in0 memref<1x16x16xf32> %out) 2
        loop.for()[] {kind="serial", loop_name="p0", lower=0 : i64, step=1 : i64, upper=1 : i64} ->
        ...
    """

    def __init__(self, module: ModuleOp, context: str):
        self.module = module
        self.printed: dict[Attribute, str] = {}
        attributes = sorted(f"{name}={self._attribute(value, {})}" for name, value in module.attributes.items())
        self.head = "\n".join([context, *attributes])

    def key(self, group: list[func.FuncOp]) -> str | None:
        """The hex key of `group`: its text, the declarations it references, the module's attributes, the context;
        None where an operand is used before the walk reaches its definition (a block listed before the block that
        defines the value, as a CFG may order them): it has no number yet, so two kernels differing only in it
        would share a key."""
        names = {f.sym_name.data: position for position, f in enumerate(group)}
        referenced = {ref for f in group for op in f.walk() for ref in referenced_symbols(op)}
        declarations = sorted(
            str(f) for f in self.module.ops if isinstance(f, func.FuncOp) and f.sym_name.data in referenced - set(names)
        )
        texts = [self._function_text(f, names) for f in group]
        if None in texts:
            return None
        parts = [self.head, *declarations, *texts]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]

    def _function_text(self, function: func.FuncOp, names: dict[str, int]) -> str | None:
        """`function`'s text, or None at its first operand or successor used before it is numbered."""
        numbers: dict[SSAValue | Block, int] = {}
        words: list[str] = []

        def number(items: Sequence[SSAValue | Block]) -> None:
            for item in items:
                numbers[item] = len(numbers)

        def visit(op: Operation) -> None:
            named = (*op.properties.items(), *op.attributes.items())
            fields = sorted(
                f"{name}={self._attribute(value, names)}"
                for name, value in named
                if op is not function or name != "sym_name"
            )
            if any(item not in numbers for item in (*op.operands, *op.successors)):
                raise _Unnumbered
            operands = " ".join(str(numbers[value]) for value in op.operands)
            successors = " ".join(str(numbers[block]) for block in op.successors)
            results = " ".join(f"{self._attribute(value.type, names)} %{value.name_hint or ''}" for value in op.results)
            words.append(f"{op.name}({operands})[{successors}] {{{', '.join(fields)}}} -> {results}")
            number(op.results)
            for region in op.regions:
                number(region.blocks)
                words.append(f"region {len(region.blocks)}")
                for block in region.blocks:
                    number(block.args)
                    types = " ".join(f"{self._attribute(arg.type, names)} %{arg.name_hint or ''}" for arg in block.args)
                    words.append(f"block {numbers[block]} ({types}) {len(block.ops)}")
                    for inner in block.ops:
                        visit(inner)

        words.append(f"@{{{names[function.sym_name.data]}}}")
        try:
            visit(function)
        except _Unnumbered:
            return None
        return "\n".join(words)

    def _attribute(self, value: Attribute, names: dict[str, int]) -> str:
        if isinstance(value, SymbolRefAttr) and value.root_reference.data in names:
            nested = "".join(f"::@{ref.data}" for ref in value.nested_references)
            return f"@{{{names[value.root_reference.data]}}}{nested}"
        text = self.printed.get(value)
        if text is None:
            text = self.printed[value] = str(value)
        return text


class _Unnumbered(Exception):
    """An operand or successor reached before its definition: the group gets no key."""


def _rename_symbols(module: ModuleOp, renames: dict[str, str]) -> None:
    """Every function named in `renames` and every (top-level) symbol reference to it, renamed."""
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data in renames:
            op.sym_name = StringAttr(renames[op.sym_name.data])
        for attributes in (op.properties, op.attributes):
            for name, value in attributes.items():
                if isinstance(value, SymbolRefAttr) and value.root_reference.data in renames:
                    attributes[name] = SymbolRefAttr(renames[value.root_reference.data], value.nested_references)


def _compile_shares(
    module: ModuleOp, job: PartitionJob, entry_group: set[str], missed: list[tuple[str, set[str]]], jobs: int | None
) -> list[CompiledPartition]:
    """The entry's partition (compiled here, its LLVM part in a child), then one per missed group, each compiled
    alone, in as many forked children as `codegen.compile_partitions` would make partitions (at most `jobs`; shares
    balanced by op count). One fork per share, not per group: forking this process costs tens of milliseconds, as
    much as compiling a small kernel; the entry alone is lighter than a share, so it runs beside them."""
    costs = partition_costs(module)
    cost = [sum(costs[name] for name in names) for _, names in missed]
    entry_cost = sum(costs.get(name, 0) for name in entry_group)
    count = min(compile_jobs() if jobs is None else jobs, max(1, (entry_cost + sum(cost)) // MIN_OPS_PER_PARTITION))
    shares: list[list[int]] = [[] for _ in range(count if missed else 0)]
    loads = [0] * len(shares)
    for index in sorted(range(len(missed)), key=lambda i: -cost[i]):
        lightest = loads.index(min(loads))
        shares[lightest].append(index)
        loads[lightest] += cost[index]

    def compile_share(share: list[int] | None) -> list[tuple[int, CompiledPartition]]:
        if share is None:
            return [(-1, compile_partition(_module_of(module, entry_group), job, with_entry=True, here=True))]
        return [(i, compile_partition(_module_of(module, missed[i][1]), job)) for i in share]

    by_index = dict(pair for done in fork_map(compile_share, [None, *shares], _describe) for pair in done)
    return [by_index[-1], *(by_index[i] for i in range(len(missed)))]


def _describe(share: list[int] | None) -> str:
    return "the entry" if share is None else f"{len(share)} kernels"


def _module_of(module: ModuleOp, names: set[str]) -> ModuleOp:
    """A new module holding clones of the functions in `names` and declarations of the other functions they name
    (only those: ResNet-50 has 180 functions, and each kernel's module declaring them all doubled its compile)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    named = {ref for f in functions if f.sym_name.data in names for op in f.walk() for ref in referenced_symbols(op)}
    ops = [
        f.clone()
        if f.sym_name.data in names
        else func.FuncOp.external(f.sym_name.data, f.function_type.inputs.data, f.function_type.outputs.data)
        for f in functions
        if f.sym_name.data in names | named
    ]
    return ModuleOp(ops, attributes=dict(module.attributes))


def _load(path: Path, names: list[str]) -> CompiledPartition | None:
    """The entry at `path`, or None if there is none; a bad one is removed with a warning (and recompiled)."""
    if not path.exists():
        return None
    try:
        meta, blobs = artifact.read_file(path)
        if meta.get("kind") != "kernel-entry" or meta.get("functions") != sorted(names):
            raise artifact.ArtifactError(f"'{path}' is not the kernel-cache entry of {names[0]}")
        return CompiledPartition(blobs["object"].tobytes(), meta["llvm_ir"], {})
    except (artifact.ArtifactError, KeyError, OSError, ValueError) as error:
        warnings.warn(f"minimlc: recompiling a bad kernel-cache entry: {error}", RuntimeWarning, stacklevel=2)
        path.unlink(missing_ok=True)
        return None


def _store(path: Path, key: str, names: list[str], compiled: CompiledPartition, target: Target) -> None:
    try:
        for directory in (path.parent.parent, path.parent):  # user-only, as the cache's own folder
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        meta = {
            "kind": "kernel-entry",
            "key": key,
            "functions": names,
            "llvm_ir": compiled.llvm_ir,
            "target": artifact.target_meta(target),
        }
        artifact.write_file(path, meta, {"object": np.frombuffer(compiled.object_code, np.uint8)})
    except OSError as error:
        warnings.warn(f"minimlc: cannot write the kernel cache ({error}); compiled without it", RuntimeWarning)
