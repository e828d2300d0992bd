"""Evicting buffers from every cache level before a timed call: what a kernel meets in a large model.

In light ResNet-50 (about 100 MB of weights, more than the last-level cache) every convolution's weights come from
memory once per inference; timed alone and repeated, the same kernel finds them in cache. The stage-4 convolutions
ran at 200-215 GFLOP/s in the model and at 265-280 alone (Zen 5, one thread), so a tuner timing warm ranks
schedules by a cost the model never pays. As TVM's measurer can (`enable_cpu_cache_flush`), the measurer flushes
the buffers a call reads from memory (`CacheFlusher.flush`, one `clflush` per 64-byte line, then a fence) before
each timed call and times the calls one by one:

    flusher = CacheFlusher()
    flusher.flush([weights, packed_weights])   # the next read of each line comes from memory

The flush itself is a few microseconds per 100 KB; it runs outside the clock.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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


def last_level_cache_bytes() -> int | None:
    """The size of the largest cache of CPU 0 (Linux sysfs), or None where the system does not say."""
    sizes = []
    for folder in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (folder / "size").read_text().strip()
        except OSError:
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        if text[-1:] in units and text[:-1].isdigit():
            sizes.append(int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            sizes.append(int(text))
    return max(sizes) if sizes else None


def can_flush() -> bool:
    """Whether this host has `clflush` (x86-64 only)."""
    return platform.machine().lower() in ("x86_64", "amd64")


class CacheFlusher:
    """A JIT-compiled `clflush` loop (see the module docstring)."""

    def __init__(self) -> None:
        if not can_flush():
            raise RuntimeError(f"flushing caches needs an x86-64 host, not {platform.machine()}")
        self._jit = JitModule(_FLUSH_IR, opt_level=0)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
        self._flush_lines = prototype(self._jit.function_address("flush_lines"))

    def flush(self, buffers: Sequence[np.ndarray]) -> None:
        """Evict every cache line of `buffers` (contiguous arrays) from every level of the cache hierarchy."""
        for buffer in buffers:
            if buffer.nbytes:
                start = buffer.ctypes.data - buffer.ctypes.data % CACHE_LINE
                self._flush_lines(start, buffer.ctypes.data + buffer.nbytes - start)
