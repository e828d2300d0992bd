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

import ctypes
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp

from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering.abi import (
    ARENA_BYTES_ATTR,
    ENTRY_FUNCTION,
    INTERMEDIATE_BYTES_ATTR,
    EntrySignature,
    entry_function,
    entry_signature,
    init_name,
    int_attribute,
    packed_name,
    weight_names_of,
)
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import Pipeline, make_context, run_pipeline
from minimlc.lowering.target import Target, set_target, target_from_name
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import register_symbols

_EntryFunction = Callable[[int], None]


def lower_to_llvm_dialect(module: ModuleOp, pipeline: Pipeline = 3) -> EntrySignature:
    """Lower a graph-level module to the llvm dialect in place with `pipeline` (an opt level, a named pipeline or a
    pass list); returns the entry's trailing ABI."""
    ctx = make_context()
    run_pipeline(module, pipeline, stop_after="scf", ctx=ctx)
    signature = entry_signature(module)
    run_pipeline(module, pipeline, start_after="scf", ctx=ctx)
    return signature


def model_stats(module: ModuleOp, weights: Mapping[str, np.ndarray]) -> dict[str, int]:
    """What the entry of a module lowered past `loop-to-scf` does per call, and the bytes it binds.

    `kernels`: kernel calls per run (load-time precompute kernels excluded); `kernel_functions`: distinct kernels
    they call; `arena_bytes`: the intermediate-buffer arena; `intermediate_bytes`: the intermediates' summed sizes
    (what one buffer each would take), both 0 if memory was not planned (O0: one allocation per intermediate);
    `weight_bytes`: the weights the entry binds, from `weights`.
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


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype, alignment: int = 64) -> np.ndarray:
    """An array of `dtype` whose data starts on an `alignment`-byte boundary."""
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + alignment, dtype=np.uint8)
    offset = -raw.ctypes.data % alignment
    return raw[offset : offset + size].view(dtype).reshape(shape)


@dataclass
class CompiledModel:
    """A model compiled to native code: its entry point, the weights it is bound to, and its signature."""

    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    """The outputs the entry computes (the imported model's `computed_outputs`), in order."""
    jit: JitModule
    entry: _EntryFunction
    weight_addresses: np.ndarray
    """uintp array: the weights' addresses, in entry parameter order (appended after inputs and outputs)."""
    weights: dict[str, np.ndarray] = field(repr=False)
    """The weight store; kept alive for as long as native code may read it."""
    precomputed: list[np.ndarray] = field(repr=False)
    """Buffers the init entry filled from the weights (packed layouts), in entry parameter order."""
    pool_slot: int | None
    """Where the entry takes the thread pool's address (None: the model has no parallel loop)."""
    llvm_ir: str = field(repr=False)
    compile_seconds: float = 0.0
    stats: dict[str, int | float] = field(default_factory=dict)
    """`model_stats`, plus `compile_seconds` and its stages: `lower_seconds`, `translate_seconds`, `jit_seconds`."""


def compile_model(
    imported: ImportedModel,
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
) -> CompiledModel:
    """Lower (with `pipeline`: a named pipeline or a pass list; by default the one of `opt_level`, 0-3), translate,
    optimise and JIT an imported model for `target` (an LLVM CPU name, default the host's), and run its init entry.

    Raises ValueError for an unknown target or one whose code this host cannot run, before any work."""
    start = time.perf_counter()
    target = target_from_name(target) if isinstance(target, str) else target
    target.check_runs_on_host()
    set_target(imported.module, target)
    pipeline = pipeline if pipeline is not None else opt_level
    signature = lower_to_llvm_dialect(imported.module, pipeline)
    lowered = time.perf_counter()
    llvm_ir = translate_to_llvm_ir(imported.module)
    translated = time.perf_counter()
    if signature.pool_slot is not None:
        register_symbols()
    jit = JitModule(llvm_ir, target=target)
    weights = {name: np.ascontiguousarray(imported.weights[name], dtype=np.float32) for name in signature.weight_names}
    precomputed = [_aligned_empty(shape, dtype) for shape, dtype in signature.precomputed_buffers]
    compiled = CompiledModel(
        inputs=imported.inputs,
        outputs=imported.computed_outputs,
        jit=jit,
        entry=_packed_function(jit, ENTRY_FUNCTION),
        weight_addresses=_addresses([*weights.values(), *precomputed]),
        weights=weights,
        precomputed=precomputed,
        pool_slot=signature.pool_slot,
        llvm_ir=llvm_ir,
    )
    _run_init(compiled)
    end = time.perf_counter()
    compiled.compile_seconds = end - start
    compiled.stats = {
        **model_stats(imported.module, weights),
        "compile_seconds": compiled.compile_seconds,
        "lower_seconds": lowered - start,
        "translate_seconds": translated - lowered,
        "jit_seconds": end - translated,
    }
    return compiled


def rebind_weights(compiled: CompiledModel, weights: Mapping[str, np.ndarray]) -> CompiledModel:
    """The same native code bound to other weights (same names, shapes and dtype float32), with its init entry rerun.

    Weights are parameters of the compiled code, never part of it, so a model whose graph is unchanged (fine-tuned,
    or re-randomised for testing) needs no new compile. Raises ValueError naming each missing or mismatched weight.
    """
    problems = [f"missing weight '{name}'" for name in compiled.weights if name not in weights]
    for name, current in compiled.weights.items():
        given = weights.get(name)
        if given is not None and (np.shape(given) != current.shape or np.asarray(given).dtype != current.dtype):
            problems.append(
                f"weight '{name}': expected {current.dtype}{list(current.shape)}, "
                f"got {np.asarray(given).dtype}{list(np.shape(given))}"
            )
    if problems:
        raise ValueError("cannot rebind weights: " + "; ".join(problems))
    bound = {name: np.ascontiguousarray(weights[name]) for name in compiled.weights}
    precomputed = [_aligned_empty(buffer.shape, buffer.dtype) for buffer in compiled.precomputed]
    rebound = replace(
        compiled, weights=bound, precomputed=precomputed, weight_addresses=_addresses([*bound.values(), *precomputed])
    )
    _run_init(rebound)
    return rebound


def _addresses(buffers: Sequence[np.ndarray]) -> np.ndarray:
    return np.array([buffer.ctypes.data for buffer in buffers], dtype=np.uintp)


def _run_init(compiled: CompiledModel) -> None:
    """Fill the precomputed buffers (packed weights) from the weights, once per binding."""
    if compiled.precomputed:
        _packed_function(compiled.jit, init_name(ENTRY_FUNCTION))(compiled.weight_addresses.ctypes.data)


def _packed_function(jit: JitModule, name: str) -> _EntryFunction:
    address = jit.function_address(packed_name(name))
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
