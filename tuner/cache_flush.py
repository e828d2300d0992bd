"""Where a candidate's weights are when a timed call starts: what a kernel meets in the model, not in a loop of calls.

Timed alone and repeated, a kernel finds its weights in its core's caches. In a model it does not: each kernel's
weights are read once per inference, after the other kernels have passed through the caches. Two cache states
(`CACHE_MODES`), chosen by the model's weight bytes (`cache_mode_for`):

- `warm`: as repeated calls leave them (a model whose weights fit the core's L2);
- `cold`: flushed to memory, one `clflush` per 64-byte line then a fence (any larger model). Light ResNet-50's
  stage-4 convolutions ran at 200-235 GFLOP/s with their weights flushed and at 265-280 warm (Zen 5, one thread).
  Even SqueezeNet's 4.7 MiB, which a 32 MiB L3 could hold, behaved as flushed on the 2-core cloud VM (its L3 shared
  with other tenants): prefetching the next weight panel in all of its eight largest convolutions measured 0.956x
  flushed, 1.003x with the weights pushed only out of L2 (a scratch buffer twice its size read before each call),
  and 0.964x in the model (`bench_ab.py --clock cpu`). Not only the weights: a tuning that flushed only them chose
  for ResNet-50's stem and its pad + max pool configs that ran 1.2x and 1.5x the defaults' time in the model, where
  their inputs and outputs (0.6-3.2 MB) come from memory too; flushing every input and output instead cost
  ShuffleNet and Inception v2 their tuning gains (tuned / default 0.966 -> 1.009 and 0.963-0.977 -> 1.012: their
  activations, under 1 MB, stay in cache in the model). So the measurer flushes the weights and the inputs and
  outputs larger than the L2 (`measure._Call.touched`). TVM's measurer has the same switch (`enable_cpu_cache_flush`).

    evictor = CacheEvictor("cold")
    evictor.evict([weights, packed_weights, large_input])   # the next access of each line goes to memory

The eviction runs outside the clock, before each timed call.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Sequence

import numpy as np

from minimlc.lowering.strategy.tuning_db import CACHE_MODES
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
    sizes (`Target.cache_bytes`): `cold` where they exceed the L2 and `clflush` exists."""
    return "cold" if weight_bytes > cache_bytes[1] and can_flush() else "warm"


class CacheEvictor:
    """Puts buffers into one of the cache states of `CACHE_MODES` (see the module docstring)."""

    def __init__(self, mode: str) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
        if mode == "cold" and not can_flush():
            raise RuntimeError(f"flushing caches needs an x86-64 host, not {platform.machine()}")
        self.mode = mode
        self._flush_lines = None
        if mode == "cold":
            self._jit = JitModule(_FLUSH_IR, opt_level=0)
            prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
            self._flush_lines = prototype(self._jit.function_address("flush_lines"))

    def evict(self, buffers: Sequence[np.ndarray]) -> None:
        """Move `buffers` (contiguous arrays) out of every cache level (`cold`; nothing for `warm`)."""
        if self._flush_lines is not None:
            for buffer in buffers:
                if buffer.nbytes:
                    start = buffer.ctypes.data - buffer.ctypes.data % CACHE_LINE
                    self._flush_lines(start, buffer.ctypes.data + buffer.nbytes - start)
