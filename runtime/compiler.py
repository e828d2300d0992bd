"""Compile an imported model to one native module with a single entry function.

The graph-level module goes through the `lower-to-llvm` pipeline in memory (no text round trips, no verification
between passes), is translated to LLVM IR, optimised at O3 for the host CPU and JIT-compiled. The entry
`@main_packed(ptr args)` takes one array of buffer addresses: inputs, then outputs, then weights in the order
`loop-to-scf` recorded; weights are bound by address when the model loads and never copied into the IR.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr

from minimlc.dialects import get_all_dialects
from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering import PIPELINES, get_all_passes, split_pass_list
from minimlc.lowering.llvm_translate import translate_to_llvm_ir
from minimlc.lowering.loop_to_scf import WEIGHTS_ATTR
from minimlc.runtime.jit import JitModule

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


def lower_to_llvm_dialect(module: ModuleOp) -> list[str]:
    """Lower a graph-level module to the llvm dialect in place; returns the entry's weight names in order."""
    passes = split_pass_list(PIPELINES["lower-to-llvm"][1])
    split = passes.index("loop-to-scf") + 1
    ctx = make_context()
    run_passes(module, passes[:split], ctx)
    weight_names = _entry_weight_names(module)
    run_passes(module, passes[split:], ctx)
    return weight_names


def _entry_weight_names(module: ModuleOp) -> list[str]:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == ENTRY_FUNCTION:
            names = op.attributes.get(WEIGHTS_ATTR)
            if names is None:
                return []
            assert isinstance(names, ArrayAttr)
            return [name.data for name in names.data if isinstance(name, StringAttr)]
    raise ValueError(f"the module has no @{ENTRY_FUNCTION} function")


@dataclass
class CompiledModel:
    """A model compiled to native code: its entry point, the weights it is bound to, and its signature."""

    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    jit: JitModule
    entry: _EntryFunction
    weight_addresses: np.ndarray
    """uintp array: the weights' addresses, in entry parameter order (appended after inputs and outputs)."""
    weights: dict[str, np.ndarray] = field(repr=False)
    """The weight store; kept alive for as long as native code may read it."""
    llvm_ir: str = field(repr=False)
    compile_seconds: float = 0.0


def compile_model(imported: ImportedModel) -> CompiledModel:
    """Lower, translate, optimise and JIT an imported model."""
    start = time.perf_counter()
    weight_names = lower_to_llvm_dialect(imported.module)
    llvm_ir = translate_to_llvm_ir(imported.module)
    jit = JitModule(llvm_ir)
    address = jit.function_address(f"{ENTRY_FUNCTION}_packed")
    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
    weights = {name: np.ascontiguousarray(imported.weights[name]) for name in weight_names}
    addresses = np.array([weights[name].ctypes.data for name in weight_names], dtype=np.uintp)
    return CompiledModel(
        inputs=imported.inputs,
        outputs=imported.outputs,
        jit=jit,
        entry=entry,
        weight_addresses=addresses,
        weights=weights,
        llvm_ir=llvm_ir,
        compile_seconds=time.perf_counter() - start,
    )
