"""The KV cache of one generation: `KVCache`, each entry either a buffer allocated once and written in place, or the
model's last present.

    cache = KVCache(signature.cache, dtypes, layout.rewritten, buffers)
    feeds = cache.feeds(length)              # pasts of `length` positions: buffer[:length] views, or the presents
    cache.update(presents, length)           # new positions written at buffer[length:], or the presents kept

A rewritten entry (`cache_layout.sequence_major_cache`) has a `[max_length, batch, heads, size]` buffer whose first
`length` positions are the past, one contiguous block; its present output holds only the step's new positions,
copied in after them. Any other entry's present replaces its past.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from minimlc.generation.signature import CacheEntry


class CacheBuffers:
    """The sequence-major buffers of the rewritten entries, allocated once per batch size and reused."""

    def __init__(self, max_length: int):
        self.max_length = max_length
        self._batch: int | None = None
        self._buffers: dict[str, np.ndarray] = {}

    @property
    def current(self) -> dict[str, np.ndarray]:
        """The buffers of the last batch size, by past input name."""
        return self._buffers

    def for_batch(self, entries: Sequence[CacheEntry], dtypes: Sequence[np.dtype], batch: int) -> dict[str, np.ndarray]:
        """Each entry's `[max_length, batch, heads, size]` buffer (entries' shapes are batch-major, as declared)."""
        if self._batch != batch:
            self._buffers = {
                entry.past: np.empty((self.max_length, batch, *_head_sizes(entry)), dtype)
                for entry, dtype in zip(entries, dtypes)
            }
            self._batch = batch
        return self._buffers


class KVCache:
    def __init__(
        self,
        entries: Sequence[CacheEntry],
        dtypes: Sequence[np.dtype],
        rewritten: Collection[str],
        buffers: CacheBuffers,
        batch: int,
    ):
        in_place = [(entry, dtype) for entry, dtype in zip(entries, dtypes) if entry.past in rewritten]
        self._entries = list(entries)
        self._buffers = buffers.for_batch([e for e, _ in in_place], [d for _, d in in_place], batch)
        self._presents = {
            entry.past: entry.empty(batch, dtype)
            for entry, dtype in zip(entries, dtypes)
            if entry.past not in self._buffers
        }

    def feeds(self, length: int) -> dict[str, np.ndarray]:
        """Each past input for a cache of `length` positions."""
        return {
            entry.past: self._buffers[entry.past][:length]
            if entry.past in self._buffers
            else self._presents[entry.past]
            for entry in self._entries
        }

    def update(self, presents: Sequence[np.ndarray], length: int) -> None:
        """Take a step's present outputs (in entry order) after a cache of `length` positions."""
        for entry, present in zip(self._entries, presents):
            if entry.past in self._buffers:
                self._buffers[entry.past][length : length + present.shape[0]] = present
            else:
                self._presents[entry.past] = present


def _head_sizes(entry: CacheEntry) -> tuple[int, ...]:
    """A rewritten entry's sizes other than batch and sequence (heads, size), which must be fixed."""
    sizes = tuple(size for n, size in enumerate(entry.shape) if n not in (0, entry.axis))
    if not all(isinstance(size, int) for size in sizes):
        raise ValueError(
            f"cache input '{entry.past}' is declared {list(entry.shape)}: its heads and size must be fixed"
        )
    return sizes  # type: ignore[return-value]
