"""Compile an imported model to one native module with a single entry function.

The graph-level module goes through the `lower-to-llvm` pipeline in memory (no text round trips, no verification
between passes), is translated to LLVM IR, optimised at O3 for the host CPU and JIT-compiled. The entry
`@main_packed(ptr args)` takes one array of buffer addresses: inputs, then outputs, then weights in the order
`loop-to-scf` recorded, then precomputed buffers (packed weights); weights are bound by address when the model loads
and never copied into the IR. Precomputed buffers are allocated here and filled once, by `@main_init_packed`, which
takes the same trailing addresses (weights, then precomputed buffers). An entry that runs parallel loops takes the
thread pool's address right after the outputs (`pool_slot`, from the entry's `minimlc.pool`); the session owns the
pool, so one compiled module can serve any pool. Intermediate buffers live in one arena (`loop-plan-memory`) that
the entry allocates and frees on every call. `model_stats` reads what the lowered module does per call (kernel calls,
arena size) for `InferenceSession.stats` and `minimlc compile --stats`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp

from minimlc.frontend.onnx import ImportedModel
from minimlc.lowering.abi import (
    ARENA_BYTES_ATTR,
    INTERMEDIATE_BYTES_ATTR,
    EntrySignature,
    entry_function,
    entry_signature,
    int_attribute,
    weight_names_of,
)
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import Pipeline, make_context, run_pipeline, stage_passes
from minimlc.lowering.target import Target, set_target, target_from_name
from minimlc.runtime.compiled import CompiledModel, bind
from minimlc.runtime.codegen import CODEGEN_STEPS, compile_partitions
from minimlc.runtime.jit import ObjectModule
from minimlc.runtime.threadpool import register_symbols


def lower_to_llvm_dialect(module: ModuleOp, pipeline: Pipeline = 3) -> EntrySignature:
    """Lower a graph-level module to the llvm dialect in place with `pipeline` (an opt level, a named pipeline or a
    pass list); returns the entry's trailing ABI."""
    ctx = make_context()
    run_pipeline(module, pipeline, stop_after="scf", ctx=ctx)
    signature = entry_signature(module)
    run_pipeline(module, pipeline, start_after="scf", ctx=ctx)
    return signature


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
class LoweredModel:
    """An imported model lowered to LLVM IR for a target, with the entry's trailing ABI."""

    target: Target
    signature: EntrySignature
    llvm_ir: str
    lower_seconds: float
    translate_seconds: float


def lower_to_llvm_ir(
    imported: ImportedModel, pipeline: Pipeline | None = None, *, opt_level: int = 3, target: str | Target = "host"
) -> LoweredModel:
    """Pin `imported`'s module to `target`, lower it in place with `pipeline` (by default the one of `opt_level`)
    and translate it to LLVM IR: what the JIT and the shared-library builder both start from."""
    start = time.perf_counter()
    target = target_from_name(target) if isinstance(target, str) else target
    set_target(imported.module, target)
    signature = lower_to_llvm_dialect(imported.module, pipeline if pipeline is not None else opt_level)
    lowered = time.perf_counter()
    llvm_ir = translate_to_llvm_ir(imported.module)
    return LoweredModel(target, signature, llvm_ir, lowered - start, time.perf_counter() - lowered)


def compile_model(
    imported: ImportedModel,
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
    jobs: int | None = None,
) -> CompiledModel:
    """Lower (with `pipeline`: a named pipeline or a pass list; by default the one of `opt_level`, 0-3), translate,
    optimise and compile an imported model for `target` (an LLVM CPU name, default the host's) on up to `jobs`
    processes (`runtime.codegen`; default one per core), load the code and run its init entry.

    Raises ValueError for an unknown target or one whose code this host cannot run, before any work."""
    start = time.perf_counter()
    target = target_from_name(target) if isinstance(target, str) else target
    target.check_runs_on_host()
    pipeline = pipeline if pipeline is not None else opt_level
    set_target(imported.module, target)
    run_pipeline(imported.module, pipeline, stop_after="program")
    stats = model_stats(imported.module, imported.weights)
    lowered = time.perf_counter()
    partitions = compile_partitions(imported.module, stage_passes(pipeline, start_after="program"), target, jobs)
    generated = time.perf_counter()
    signature = partitions[0].signature
    assert signature is not None
    if signature.pool_slot is not None:
        register_symbols()
    code = ObjectModule([p.object_code for p in partitions], target)
    llvm_ir = "".join(p.llvm_ir for p in partitions)
    compiled = bind(imported.inputs, imported.computed_outputs, code, signature, imported.weights, llvm_ir)
    end = time.perf_counter()
    compiled.compile_seconds = end - start
    compiled.stats = {
        **stats,
        "weight_bytes": sum(weight.nbytes for weight in compiled.weights.values()),
        "compile_seconds": compiled.compile_seconds,
        "lower_seconds": lowered - start,
        "codegen_seconds": generated - lowered,
        "load_seconds": end - generated,
        "codegen_partitions": len(partitions),
        **{f"{step}_seconds": sum(p.seconds[step] for p in partitions) for step in CODEGEN_STEPS},
    }
    return compiled
