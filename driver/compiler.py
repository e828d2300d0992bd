"""Compile an imported model to native code with a single entry function.

The graph-level module goes through the `lower-to-llvm` pipeline in memory (no text round trips, no verification
between passes) up to the `program` stage; from there `driver/codegen.py` lowers, translates, optimises (O3, for
the target CPU) and compiles it in partitions on all cores, and `jit.ObjectModule` loads the object files. The entry
`@main_packed(ptr args)` takes one array of buffer addresses: inputs, then outputs, then weights in the order
`loop-to-scf` recorded, then precomputed buffers (packed weights); weights are bound by address when the model loads
and never copied into the IR. Precomputed buffers are allocated here and filled once, by `@main_init_packed`, which
takes the same trailing addresses (weights, then precomputed buffers). An entry that runs parallel loops takes the
thread pool's address right after the outputs (`pool_slot`, from the entry's `minimlc.pool`); the session owns the
pool, so one compiled module can serve any pool. Intermediate buffers live in one arena (`loop-plan-memory`) that
the entry allocates (under the allocation guard, `runtime/alloc_guard_ir.py`) and frees on every call.
`model_stats` reads what the lowered module does per call (kernel calls, arena size) for `InferenceSession.stats`
and `minimlc compile --stats`. `stage_listener` reports each stage as it completes (`minimlc run` prints them: a
large model takes seconds per stage).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp

from minimlc.driver.cache import kernel_context
from minimlc.driver.codegen import CODEGEN_STEPS, CompiledPartition, Optimizer, compile_partitions, jit_optimizer
from minimlc.driver.kernel_cache import cacheable, compile_with_kernel_cache
from minimlc.frontend.onnx import ImportedModel
from minimlc.lowering import import_pass_modules
from minimlc.lowering.abi import (
    ARENA_BYTES_ATTR,
    INTERMEDIATE_BYTES_ATTR,
    EntrySignature,
    entry_function,
    input_symbols_of,
    int_attribute,
    weight_names_of,
)
from minimlc.lowering.pipeline import Pipeline, llvm_opt_level, run_pipeline, stage_passes
from minimlc.lowering.target import Target, set_target, target_from_name
from minimlc.lowering.workers import compile_jobs, fewer_collections, fork_map, in_worker, send_event
from minimlc.runtime.compiled import CompiledModel, bind
from minimlc.runtime.jit import ObjectModule
from minimlc.runtime.threadpool import load_pool_code, pool_code_ready, pool_object_code, register_symbols

StageListener = Callable[[str, float, str], None]
"""Called with a compile stage that completed, its seconds, and a detail (`"4 partitions"`, or "")."""

_listener: ContextVar[StageListener | None] = ContextVar("minimlc_stage_listener", default=None)


@contextmanager
def stage_listener(listener: StageListener) -> Iterator[None]:
    """Call `listener(stage, seconds, detail)` as each stage of the compiles in this block completes: `lower` (the
    pipeline up to `program`), `codegen` (detail: the partitions) and `load` (the code loaded and initialised):

        with stage_listener(lambda stage, seconds, detail: print(stage, f"{seconds:.1f} s", detail)):
            InferenceSession("model.onnx")        # lower 5.1 s / codegen 9.8 s 4 partitions / load 0.2 s
    """
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def _stage_done(stage: str, seconds: float, detail: str = "") -> None:
    listener = _listener.get()
    if listener is not None:
        listener(stage, seconds, detail)


def model_stats(module: ModuleOp, weights: Mapping[str, np.ndarray]) -> dict[str, int]:
    """What the entry of a module lowered past the `program` stage does per call, and the bytes it binds.

    `kernels`: kernel calls per run (load-time precompute kernels excluded); `kernel_functions`: distinct kernels
    they call; `arena_bytes`: the intermediate-buffer arena; `intermediate_bytes`: the intermediates' summed sizes
    (what one buffer each would take), both 0 if memory was not planned (O0: one allocation per intermediate);
    `weight_bytes`: the weights the entry binds, from `weights` (0 before `loop-to-scf` makes them parameters).
    """
    functions = [op for op in module.ops if isinstance(op, func.FuncOp | llvm.FuncOp)]
    entry = entry_function(module)
    defined = {op.sym_name.data for op in functions if op.body.blocks}
    callees = [
        op.callee.string_value()
        for op in entry.walk()
        if isinstance(op, func.CallOp | llvm.CallOp) and op.callee is not None
    ]
    kernels = [callee for callee in callees if callee in defined]
    return {
        "kernels": len(kernels),
        "kernel_functions": len(set(kernels)),
        "arena_bytes": int_attribute(entry, ARENA_BYTES_ATTR) or 0,
        "intermediate_bytes": int_attribute(entry, INTERMEDIATE_BYTES_ATTR) or 0,
        "weight_bytes": sum(weights[name].nbytes for name in weight_names_of(entry)),
    }


@dataclass
class CompiledObjects:
    """A model compiled to object files (one per codegen partition), with the entry's ABI and what it took."""

    target: Target
    signature: EntrySignature
    partitions: list[CompiledPartition]
    stats: dict[str, int | float]
    """`model_stats` and the stages' seconds (`lower_seconds`, `codegen_seconds`, `codegen_partitions` and the CPU
    seconds of each step in `CODEGEN_STEPS`)."""

    @property
    def object_files(self) -> list[bytes]:
        return [partition.object_code for partition in self.partitions]

    @property
    def llvm_ir(self) -> str:
        return "".join(partition.llvm_ir for partition in self.partitions)


