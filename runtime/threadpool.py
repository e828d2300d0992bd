"""`ThreadPool`: the native pool that runs a model's parallel loops; `shared_pool(n)`, the one that every session of
`n` threads in the process shares.

The pool's code (`runtime.threadpool_ir`) is JIT-compiled once per process, or loaded from the copy a saved model
holds (`load_pool_code`: ten times cheaper than compiling it); each `ThreadPool` owns one native pool (its own
workers). Sessions share `shared_pool(num_threads)`, so that a process of many sessions holds one pool's threads
per thread count (200 sessions of pools of their own held 200 pools' threads). Model code calls
`minimlc_parallel_for` as an external function: `register_symbols()` binds that name to the one compiled copy with
`llvmlite.binding.add_symbol` before a model's module is JIT-compiled (and model code's `aligned_alloc` to the
allocation guard the pool code holds, `runtime.alloc_guard_ir`). The binding is process-global but cannot collide,
since every session binds the same name to the same address; which pool to use is a run-time argument (the entry's
`minimlc.pool` parameter).

    pool = ThreadPool(2)                     # or shared_pool(2), which the caller must not close
    register_symbols()                       # before JIT-compiling a module that calls minimlc_parallel_for
    args[pool_slot] = pool.address           # the pool parameter of the entry
    pool.close()                             # or let the finalizer destroy it
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import llvmlite.binding as llvm

from minimlc.lowering.abi import PARALLEL_FOR
from minimlc.lowering.target import Target
from minimlc.runtime.alloc_guard_ir import CHECKED_ALLOC, GUARDED_CALL, GUARDED_SYMBOL
from minimlc.runtime.compiled import NativeCode
from minimlc.runtime.jit import JitModule, ObjectModule
from minimlc.runtime.threadpool_ir import PoolOptions, build_pool_module

_native_pools: dict[PoolOptions, NativePool] = {}


@dataclass(frozen=True)
class NativePool:
    """The compiled pool functions of one `PoolOptions`, callable from Python."""

    jit: NativeCode
    create: Callable[[int], int | None]
    destroy: Callable[[int], None]
    num_threads: Callable[[int], int]
    tasks_run: Callable[[int, int], int]
    parallel_for: Callable[[int, int, int, int], None]
    guarded_call: Callable[[int, int], int]
    """`minimlc_guarded_call(entry, args)`: 0, or the bytes an allocation of the entry failed to get
    (`runtime.alloc_guard_ir`)."""


def native_pool(options: PoolOptions = PoolOptions()) -> NativePool:
    """The pool code for `options`, compiled on first use (or loaded by `load_pool_code`) and kept for the life of the
    process."""
    pool = _native_pools.get(options)
    if pool is None:
        pool = _native_pools.setdefault(options, _bind_pool(JitModule(str(build_pool_module(options)))))
    return pool


def pool_code_ready() -> bool:
    """Whether this process has its default pool code (compiled or loaded), so that `native_pool()` compiles nothing."""
    return PoolOptions() in _native_pools


def pool_object_code(target: Target) -> bytes:
    """The default pool code compiled for `target`, as an object file for `load_pool_code` (saved with a model).

    This process's pool code serves when it was built for `target`, whether compiled here (a `JitModule`) or loaded
    from a saved model or a compile-cache entry (an `ObjectModule`): both keep the one object file they run."""
    jit = native_pool().jit
    if jit.target == target:
        (object_code,) = jit.object_files
        return object_code
    return JitModule(str(build_pool_module(PoolOptions())), target=target).object_code


def load_pool_code(object_code: bytes, target: Target) -> None:
    """Make `object_code` (`pool_object_code(target)`, from a saved model) this process's default pool code, unless it
    has one already; ValueError if the host cannot run code built for `target`."""
    if PoolOptions() not in _native_pools:
        _native_pools.setdefault(PoolOptions(), _bind_pool(ObjectModule([object_code], target)))


def _bind_pool(jit: NativeCode) -> NativePool:
    address = jit.function_address
    return NativePool(
        jit=jit,
        create=ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int32)(address("minimlc_pool_create")),
        destroy=ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address("minimlc_pool_destroy")),
        num_threads=ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(address("minimlc_pool_num_threads")),
        tasks_run=ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int32)(address("minimlc_pool_tasks_run")),
        parallel_for=ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
            address(PARALLEL_FOR)
        ),
        guarded_call=ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)(address(GUARDED_CALL)),
    )


def symbol_addresses() -> dict[str, int]:
    """Name -> address of every pool function model code may call (the default pool code), and of the checked
    allocation its `aligned_alloc` calls link to (`runtime.alloc_guard_ir`)."""
    jit = native_pool().jit
    return {PARALLEL_FOR: jit.function_address(PARALLEL_FOR), GUARDED_SYMBOL: jit.function_address(CHECKED_ALLOC)}


@functools.cache
def register_symbols() -> None:
    """Bind `symbol_addresses()` for MCJIT (once per process); call it before JIT-compiling or loading model code.
    `aligned_alloc` then links to `minimlc_checked_alloc` in every module MCJIT loads afterwards: outside a guarded
    call it is `aligned_alloc`."""
    for name, address in symbol_addresses().items():
        llvm.add_symbol(name, address)


def resolve_num_threads(num_threads: int | None) -> int:
    """`num_threads`, or the machine's core count for None; raises on anything but a positive int."""
    if num_threads is None:
        return os.cpu_count() or 1
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive integer or None, got {num_threads!r}")
    return num_threads


