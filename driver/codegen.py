"""Parallel code generation: a module lowered to the `program` stage (loop IR after the whole-program passes), split
into partitions of functions that are lowered to LLVM IR, optimised and compiled to object code at the same time,
one process per core (`lowering/workers.py`).

A model's kernels are independent functions, and past the `program` stage every pass works function by function. So
each partition is the module with only its share of function bodies (the other functions become declarations); the
rest of the pipeline (`loop-to-scf` and what follows it), LLVM IR (written from the `scf` level by `emit_llvm_ir`,
the same IR `convert-to-llvm` and translation give), LLVM's optimisation and instruction selection run on that
alone.
Partitions are balanced by op count, unrolled loops counted as often as they will be copied; the entry stays in the
first, where `loop-to-scf` adds its init function and the entry's ABI (`EntrySignature`) is read. The first partition
is compiled here and the others in forked children, which inherit the module without serialising it and send their
object code back; LLVM's part of the first (optimising and emitting its object code) runs in a forked child too, so
that what llvmlite leaks of each optimisation leaves with the child (`_emit_in_child`):

    func.func @main(...)           partition 0 (here)    -> main.o: main, main_packed, main_init, ...
    func.func @conv_3(...)         partition 1 (child)   -> conv_3, gemm_5, ... ; declares nothing it calls
    func.func @gemm_5(...)

The objects load into one engine (`jit.ObjectModule`), which resolves their calls to each other, so every function
is public (external linkage) once partitioned. Without `os.fork`, for a module too small to gain (under
`MIN_OPS_PER_PARTITION` ops a partition) or with `MINIMLC_COMPILE_JOBS=1`, everything is one partition, compiled here
(its LLVM part in a child, where there is `os.fork`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from minimlc.dialects import loop
from minimlc.lowering.abi import ENTRY_ATTR, EntrySignature, entry_signature
from minimlc.lowering.llvm.emit_ir import emit_llvm_ir
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes, stage_passes
from minimlc.lowering.program.loop_mark_load_time import referenced_symbols
from minimlc.lowering.schedule.kernel_analysis import unit_stride
from minimlc.lowering.target import Target
from minimlc.lowering.workers import compile_jobs, fork_map, in_worker
from minimlc.runtime.jit import optimized_module, target_machine

MIN_OPS_PER_PARTITION = 1_250
"""What a partition should cost (`partition_costs`) for a child process to pay off: the BERT-style encoder (4
layers) counts 2,900 and generated its code in 0.26 s as two partitions, 0.33 s as one; ResNet-50 counts 15,500."""

ENTRY_PARAMETER_COST = 1
"""What each weight and precomputed buffer adds to an entry function's cost beyond its op: `loop-to-scf` makes it a
parameter of the entry, which the packed entry loads where it first needs it and its init function fills. Measured
as the partitions' balance (codegen wall time, median of 3, against 5 per parameter, which balanced the entries that
loaded every parameter up front): ResNet-50 0.82 -> 0.74 s, DenseNet-121 1.44 -> 1.02, Inception v2 1.57 -> 1.43,
BERT 0.30 -> 0.26 (with `MIN_OPS_PER_PARTITION`), the 2-layer GPT-2 0.42 -> 0.55 until `GATHER_LOOP_COST` counted
the one attention kernel that costs LLVM a hundred times its op count (which 5 per parameter had happened to offset)."""

GATHER_LOOP_COST = 16
"""How many copies of its body an innermost loop with a run-time trip count counts (`op_count`) where the schedule
left it serial and it reads with a stride other than 1 (`unit_stride`): LLVM vectorises such a loop with gathers,
which costs its code generation far more than the loop's ops. The 2-layer GPT-2's scaled transpose of Q took 58 ms
of machine code for 27 ops, against 0.05-0.3 ms an op elsewhere. Measured as GPT-2's partitions' balance, codegen
wall, median of 3: 0.53 s at 1, 0.41-0.44 s at 8, 16 and 24; the BERT-style encoder 0.24 -> 0.25 (noise)."""

CODEGEN_STEPS = ("lower_to_scf", "translate", "optimize", "machine_code")
"""The steps of compiling a partition, each timed (`CompiledPartition.seconds`)."""


@dataclass
class CompiledPartition:
    """One partition's object code and LLVM IR, and the seconds each step took: `lower_to_scf` (the passes
    from `loop-to-scf` on, up to the `scf` level, or to the llvm dialect where the pipeline does not end in
    `LLVM_DIALECT_TAIL`), `translate` (to LLVM IR), `optimize` (LLVM's module passes), `machine_code` (instruction
    selection to the object file)."""

    object_code: bytes
    llvm_ir: str
    seconds: dict[str, float] = field(default_factory=dict)
    signature: EntrySignature | None = None
    """The entry's trailing ABI, read from the partition that holds the entry."""