@fewer_collections()
def compile_objects(
    imported: ImportedModel,
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
    optimizer: Callable[[Target, int], Optimizer] = jit_optimizer,
    jobs: int | None = None,
    kernel_cache: bool = False,
) -> CompiledObjects:
    """Lower `imported` with `pipeline` (by default the one of `opt_level`) for `target` and compile it to object
    files on up to `jobs` processes (`runtime.codegen`), optimised by `optimizer(target, llvm_opt_level(opt_level))`;
    with `kernel_cache` (and the JIT's optimizer), kernels compiled before by any model come from the kernel cache
    (`driver/kernel_cache.py`; `kernel_cache_hits` and `kernel_cache_misses` in the stats)."""
    start = time.perf_counter()
    target = target_from_name(target) if isinstance(target, str) else target
    pipeline = pipeline if pipeline is not None else opt_level
    set_target(imported.module, target)
    symbols = input_symbols_of(entry_function(imported.module))  # the graph's, in case lowering drops them
    run_pipeline(imported.module, pipeline, stop_after="program")
    stats: dict[str, int | float] = dict(model_stats(imported.module, imported.weights))
    lowered = time.perf_counter()
    _stage_done("lower", lowered - start)
    passes = stage_passes(pipeline, start_after="program")
    optimize = optimizer(target, llvm_opt_level(opt_level))
    if kernel_cache and optimizer is jit_optimizer and cacheable(imported.module):
        context = kernel_context(target, [str(item) for item in passes], llvm_opt_level(opt_level))
        result = compile_with_kernel_cache(imported.module, passes, optimize, target, context, jobs)
        partitions = result.partitions
        stats.update(kernel_cache_hits=result.hits, kernel_cache_misses=result.misses)
    else:
        partitions = compile_partitions(imported.module, passes, optimize, jobs)
    _stage_done("codegen", time.perf_counter() - lowered, f"{len(partitions)} partition{'s' * (len(partitions) > 1)}")
    signature = partitions[0].signature
    assert signature is not None
    if signature.extents is not None and not signature.extents.symbols:
        signature.extents = dataclasses.replace(signature.extents, symbols=tuple(symbols))
    stats["weight_bytes"] = sum(imported.weights[name].nbytes for name in signature.weight_names)
    stats.update(
        lower_seconds=lowered - start,
        codegen_seconds=time.perf_counter() - lowered,
        codegen_partitions=len(partitions),
        **{f"{step}_seconds": sum(p.seconds.get(step, 0.0) for p in partitions) for step in CODEGEN_STEPS},
    )
    return CompiledObjects(target, signature, partitions, stats)


def compile_model(
    imported: ImportedModel,
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
    jobs: int | None = None,
    kernel_cache: bool = False,
    isolated: bool = False,
) -> CompiledModel:
    """Lower (with `pipeline`: a named pipeline or a pass list; by default the one of `opt_level`, 0-3), translate,
    optimise and compile an imported model for `target` (an LLVM CPU name, default the host's) on up to `jobs`
    processes (`runtime.codegen`; default one per core), load the code and run its init entry; `kernel_cache`: see
    `compile_objects`. The module is lowered in place, or with `isolated` in a forked child, which leaves it as
    imported: the lowered IR and the garbage of building it (a few hundred MB for a large CNN, whose collection
    paused the next compile or run by 0.1-0.4 s) go when the child exits.

    Raises ValueError for an unknown target or one whose code this host cannot run, before any work.

    A process that has no thread-pool code yet (`runtime.threadpool`, which the model's code links to) compiles it
    in a forked child while this one lowers the model, and loads its object code here: the pool's LLVM compile
    (0.25-0.5 s) leaves the `load` stage of a process's first compile."""
    start = time.perf_counter()
    target = target_from_name(target) if isinstance(target, str) else target
    target.check_runs_on_host()
    listener = _listener.get()

    def model_or_pool(item: str) -> CompiledObjects | bytes:
        if item == "pool":
            return pool_object_code(target)
        if isolated and in_worker() and listener is not None:  # this compile's child: its stages go to the parent
            _listener.set(lambda *stage: send_event(stage))
        return compile_objects(
            imported, pipeline, opt_level=opt_level, target=target, jobs=jobs, kernel_cache=kernel_cache
        )

    if isolated:
        import_pass_modules()
    work = ["model", "pool"] if not pool_code_ready() and (jobs or compile_jobs()) > 1 else ["model"]
    on_event = None if listener is None else lambda stage: listener(*stage)
    objects, *pool_code = fork_map(
        model_or_pool, work, lambda item: f"the {item}'s code", here=not isolated, on_event=on_event
    )
    assert isinstance(objects, CompiledObjects)
    for object_code in pool_code:
        assert isinstance(object_code, bytes)
        load_pool_code(object_code, target)
    register_symbols()  # the pool's parallel_for, and the checked allocation of the model's intermediates
    code = ObjectModule(objects.object_files, target)
    compiled = bind(
        imported.inputs, imported.computed_outputs, code, objects.signature, imported.weights, objects.llvm_ir
    )
    compiled.compile_seconds = time.perf_counter() - start
    stages = objects.stats["lower_seconds"] + objects.stats["codegen_seconds"]
    _stage_done("load", compiled.compile_seconds - stages)
    compiled.stats = {
        **objects.stats,
        "compile_seconds": compiled.compile_seconds,
        "load_seconds": compiled.compile_seconds - stages,  # the code's loading and init, and the checks before
    }
    return compiled
