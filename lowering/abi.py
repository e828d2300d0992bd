"""The contract between compiled code and the runtime: entry names, the attributes passes leave for the runtime,
and reading an entry's signature. The passes that write these (te-to-loop, loop-to-scf, loop-plan-memory,
loop-outline-parallel, convert-to-llvm) and the runtime that reads them (compile driver, thread pool) import them
from here.

A model compiles to `@main`; convert-to-llvm adds `@main_packed(ptr args)`, which takes one array of buffer
addresses: inputs, outputs, the thread pool (if `minimlc.pool` is set, at that index), weights (in the order of
`minimlc.weights`), then precomputed buffers. `@main_init_packed` (if `minimlc.init` is set) takes the trailing
weights and precomputed buffers and fills the latter once, at load time:

    func.func @main(%x: memref<1x784xf32>, %y: memref<1x10xf32>, %w: memref<10x784xf32>)
        attributes {minimlc.entry, minimlc.weights = ["fc.weight"], minimlc.arena_bytes = 512 : i64} { ... }

Data-dependent extents: a graph output computed by NonZero, Compress or Unique has an extent (along one axis) that
only the data decides. @main returns it at an upper bound, valid elements first, and after all other results one
`tensor<1xi64>` count per such output, in output order (the importer names it `<output>.count`); the runtime cuts
each output to its count along its axis (`trim_to_count`) and drops the counts. The importer's
`ImportedModel.trimmed_outputs` (output name -> axis) says which outputs these are; a saved model keeps it.

Run-time extents (`docs/design/symbolic_shapes.md`): an entry whose inputs have `?` dimensions takes, right after
the outputs, one `memref<Kxi64>` of the K dynamic input extents (input order, then axis order), and
`@main_output_extents(memref<Kxi64>, memref<Jxi64>)` writes the J dynamic output extents (output order, then axis
order), so that the runtime allocates the outputs before calling `@main` (`EntryExtents`).

The names and `EntrySignature` need no xDSL (a saved model loads without it); the readers of lowered
modules import it when called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from xdsl.dialects import func, llvm
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute

ENTRY_FUNCTION = "main"
"""The model's entry function."""
ENTRY_ATTR = "minimlc.entry"
"""Unit attribute on the functions that are native entry points: each is compiled as `<name>_packed`, reading its
buffers from one array (`packed_name`)."""
LOAD_TIME_ATTR = "minimlc.load_time"
"""Unit attribute on a function that only load-time code runs (a `loop.precompute` kernel, what it calls, its
parallel bodies; `loop-mark-load-time` sets it): LLVM compiles it for size, since it runs once
per load (see `llvm_function_flags`)."""
WEIGHTS_ATTR = "minimlc.weights"
"""Array of weight names on a function, one per trailing weight parameter, in order."""
INIT_ATTR = "minimlc.init"
"""Symbol of the function that fills a function's precomputed-buffer parameters, run once at load time."""
POOL_ATTR = "minimlc.pool"
"""Index of the `!llvm.ptr` thread-pool parameter of a function that runs parallel loops."""
ARENA_BYTES_ATTR = "minimlc.arena_bytes"
"""Bytes of the one arena a function's intermediates share (loop-plan-memory): its static part, where some
intermediates have run-time sizes (the rest of the arena is sized per run)."""
INTERMEDIATE_BYTES_ATTR = "minimlc.intermediate_bytes"
"""The intermediates' summed sizes: what one buffer each would take."""
PROFILE_ATTR = "minimlc.profile"
"""On the entry, with `loop-profile-calls`: per kernel call, in order, `{kernel, flops, bytes, schedule, tasks}`
(`bytes`: of the buffers the call passes; 0 where not known)."""
SCHEDULE_ATTR = "minimlc.schedule"
"""On a kernel: its rule and config as text (`gemm mr=8 nr=32 ...`; a fused kernel's stages joined by ` + `), left by
`default-schedule{annotate=true}` for the profiler."""
TASK_ATTR = "minimlc.task"
"""On a kernel, beside `minimlc.schedule`: its tuning key (`tuning_db.kernel_key`; a fused kernel's stages joined by
` + `), so that a profile says which tuning task each kernel call ran (`tuner/verify.py`)."""
EXTERNS_ATTR = "minimlc.externs"
"""On a function calling external functions (`loop.call_extern`): per call, in order, `{callee, slot, buffers,
num_outputs}`: the parameter (after the pool, before the weights) where the runtime binds the function's address,
and the buffer types it is called with (inputs, then outputs). The function is `int32_t f(void **buffers)`."""
EXTERN_STATUS_ATTR = "minimlc.extern_status"
"""Index of the parameter (after the function pointers) that takes a run's status: two int32, zero before the run;
the first call returning non-zero writes its function pointer's slot + 1 and the value it returned."""
INPUT_EXTENTS_ATTR = "minimlc.input_extents"
"""On a lowered entry with dynamic inputs: K, the length of the `memref<Kxi64>` parameter (the first after the
outputs) that holds the dynamic input extents, in input order then axis order."""
OUTPUT_EXTENTS_ATTR = "minimlc.output_extents"
"""On a lowered entry with dynamic outputs: J, the number of dynamic output extents `@<entry>_output_extents` writes."""
WEIGHT_BITS_ATTR = "minimlc.weight_bits"
"""On the module: weight name -> the signed bits its int8 values must fit, where compiled code relies on it
(graph-to-te's dot products over 7-bit weights, `vpmaddubsw` on AVX2): `{minimlc.weight_bits = {"w" = 7 : i64}}`.
The runtime refuses weights that do not fit (`check_weight_bits`) wherever it binds them."""
PARALLEL_FOR = "minimlc_parallel_for"
"""`void minimlc_parallel_for(ptr pool, ptr body, ptr ctx, i64 n_tasks)`: the thread pool's one entry point."""