Optimizer = Callable[[str, frozenset[str]], tuple[llvm.TargetMachine, llvm.ModuleRef]]
"""A partition's LLVM IR and the names of the functions the model defines (in any partition; the runtime's, such as
`minimlc_parallel_for`, are not) -> the target machine that emits its object file and the module, parsed and
optimised (and, for a shared library, its symbols renamed and hidden)."""


def jit_optimizer(target: Target, llvm_level: int) -> Optimizer:
    """For code loaded into this process (`jit.ObjectModule`): `target`'s JIT target machine, LLVM at `llvm_level`
    (see `pipeline.llvm_opt_level`)."""

    def optimize(llvm_ir: str, _own: frozenset[str]) -> tuple[llvm.TargetMachine, llvm.ModuleRef]:
        machine = target_machine(target, llvm_level)
        return machine, optimized_module(llvm_ir, machine, llvm_level, sealed=True)

    return optimize


@dataclass(frozen=True)
class PartitionJob:
    passes: Sequence[str]
    optimize: Optimizer
    own_functions: frozenset[str]


def compile_partitions(
    module: ModuleOp,
    passes: Sequence[str],
    optimize: Optimizer,
    jobs: int | None = None,
) -> list[CompiledPartition]:
    """Lower `module` (at the `program` stage) with `passes` (the rest of its pipeline, from `loop-to-scf` to the
    llvm dialect), translate it, `optimize` it (`jit_optimizer(target, level)` for this process) and emit object
    code, in up to `jobs` partitions (default `compile_jobs()`); the first holds the entry and its `signature`.
    `module` is consumed."""
    jobs = compile_jobs() if jobs is None else jobs
    costs = partition_costs(module)
    job = PartitionJob(passes, optimize, frozenset(costs))
    # Without fork the shares could not each start from the whole module: one partition, then.
    count = min(jobs, max(1, sum(costs.values()) // MIN_OPS_PER_PARTITION)) if hasattr(os, "fork") else 1
    if count == 1:
        return [compile_partition(module, job, with_entry=True, here=True)]
    shares = partition(module, costs, count)
    for function in defined_functions(module):
        function.sym_visibility = None  # callable from the other partitions' objects

    def compile_share(share: set[str]) -> CompiledPartition:
        here = share is shares[0]
        return compile_partition(_keep_only(module, share), job, with_entry=here, here=here)

    return fork_map(compile_share, shares, describe=_describe)


def _describe(share: set[str]) -> str:
    names = sorted(share)
    return "functions " + ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")


def partition(module: ModuleOp, costs: dict[str, int], count: int) -> list[set[str]]:
    """`count` sets of function names, balanced by `costs` (largest first, each to the lightest set); the entry
    functions (and so their init function and `_packed` wrappers) are in the first."""
    shares: list[set[str]] = [set() for _ in range(count)]
    loads = [0] * count
    entries = {f.sym_name.data for f in defined_functions(module) if ENTRY_ATTR in f.attributes}
    groups = reference_groups(module, entries)
    for group in groups:
        if group & entries:
            shares[0] |= group
            loads[0] += sum(costs[name] for name in group)
    for group in sorted((g for g in groups if not g & entries), key=lambda g: (-sum(costs[n] for n in g), sorted(g))):
        lightest = loads.index(min(loads))
        shares[lightest] |= group
        loads[lightest] += sum(costs[name] for name in group)
    return shares


def reference_groups(module: ModuleOp, entries: set[str]) -> list[set[str]]:
    """The defined functions, grouped with the defined functions they name (a kernel with the parallel bodies whose
    address it passes to the pool): an address taken across objects would need a relocation the JIT's static code
    model cannot give. The entries' calls are left out, or everything would be one group."""
    functions = {f.sym_name.data: f for f in defined_functions(module)}
    group_of = {name: {name} for name in functions}
    for name, function in functions.items():
        if name in entries:
            continue
        for op in function.walk():
            for other in referenced_symbols(op):
                if other in functions and group_of[other] is not group_of[name]:
                    merged = group_of[name] | group_of[other]
                    for member in merged:
                        group_of[member] = merged
    unique = {id(group): group for group in group_of.values()}
    return list(unique.values())


def op_count(root: Operation) -> int:
    """The ops `root` will have once its `unroll` loops are copied out (`loop-to-scf`), an innermost run-time loop
    that LLVM vectorises with gathers counted `GATHER_LOOP_COST` times: the partitions' cost."""
    count = 0
    for region in root.regions:
        for block in region.blocks:
            for op in block.ops:
                count += 1 + _copies(op) * op_count(op)
    return count


def _copies(op: Operation) -> int:
    """How many times `op_count` counts the body of `op`."""
    if not isinstance(op, loop.ForOp):
        return 1
    if op.kind.data == "unroll":
        return op.upper.value.data // op.step.value.data
    innermost = not any(isinstance(inner, loop.ForOp) for inner in op.body.block.ops)
    if op.is_dynamic and op.kind.data == "serial" and innermost and not unit_stride(op):
        return GATHER_LOOP_COST
    return 1


def partition_costs(module: ModuleOp) -> dict[str, int]:
    """Each defined function's cost: its `op_count`, an entry's parameters `ENTRY_PARAMETER_COST` more each."""
    return {
        function.sym_name.data: op_count(function) + _entry_parameters(function)
        for function in defined_functions(module)
    }


def _entry_parameters(function: func.FuncOp) -> int:
    if ENTRY_ATTR not in function.attributes:
        return 0
    return ENTRY_PARAMETER_COST * sum(isinstance(op, loop.WeightOp | loop.PrecomputeOp) for op in function.body.ops)


def defined_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]


def _keep_only(module: ModuleOp, names: set[str]) -> ModuleOp:
    """`module` with the functions not in `names` reduced to plain declarations (no body, no `minimlc.*` attributes:
    another partition makes the entry's wrappers)."""
    for function in defined_functions(module):
        if function.sym_name.data not in names:
            inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
            Rewriter.replace_op(function, func.FuncOp.external(function.sym_name.data, inputs, outputs))
    return module


def compile_partition(
    module: ModuleOp, job: PartitionJob, with_entry: bool = False, here: bool = False
) -> CompiledPartition:
    """Lower, translate, optimise and emit one partition; `here` in this process (not a forked child), where
    LLVM's part runs in a child of its own (`_emit_in_child`)."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    ctx = make_context()
    signature = None
    passes = job.passes
    if with_entry:
        run_passes(module, stage_passes(passes, stop_after="scf"), ctx)
        signature = entry_signature(module)
        passes = stage_passes(passes, start_after="scf")
    direct = _emits_directly(passes)
    run_passes(module, passes[: -len(LLVM_DIALECT_TAIL)] if direct else passes, ctx)
    seconds["lower_to_scf"] = (lowered := time.perf_counter()) - start
    llvm_ir = emit_llvm_ir(module) if direct else translate_to_llvm_ir(module)
    seconds["translate"] = time.perf_counter() - lowered
    object_code, seconds["optimize"], seconds["machine_code"] = (_emit_in_child if here else _emit)(llvm_ir, job)
    return CompiledPartition(object_code, llvm_ir, seconds, signature)


LLVM_DIALECT_TAIL = ("convert-scf-to-cf", "convert-to-llvm", "reconcile-unrealized-casts")
"""The passes from the `scf` level to the xDSL `llvm` dialect, which `emit_llvm_ir` replaces with the same LLVM IR
written from the `scf` level (DenseNet-121: 0.3 s against 2.3 s for `convert-scf-to-cf` alone)."""


def _emits_directly(passes: Sequence[str]) -> bool:
    """Whether a partition's passes end in `LLVM_DIALECT_TAIL`, so that `emit_llvm_ir` writes the LLVM IR from the
    `scf` level; a pipeline with passes of its own on the `cf` or llvm dialect is run as given."""
    names = [str(item).split("{", 1)[0].strip() for item in passes]
    return tuple(names[-len(LLVM_DIALECT_TAIL) :]) == LLVM_DIALECT_TAIL


def _emit(llvm_ir: str, job: PartitionJob) -> tuple[bytes, float, float]:
    """`llvm_ir` optimised and compiled to object code; the seconds each of the two steps took."""
    start = time.perf_counter()
    machine, optimized = job.optimize(llvm_ir, job.own_functions)
    optimized_at = time.perf_counter()
    return machine.emit_object(optimized), optimized_at - start, time.perf_counter() - optimized_at


def _emit_in_child(llvm_ir: str, job: PartitionJob) -> tuple[bytes, float, float]:
    """`_emit` in a forked child (here, where there is no fork). llvmlite 0.50 never frees what LLVM's pass
    instrumentation keeps of an optimisation (a pass builder's `PassInstrumentationCallbacks`, and the callbacks each
    run adds to them): about 70 KB a module, which a process compiling model after model piled up (issue #54: 160 KB
    a compile). A child takes it with it when it exits; the fork costs a few milliseconds. A worker process (an
    isolated compile, `compile_model`) emits it itself."""
    if in_worker():
        return _emit(llvm_ir, job)
    (emitted,) = fork_map(lambda item: _emit(item, job), [llvm_ir], lambda _: "the LLVM code", here=False)
    return emitted
