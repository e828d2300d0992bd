"""`CompiledModel`: native code bound to its weights, whichever way the code was made (compiled now, or loaded from
a saved model or the compile cache).

The code's entry `@main_packed(ptr args)` takes inputs, outputs, the pool (at `pool_slot`), weights, then
precomputed buffers (see `minimlc.lowering.abi`); an entry with `?` dimensions takes its run-time extents right after
the outputs, and `@main_output_extents_packed` gives its outputs' (`extents`, `output_extents_entry`). Binding
allocates the precomputed buffers and runs `@main_init_packed` to fill them from the weights, so code never holds
weight values: the same code serves any weights of the same names and shapes (`rebind_weights`). The entries run
under the allocation guard (`runtime.alloc_guard_ir`): an allocation of native code that fails raises
`AllocationError`, and stops the call there.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import (
    DYNAMIC,
    ENTRY_FUNCTION,
    EntryExtents,
    EntrySignature,
    ExternCall,
    check_weight_bits,
    init_name,
    output_extents_name,
    packed_name,
)
from minimlc.lowering.target import Target

_EntryFunction = Callable[[int], None]


class AllocationError(MemoryError):
    """Native code could not allocate the memory a call needs (its intermediate buffers); `size` is the bytes asked
    for. The call stopped at that allocation (`runtime.alloc_guard_ir`): its outputs are not written."""

    def __init__(self, size: int) -> None:
        self.size = size
        super().__init__(
            f"out of memory: the model's native code could not allocate {size} bytes ({size / 2**30:,.1f} GiB) "
            "for its intermediate buffers"
        )

    def __reduce__(self) -> tuple[type[AllocationError], tuple[int]]:
        return AllocationError, (self.size,)  # pickled (from a worker process) by its size, not its message


class NativeCode(Protocol):
    """Loaded native code: a `JitModule` or an `ObjectModule`."""

    target: Target
    object_files: tuple[bytes, ...]

    def function_address(self, name: str) -> int: ...


@dataclass
class CompiledModel:
    """A model compiled to native code: its entry point, the weights it is bound to, and its signature."""

    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    """The outputs the entry computes (the imported model's `computed_outputs`), in order."""
    jit: NativeCode
    entry: _EntryFunction
    """`@main_packed(args)`, under the allocation guard: raises `AllocationError` if the call could not allocate
    its intermediate buffers."""
    weight_addresses: np.ndarray
    """uintp array: the weights' addresses, in entry parameter order (appended after inputs and outputs)."""
    weights: dict[str, np.ndarray] = field(repr=False)
    """The weight store; kept alive for as long as native code may read it."""
    precomputed: list[np.ndarray] = field(repr=False)
    """Buffers the init entry filled from the weights (packed layouts), in entry parameter order."""
    pool_slot: int | None
    """Where the entry takes the thread pool's address (None: the model has no parallel loop)."""
    extern_calls: list[ExternCall] = field(default_factory=list[ExternCall])
    """The entry's external calls; `extern_addresses` are the functions bound to them, in order."""
    extern_status_slot: int | None = None
    """Where the entry takes the run's status word (two int32) when it makes external calls."""
    extern_addresses: list[int] = field(default_factory=list[int], repr=False)
    extern_functions: list[object] = field(default_factory=list[object], repr=False)
    """What keeps the bound functions (Python callables' native trampolines) alive."""
    llvm_ir: str = field(default="", repr=False)
    """The LLVM IR the code was compiled from, its partitions' one after the other (empty for code loaded from
    object code)."""
    compile_seconds: float = 0.0
    stats: dict[str, int | float] = field(default_factory=dict)
    """`model_stats`, plus `compile_seconds` and its stages (see `InferenceSession.stats`)."""
    extents: EntryExtents | None = None
    """The run-time extents of an entry with `?` dimensions (None: every shape is static)."""
    output_extents_entry: _EntryFunction | None = field(default=None, repr=False)
    """`@main_output_extents_packed([input extents, output extents])`, for an entry with dynamic output extents."""
    weight_bits: dict[str, int] = field(default_factory=dict[str, int])
    """The weights the code relies on fitting so many signed bits (`EntrySignature.weight_bits`), checked at binding."""

    @property
    def signature(self) -> EntrySignature:
        """The entry's trailing ABI, as bound."""
        buffers = [(buffer.shape, buffer.dtype) for buffer in self.precomputed]
        return EntrySignature(
            list(self.weights),
            buffers,
            self.pool_slot,
            list(self.extern_calls),
            self.extern_status_slot,
            self.extents,
            dict(self.weight_bits),
        )


def bind(
    inputs: Sequence[TensorInfo],
    outputs: Sequence[TensorInfo],
    code: NativeCode,
    signature: EntrySignature,
    weights: Mapping[str, np.ndarray],
    llvm_ir: str = "",
) -> CompiledModel:
    """Bind `code` to `weights` (the store, with at least the signature's names) and its external calls to the
    registered functions (`runtime.extern`; `ExternalFunctionError` if one is missing), and run its init entry."""
    from minimlc.runtime.extern import bind_calls

    if signature.extents is not None:
        _check_extents(signature.extents, inputs, outputs)

    extern_addresses, extern_functions = bind_calls(signature.extern_calls)
    bound = {name: np.ascontiguousarray(weights[name]) for name in signature.weight_names}
    check_weight_bits(signature.weight_bits, bound)
    precomputed = fresh_buffers(signature.precomputed_buffers)
    compiled = CompiledModel(
        inputs=list(inputs),
        outputs=list(outputs),
        jit=code,
        entry=_packed_function(code, ENTRY_FUNCTION),
        weight_addresses=_addresses([*bound.values(), *precomputed]),
        weights=bound,
        precomputed=precomputed,
        pool_slot=signature.pool_slot,
        extern_calls=list(signature.extern_calls),
        extern_status_slot=signature.extern_status_slot,
        extern_addresses=extern_addresses,
        extern_functions=extern_functions,
        llvm_ir=llvm_ir,
        extents=signature.extents,
        weight_bits=dict(signature.weight_bits),
    )
    if signature.extents is not None and signature.extents.output_extents:
        compiled.output_extents_entry = _packed_function(code, output_extents_name(ENTRY_FUNCTION))
    _run_init(compiled)
    return compiled


def _check_extents(extents: EntryExtents, inputs: Sequence[TensorInfo], outputs: Sequence[TensorInfo]) -> None:
    """Refuse an extents ABI that does not fit the entry's parameters (a compiler bug: better no call than an
    overrun): one shape per input and output, K `?` among the inputs' with a symbol each, J among the outputs'."""
    shapes = extents.shapes
    problem = ""
    if len(shapes) != len(inputs) + len(outputs) or extents.slot != len(shapes):
        problem = f"{len(shapes)} input and output parameters before the extents (slot {extents.slot})"
    elif len(extents.symbols) != extents.count:
        problem = f"{len(extents.symbols)} symbols {extents.symbols} for {extents.count} input extents"
    elif sum(size == DYNAMIC for shape in shapes[: len(inputs)] for size in shape) != extents.count:
        problem = f"{extents.count} input extents for the inputs' ? dimensions in {shapes[: len(inputs)]}"
    elif sum(size == DYNAMIC for shape in shapes[len(inputs) :] for size in shape) != extents.output_extents:
        problem = f"{extents.output_extents} output extents for the outputs' ? dimensions in {shapes[len(inputs) :]}"
    elif any(info.shape and len(info.shape) != len(shape) for info, shape in zip((*inputs, *outputs), shapes)):
        problem = f"parameter shapes {shapes} of other ranks than the model's inputs and outputs"
    if problem:
        raise ValueError(
            f"the entry's run-time extents do not fit its {len(inputs)} inputs and {len(outputs)} outputs: {problem}"
        )


def rebind_weights(compiled: CompiledModel, weights: Mapping[str, np.ndarray]) -> CompiledModel:
    """The same native code bound to other weights (same names, shapes and dtypes), with its init entry rerun.

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
    check_weight_bits(compiled.weight_bits, bound)
    precomputed = fresh_buffers([(buffer.shape, buffer.dtype) for buffer in compiled.precomputed])
    rebound = replace(
        compiled, weights=bound, precomputed=precomputed, weight_addresses=_addresses([*bound.values(), *precomputed])
    )
    _run_init(rebound)
    return rebound


ALIGNMENT = 64
"""Byte alignment of the buffers native code reads (a cache line, enough for any vector load), in memory and in
files."""


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An array of `dtype` whose data starts on an `ALIGNMENT`-byte boundary."""
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + ALIGNMENT, dtype=np.uint8)
    offset = -raw.ctypes.data % ALIGNMENT
    return raw[offset : offset + size].view(dtype).reshape(shape)