def trim_to_count(array: np.ndarray, axis: int, count: np.ndarray) -> np.ndarray:
    """The first `count` (a one-element int64 array native code filled) elements of `array` along `axis`; a count
    outside [0, extent] is a bug in the kernel, refused rather than read past."""
    valid = int(count.reshape(()))
    if not 0 <= valid <= array.shape[axis]:
        raise ValueError(f"data-dependent count {valid} is outside the output's bound {array.shape[axis]}")
    return array[(slice(None),) * axis + (slice(0, valid),)].copy()


def llvm_function_flags(attributes: Mapping[str, Attribute]) -> list[str]:
    """The LLVM attributes of a lowered function with these (discardable) attributes, sorted as llvmlite prints
    them: `minsize optsize` on load-time code (LLVM then neither unrolls nor vectorises it further: ResNet-50's
    weight packing and Winograd weight transforms were 47% of its instructions after LLVM's O3 and a fifth of LLVM's
    time, for code that runs once)."""
    return ["minsize", "optsize"] if LOAD_TIME_ATTR in attributes else []


def packed_name(function: str) -> str:
    """The symbol of an entry's native form, which reads its buffers' pointers from one array: `main` ->
    `main_packed(ptr args)`, the function the runtime calls (`convert_to_llvm.packed_reads`)."""
    return f"{function}_packed"


def output_extents_name(function: str) -> str:
    """The symbol of the function that computes a dynamic entry's output extents from its input extents:
    `main` -> `main_output_extents(memref<Kxi64>, memref<Jxi64>)`."""
    return f"{function}_output_extents"


def init_name(function: str) -> str:
    """The symbol of a function's load-time init function: `main` -> `main_init`."""
    return f"{function}_init"


@dataclass
class EntrySignature:
    """What the runtime binds after the entry's inputs and outputs."""

    weight_names: list[str]
    precomputed_buffers: list[tuple[tuple[int, ...], np.dtype]]
    """Shapes and dtypes of the precomputed buffers, after the weights; non-empty only with an init entry."""
    pool_slot: int | None = None
    """Index of the thread-pool parameter (right after the outputs), if the entry runs parallel loops."""
    extern_calls: list[ExternCall] = field(default_factory=list)
    """The external calls the entry makes, each with the parameter that takes the function's address."""
    extern_status_slot: int | None = None
    """The parameter that takes the run's status word (`EXTERN_STATUS_ATTR`), if there are external calls."""
    extents: EntryExtents | None = None
    """The run-time extents of an entry with `?` input dimensions; None for a static entry."""
    weight_bits: dict[str, int] = field(default_factory=dict)
    """The weights whose values the code relies on fitting so many signed bits (`WEIGHT_BITS_ATTR`)."""


def check_weight_bits(weight_bits: Mapping[str, int], weights: Mapping[str, np.ndarray]) -> None:
    """Refuse, in one line, weights the compiled code would compute wrongly: an integer weight of `weight_bits`
    with a value outside its bits (AVX2's `vpmaddubsw` would saturate where 7 bits were relied on)."""
    for name, bits in weight_bits.items():
        values = np.asarray(weights[name])
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if values.size and (int(values.min()) < low or int(values.max()) > high):
            raise ValueError(
                f"weight '{name}' has values in [{int(values.min())}, {int(values.max())}], outside the {bits}-bit "
                f"range [{low}, {high}] the compiled code relies on; compile the model with these weights instead"
            )


