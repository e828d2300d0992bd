"""Where a candidate's weights are when a timed call starts: what a kernel meets in the model, not in a loop of calls.

Timed alone and repeated, a kernel finds its weights in its core's own caches. In a model it rarely does: each
kernel's weights are read once per inference, after the other kernels have passed through the caches. Three cache
states (`CACHE_MODES`), chosen by how much of the hierarchy the model's weights fill (`cache_mode_for`):

- `warm`: as repeated calls leave them (a model whose weights fit the core's L2);
- `llc`: evicted from the core's private caches into the shared last-level cache, by reading a scratch buffer twice
  the L2's size (a model whose weights fit half the last-level cache: SqueezeNet, ShuffleNet);
- `cold`: flushed to memory, one `clflush` per 64-byte line then a fence (a larger model: light ResNet-50's 98 MiB
  of weights; its stage-4 convolutions ran at 200-235 GFLOP/s with their weights flushed and at 265-280 warm, Zen 5,
  one thread). TVM's measurer has the same switch (`enable_cpu_cache_flush`).

    evictor = CacheEvictor("cold")
    evictor.evict([weights, packed_weights])   # the next read of each line comes from memory

The eviction runs outside the clock, before each timed call.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Sequence

import numpy as np

from minimlc.lowering.schedule.tuning_db import CACHE_MODES
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule

CACHE_LINE = 64

_FLUSH_IR = """
declare void @llvm.x86.sse2.clflush(ptr)
declare void @llvm.x86.sse2.mfence()

define void @flush_lines(ptr %start, i64 %bytes) {
entry:
  %empty = icmp eq i64 %bytes, 0
  br i1 %empty, label %done, label %line
line:
  %offset = phi i64 [ 0, %entry ], [ %next, %line ]
  %address = getelementptr i8, ptr %start, i64 %offset
  call void @llvm.x86.sse2.clflush(ptr %address)
  %next = add i64 %offset, 64
  %more = icmp ult i64 %next, %bytes
  br i1 %more, label %line, label %done
done:
  call void @llvm.x86.sse2.mfence()
  ret void
}
"""


def can_flush() -> bool:
    """Whether this host has `clflush` (x86-64 only)."""
    return platform.machine().lower() in ("x86_64", "amd64")


def cache_mode_for(weight_bytes: int, cache_bytes: tuple[int, int, int]) -> str:
    """The cache state a model's kernels find their weights in (see the module docstring), given the L1, L2 and L3
    sizes (`Target.cache_bytes`); `warm` where `clflush` is missing."""
    if not can_flush():
        return "warm"
    _, private, shared = cache_bytes
    if 2 * weight_bytes > shared:
        return "cold"
    return "llc" if weight_bytes > private else "warm"


class CacheEvictor:
    """Puts buffers into one of the cache states of `CACHE_MODES` (see the module docstring)."""

    def __init__(self, mode: str) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
        if mode != "warm" and not can_flush():
            raise RuntimeError(f"evicting caches needs an x86-64 host, not {platform.machine()}")
        self.mode = mode
        l2_bytes = target_from_name("host").cache_bytes[1]
        self._scratch = np.ones(2 * l2_bytes // 4, np.float32) if mode == "llc" else None
        self._flush_lines = None
        if mode == "cold":
            self._jit = JitModule(_FLUSH_IR, opt_level=0)
            prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
            self._flush_lines = prototype(self._jit.function_address("flush_lines"))

    def evict(self, buffers: Sequence[np.ndarray]) -> None:
        """Move `buffers` (contiguous arrays) out of the caches this mode empties (nothing for `warm`)."""
        if self._scratch is not None:
            float(self._scratch.sum())  # streams the scratch through L1 and L2, pushing the rest out
        if self._flush_lines is not None:
            for buffer in buffers:
                if buffer.nbytes:
                    start = buffer.ctypes.data - buffer.ctypes.data % CACHE_LINE
                    self._flush_lines(start, buffer.ctypes.data + buffer.nbytes - start)
