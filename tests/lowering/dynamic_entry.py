"""Calling a lowered entry with run-time extents from a test, without the runtime: compile a module through a pass
list, ask `@main_output_extents` for the output sizes, then call `@main` with its inputs, outputs and the extents
buffer (the ABI of `docs/design/symbolic_shapes.md`).

    jit = compile_entry(SOURCE, "te-to-loop,loop-to-scf,...,reconcile-unrealized-casts")
    extents, (z,) = run_entry(jit, [x, y], dynamic_axes=[(0,), (0,)], output_shapes=[(-1, 8)])
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from minimlc.lowering.abi import packed_name
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.runtime.jit import JitModule


def parse(source: str) -> ModuleOp:
    return Parser(make_context(), source).parse_module()


def compile_entry(source: str, passes: str) -> JitModule:
    """`source` lowered by the pass list `passes` to the LLVM dialect, JIT-compiled."""
    module = parse(source)
    run_pipeline(module, passes)
    return JitModule(translate_to_llvm_ir(module))


def call_packed(jit: JitModule, name: str, buffers: Sequence[np.ndarray]) -> None:
    """Call `@<name>_packed` with the addresses of `buffers`."""
    addresses = (ctypes.c_void_p * len(buffers))(*(buffer.ctypes.data for buffer in buffers))
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.function_address(packed_name(name)))(addresses)


def run_entry(
    jit: JitModule,
    inputs: Sequence[np.ndarray],
    dynamic_axes: Sequence[tuple[int, ...]],
    output_shapes: Sequence[tuple[int, ...]],
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The output extents `@main_output_extents` writes, and the float32 outputs of `@main`: shapes `output_shapes`
    with -1 for each `?`, filled in from those extents in output order, then axis order. `dynamic_axes` names each
    input's `?` axes, whose sizes make the input extents buffer."""
    extents = np.array([x.shape[axis] for x, axes in zip(inputs, dynamic_axes) for axis in axes], dtype=np.int64)
    written = np.full(sum(shape.count(-1) for shape in output_shapes), -7, dtype=np.int64)
    call_packed(jit, "main_output_extents", [extents, written])
    sizes = iter(written.tolist())
    outputs = [
        np.full([next(sizes) if d == -1 else d for d in shape], np.nan, dtype=np.float32) for shape in output_shapes
    ]
    call_packed(jit, "main", [*inputs, *outputs, extents])
    return written, outputs