def fresh_buffers(buffers: Sequence[tuple[tuple[int, ...], np.dtype | str]]) -> list[np.ndarray]:
    """Uninitialised arrays of these shapes and dtypes, each on an `ALIGNMENT`-byte boundary, views of one block of
    memory, from `POPULATED_FROM` bytes on faulted in at once (`_populated_pages`): ResNet-50's 204 precomputed
    buffers (201 MB) are one mapping.

        fresh_buffers([((64, 3, 7, 7), float32), ((10,), int8)])   # views at offsets 0 and 37,632 of 37,696 bytes
    """
    offsets = []
    size = 0
    for shape, dtype in buffers:
        offsets.append(size)
        size = align_up(size + int(np.prod(shape)) * np.dtype(dtype).itemsize)
    block = _populated_pages(size)
    if block is None:
        block = aligned_empty((size,), np.dtype(np.uint8))
    return [
        block[offset : offset + int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype).reshape(shape)
        for offset, (shape, dtype) in zip(offsets, buffers)
    ]


POPULATED_FROM = 1 << 20
"""Blocks of at least this many bytes are mapped and faulted in at once (`_populated_pages`)."""


def _populated_pages(size: int) -> np.ndarray | None:
    """`size` bytes of new private memory, page-aligned and faulted in, writable, by the mapping call itself
    (`MAP_POPULATE`); None below `POPULATED_FROM` or where `mmap` has no such flag (not Linux). The init entry
    writing ResNet-50's precomputed weights page by page took 49,000 faults (0.4-0.5 s on a virtual machine, where
    each is a trap); populated at once, 0.13-0.2 s. No huge-page advice: on that machine huge pages took 1.1-1.4 s to
    come, as they did for the arrays numpy advises so (over 4 MB)."""
    if size < POPULATED_FROM or not hasattr(mmap, "MAP_POPULATE"):
        return None
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE
    return np.frombuffer(mmap.mmap(-1, size, flags=flags), dtype=np.uint8)


def align_up(offset: int) -> int:
    """`offset` rounded up to a multiple of `ALIGNMENT` (where a buffer may start in a file)."""
    return -(-offset // ALIGNMENT) * ALIGNMENT


def _addresses(buffers: Sequence[np.ndarray]) -> np.ndarray:
    return np.array([buffer.ctypes.data for buffer in buffers], dtype=np.uintp)


def _run_init(compiled: CompiledModel) -> None:
    """Fill the precomputed buffers (packed weights) from the weights, once per binding."""
    if compiled.precomputed:
        _packed_function(compiled.jit, init_name(ENTRY_FUNCTION))(compiled.weight_addresses.ctypes.data)


def _packed_function(code: NativeCode, name: str) -> _EntryFunction:
    """`name`'s packed function, called under the allocation guard: raises `AllocationError` if an allocation of
    the call failed. The code must have been loaded after `threadpool.register_symbols()`."""
    from minimlc.runtime.threadpool import native_pool

    address = code.function_address(packed_name(name))
    guarded_call = native_pool().guarded_call

    def call(args: int) -> None:
        failed = guarded_call(address, args)
        if failed:
            raise AllocationError(failed)

    return call