DYNAMIC = -1
"""A `?` dimension in `EntryExtents.shapes` (xDSL's `DYNAMIC_INDEX` in a type)."""


@dataclass(frozen=True)
class EntryExtents:
    """What a runtime needs to call an entry with `?` dimensions:

        func.func @main(%x: memref<?x16xf32>, %y: memref<?x8xf32>, %extents: memref<1xi64>, ...)
            attributes {minimlc.input_extents = 1 : i64, minimlc.output_extents = 1 : i64,
                        minimlc.input_symbols = ["batch"]}

    gives `EntryExtents(slot=2, count=1, output_extents=1, shapes=((-1, 16), (-1, 8)), symbols=("batch",))`."""

    slot: int
    """The `memref<Kxi64>` parameter of the dynamic input extents: the first after the outputs."""
    count: int
    """K, the dynamic input extents (the parameter's length)."""
    output_extents: int
    """J, the dynamic output extents `@main_output_extents` writes (output order, then axis order)."""
    shapes: tuple[tuple[int, ...], ...]
    """The shapes of the entry's input and output parameters, in order, `DYNAMIC` for each `?`."""
    symbols: tuple[str, ...] = ()
    """The symbol of each dynamic input extent, in input order then axis order (K of them once bound)."""


BufferTypes = tuple[tuple[tuple[int, ...], np.dtype], ...]
"""The shapes and dtypes of the buffers an external function is passed, in order."""


@dataclass(frozen=True)
class ExternCall:
    """One external call of the entry: the registered name, its function-pointer parameter, the shapes and dtypes of
    the buffers it is passed (inputs, then `num_outputs` outputs)."""

    callee: str
    slot: int
    buffers: BufferTypes
    num_outputs: int


def buffer_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of a buffer element type: f32, f64, f16 or a signless integer (bfloat16 buffers are i16)."""
    from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IntegerType

    if isinstance(element, IntegerType):
        return np.dtype(f"int{element.width.data}") if element.width.data > 1 else np.dtype(np.bool_)
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element, Float16Type):
        return np.dtype(np.float16)
    if not isinstance(element, Float32Type):
        raise ValueError(f"no runtime buffer type for element type {element}")
    return np.dtype(np.float32)


def extern_calls_in(module: ModuleOp) -> list[tuple[str, BufferTypes]]:
    """The external calls (`graph.call_extern`, `te.call_extern`) of a graph- or te-level module, with the buffers
    each will be passed."""
    from xdsl.dialects.builtin import TensorType

    from minimlc.dialects import graph, te

    found: list[tuple[str, BufferTypes]] = []
    for op in module.walk():
        if isinstance(op, graph.CallExternOp | te.CallExternOp):
            types = [value.type for value in (*op.args, *op.res)]
            buffers = tuple(
                (tuple(t.get_shape()), buffer_dtype(t.element_type)) for t in types if isinstance(t, TensorType)
            )
            found.append((op.callee.data, buffers))
    return found


def entry_signature(module: ModuleOp) -> EntrySignature:
    """Read the entry's weights, precomputed buffers and pool slot from a module lowered past `loop-to-scf`."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, MemRefType

    entry = _function(module, ENTRY_FUNCTION)
    assert isinstance(entry, func.FuncOp)
    weight_names = weight_names_of(entry)
    buffers: list[tuple[tuple[int, ...], np.dtype]] = []
    if INIT_ATTR in entry.attributes:
        types = entry.function_type.inputs.data
        init = _function(module, init_name(ENTRY_FUNCTION))
        assert isinstance(init, func.FuncOp)
        count = len(init.function_type.inputs) - len(weight_names)
        buffers = [
            (tuple(t.get_shape()), buffer_dtype(t.element_type))
            for t in types[len(types) - count :]
            if isinstance(t, MemRefType)
        ]
    pool_slot, status_slot = int_attribute(entry, POOL_ATTR, None), int_attribute(entry, EXTERN_STATUS_ATTR, None)
    calls = extern_calls_of(entry)
    # Inputs and outputs are the parameters before everything the signature binds.
    bound = len(weight_names) + len(buffers) + len(calls) + (pool_slot is not None) + (status_slot is not None)
    extents = entry_extents(entry, len(entry.function_type.inputs) - bound)
    narrow = module.attributes.get(WEIGHT_BITS_ATTR)
    narrow_items = narrow.data.items() if isinstance(narrow, DictionaryAttr) else ()
    weight_bits = {
        name: bits.value.data for name, bits in narrow_items if isinstance(bits, IntegerAttr) and name in weight_names
    }
    return EntrySignature(weight_names, buffers, pool_slot, calls, status_slot, extents, weight_bits)


