"""Compile an imported model to one native module with a single entry function.

The graph-level module goes through the `lower-to-llvm` pipeline in memory (no text round trips, no verification
between passes), is translated to LLVM IR, optimised at O3 for the host CPU and JIT-compiled. The entry
`@main_packed(ptr args)` takes one array of buffer addresses: inputs, then outputs, then weights in the order
`loop-to-scf` recorded, then precomputed buffers (packed weights); weights are bound by address when the model loads
and never copied into the IR. Precomputed buffers are allocated here and filled once, by `@main_init_packed`, which
takes the same trailing addresses (weights, then precomputed buffers). An entry that runs parallel loops takes the
thread pool's address right after the outputs (`pool_slot`, from the entry's `minimlc.pool`); the session owns the
pool, so one compiled module can serve any pool.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, ModuleOp, StringAttr

from minimlc.dialects import get_all_dialects
from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering import PIPELINES, get_all_passes, split_pass_list
from minimlc.lowering.llvm_translate import translate_to_llvm_ir
from minimlc.lowering.loop_outline_parallel import POOL_ATTR
from minimlc.lowering.loop_to_scf import INIT_ATTR, WEIGHTS_ATTR
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import register_symbols

ENTRY_FUNCTION = "main"
_EntryFunction = Callable[[int], None]


def make_context() -> Context:
    """A context with every dialect minimlc's pipeline uses."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def run_passes(module: ModuleOp, pass_names: Sequence[str], ctx: Context | None = None) -> None:
    """Apply registered passes to `module` in order, in memory."""
    ctx = ctx or make_context()
    registry = get_all_passes()
    for name in pass_names:
        registry[name]()().apply(ctx, module)


@dataclass
class EntrySignature:
    """What the runtime binds after the entry's inputs and outputs."""

    weight_names: list[str]
    precomputed_shapes: list[tuple[int, ...]]
    """Shapes of the precomputed (f32) buffers, after the weights; non-empty only with an init entry."""
    pool_slot: int | None = None
    """Index of the thread-pool parameter (right after the outputs), if the entry runs parallel loops."""


def lower_to_llvm_dialect(module: ModuleOp, pipeline: str = "lower-to-llvm") -> EntrySignature:
    """Lower a graph-level module to the llvm dialect in place with `pipeline`; returns the entry's trailing ABI."""
    passes = split_pass_list(PIPELINES[pipeline][1])
    split = passes.index("loop-to-scf") + 1
    ctx = make_context()
    run_passes(module, passes[:split], ctx)
    signature = _entry_signature(module)
    run_passes(module, passes[split:], ctx)
    return signature


def _entry_signature(module: ModuleOp) -> EntrySignature:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == ENTRY_FUNCTION:
            names = op.attributes.get(WEIGHTS_ATTR, ArrayAttr([]))
            assert isinstance(names, ArrayAttr)
            weight_names = [name.data for name in names.data if isinstance(name, StringAttr)]
            shapes: list[tuple[int, ...]] = []
            if INIT_ATTR in op.attributes:
                types = op.function_type.inputs.data
                count = len(_function(module, f"{ENTRY_FUNCTION}_init").function_type.inputs) - len(weight_names)
                shapes = [tuple(t.get_shape()) for t in types[len(types) - count :] if isinstance(t, MemRefType)]
            pool = op.attributes.get(POOL_ATTR)
            pool_slot = pool.value.data if isinstance(pool, IntegerAttr) else None
            return EntrySignature(weight_names, shapes, pool_slot)
    raise ValueError(f"the module has no @{ENTRY_FUNCTION} function")


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise ValueError(f"the module has no @{name} function")


def _aligned_empty(shape: tuple[int, ...], alignment: int = 64) -> np.ndarray:
    """A float32 array whose data starts on an `alignment`-byte boundary."""
    count = int(np.prod(shape))
    raw = np.empty(count + alignment // 4, dtype=np.float32)
    offset = (-raw.ctypes.data % alignment) // 4
    return raw[offset : offset + count].reshape(shape)


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


def compile_model(imported: ImportedModel, pipeline: str = "lower-to-llvm") -> CompiledModel:
    """Lower (with the named `pipeline`), translate, optimise and JIT an imported model, and run its init entry."""
    start = time.perf_counter()
    signature = lower_to_llvm_dialect(imported.module, pipeline)
    llvm_ir = translate_to_llvm_ir(imported.module)
    if signature.pool_slot is not None:
        register_symbols()
    jit = JitModule(llvm_ir)
    entry = _packed_function(jit, ENTRY_FUNCTION)
    weight_names = signature.weight_names
    weights = {name: np.ascontiguousarray(imported.weights[name], dtype=np.float32) for name in weight_names}
    precomputed = [_aligned_empty(shape) for shape in signature.precomputed_shapes]
    buffers = [weights[name] for name in weight_names] + precomputed
    addresses = np.array([buffer.ctypes.data for buffer in buffers], dtype=np.uintp)
    if precomputed:
        _packed_function(jit, f"{ENTRY_FUNCTION}_init")(addresses.ctypes.data)
    return CompiledModel(
        inputs=imported.inputs,
        outputs=imported.computed_outputs,
        jit=jit,
        entry=entry,
        weight_addresses=addresses,
        weights=weights,
        precomputed=precomputed,
        pool_slot=signature.pool_slot,
        llvm_ir=llvm_ir,
        compile_seconds=time.perf_counter() - start,
    )


def _packed_function(jit: JitModule, name: str) -> _EntryFunction:
    address = jit.function_address(f"{name}_packed")
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