_shared_pools: weakref.WeakValueDictionary[int, ThreadPool] = weakref.WeakValueDictionary()
_shared_pools_lock = threading.Lock()


def shared_pool(num_threads: int | None = None) -> ThreadPool:
    """The process's pool of `num_threads` threads (None: one per core), which every session of that thread count
    shares: started by the first that needs it, joined once none holds it any more. A run that finds it busy with
    another thread's run (of any session) runs its parallel loops on its own thread, as it did with a pool of its own
    busy; so many sessions hold one pool's threads, not one pool each. Never close a shared pool."""
    requested = resolve_num_threads(num_threads)
    with _shared_pools_lock:
        pool = _shared_pools.get(requested)
        if pool is None:
            pool = _shared_pools[requested] = ThreadPool(requested)
        return pool


class ThreadPool:
    """A native pool of `num_threads` threads (the calling thread included; None: one per core).

    Workers start here and wait for work; `close()` (or garbage collection) joins them. `run_tasks` and model
    entries may be called from several threads at once: a call that finds the pool busy runs its tasks inline.
    """

    def __init__(self, num_threads: int | None = None, options: PoolOptions = PoolOptions()) -> None:
        """Start the workers; raises `ValueError` for a bad `num_threads`, `MemoryError` if allocation fails."""
        requested = resolve_num_threads(num_threads)
        self._native = native_pool(options)
        handle = self._native.create(requested)
        if not handle:
            raise MemoryError("minimlc_pool_create could not allocate the pool")
        self._handle: int | None = handle
        self._finalizer = weakref.finalize(self, self._native.destroy, handle)

    @property
    def address(self) -> int:
        """The native `Pool *`, for the entry's pool parameter; raises `RuntimeError` once closed."""
        if self._handle is None:
            raise RuntimeError("the thread pool is closed")
        return self._handle

    @property
    def num_threads(self) -> int:
        """Threads that run tasks, the caller included (fewer than requested only if thread creation failed)."""
        return int(self._native.num_threads(self.address))

    def task_counts(self) -> list[int]:
        """Tasks each thread (the caller first) ran in the pool's jobs since it started; tasks run inline (a one-thread
        pool, a nested or concurrent call) are not counted. Read it while the pool is idle."""
        return [int(self._native.tasks_run(self.address, thread)) for thread in range(self.num_threads)]

    def run_tasks(self, body: int, ctx: int, n_tasks: int) -> None:
        """Call the native `body(ctx, task)` for every task in [0, n_tasks), on the pool."""
        self._native.parallel_for(self.address, body, ctx, n_tasks)

    def close(self) -> None:
        """Join the workers and free the pool; the pool must be idle. Closing twice is harmless."""
        self._handle = None
        self._finalizer()

    def __enter__(self) -> ThreadPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