def entry_extents(entry: func.FuncOp, parameters: int) -> EntryExtents | None:
    """The run-time extents of an entry lowered past `loop-to-scf` whose first `parameters` parameters are its
    inputs, outputs and (with `minimlc.input_extents`) extents; None for a static entry. The symbols are empty
    where the lowered entry no longer carries `minimlc.input_symbols` (the driver takes them from the graph's)."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, MemRefType

    count = int_attribute(entry, INPUT_EXTENTS_ATTR, None)
    if count is None:
        return None
    slot = parameters - 1
    types = entry.function_type.inputs.data
    if not 0 <= slot < len(types) or types[slot] != MemRefType(IntegerType(64), [count]):
        raise ValueError(
            f"@{entry.sym_name.data}: parameter {slot} should be the memref<{count}xi64> of the input extents"
        )
    shapes = tuple(
        tuple(DYNAMIC if size == DYNAMIC_INDEX else size for size in t.get_shape())
        for t in types[:slot]
        if isinstance(t, MemRefType)
    )
    output_count = int_attribute(entry, OUTPUT_EXTENTS_ATTR) or 0
    return EntryExtents(slot, count, output_count, shapes, tuple(input_symbols_of(entry)))


def input_symbols_of(function: func.FuncOp) -> list[str]:
    """A function's `minimlc.input_symbols` (empty if it has none; the graph dialect names the attribute, as the
    importer writes it on the graph-level entry)."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    from minimlc.dialects.graph import INPUT_SYMBOLS_ATTR

    symbols = function.attributes.get(INPUT_SYMBOLS_ATTR, ArrayAttr([]))
    assert isinstance(symbols, ArrayAttr)
    return [symbol.data for symbol in symbols.data if isinstance(symbol, StringAttr)]


def extern_calls_of(function: func.FuncOp | llvm.FuncOp) -> list[ExternCall]:
    """The external calls `loop-to-scf` recorded on a function (`minimlc.externs`)."""
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, MemRefType, StringAttr

    calls = function.attributes.get(EXTERNS_ATTR, ArrayAttr([]))
    assert isinstance(calls, ArrayAttr)
    found: list[ExternCall] = []
    for call in calls.data:
        assert isinstance(call, DictionaryAttr)
        callee, slot, buffers, outputs = (call.data[key] for key in ("callee", "slot", "buffers", "num_outputs"))
        assert isinstance(callee, StringAttr)
        assert isinstance(slot, IntegerAttr)
        assert isinstance(outputs, IntegerAttr)
        assert isinstance(buffers, ArrayAttr)
        types = [
            (tuple(t.get_shape()), buffer_dtype(t.element_type)) for t in buffers.data if isinstance(t, MemRefType)
        ]
        found.append(ExternCall(callee.data, slot.value.data, tuple(types), outputs.value.data))
    return found


def weight_names_of(function: func.FuncOp | llvm.FuncOp) -> list[str]:
    """The names of a function's trailing weight parameters, in order."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    names = function.attributes.get(WEIGHTS_ATTR, ArrayAttr([]))
    assert isinstance(names, ArrayAttr)
    return [name.data for name in names.data if isinstance(name, StringAttr)]


def int_attribute(function: func.FuncOp | llvm.FuncOp, name: str, default: int | None = 0) -> int | None:
    """An integer attribute of a function (`minimlc.arena_bytes`, `minimlc.pool`), or `default`."""
    from xdsl.dialects.builtin import IntegerAttr

    value = function.attributes.get(name)
    return value.value.data if isinstance(value, IntegerAttr) else default


def entry_function(module: ModuleOp) -> func.FuncOp | llvm.FuncOp:
    """The model's entry function: `@main` before convert-to-llvm, `@main_packed` after (which holds its body and
    attributes; `@main` is then its wrapper); ValueError if there is none."""
    from xdsl.dialects import llvm

    packed = next(
        (op for op in module.ops if isinstance(op, llvm.FuncOp) and op.sym_name.data == packed_name(ENTRY_FUNCTION)),
        None,
    )
    return packed if packed is not None else _function(module, ENTRY_FUNCTION)


def _function(module: ModuleOp, name: str) -> func.FuncOp | llvm.FuncOp:
    from xdsl.dialects import func, llvm

    for op in module.ops:
        if isinstance(op, func.FuncOp | llvm.FuncOp) and op.sym_name.data == name:
            return op
    raise ValueError(f"the module has no @{name} function")
