"""The next token from the last position's logits: greedy, or sampled with temperature, top-k and top-p.

    rng = np.random.default_rng(seed)
    choose(logits, rng, SamplingOptions(do_sample=True, top_k=50, top_p=0.9, temperature=0.7))   # one id per row

As transformers' sampling does: the logits are divided by the temperature, cut to the `top_k` largest, then to the
smallest set of the largest whose probabilities reach `top_p` (the largest always kept), renormalised, and one id
drawn per row from `rng`, so a seed reproduces the sequence. Computed in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingOptions:
    do_sample: bool = False
    top_k: int | None = None
    top_p: float | None = None
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError(f"temperature must be positive, got {self.temperature}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")


def choose(logits: np.ndarray, rng: np.random.Generator, options: SamplingOptions) -> np.ndarray:
    """One token id per row of `logits` [batch, vocab] (int64)."""
    if not options.do_sample:
        return logits.argmax(axis=-1).astype(np.int64)
    scaled = logits.astype(np.float64) / options.temperature
    order = np.argsort(-scaled, axis=-1, kind="stable")
    ranked = np.take_along_axis(scaled, order, axis=-1)
    if options.top_k is not None:
        ranked[:, options.top_k :] = -np.inf
    probabilities = np.exp(ranked - ranked[:, :1])
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    if options.top_p is not None:
        before = np.cumsum(probabilities, axis=-1) - probabilities  # the mass of the larger ones
        probabilities[before >= options.top_p] = 0.0
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
    picked = [rng.choice(len(row), p=row) for row in probabilities]
    return np.take_along_axis(order, np.array(picked).reshape(-1, 1), axis=-1)[:, 0].astype(np.int64)
