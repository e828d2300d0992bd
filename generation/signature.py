"""What a decoder model takes and gives, found by the names exporters write: `DecoderSignature`.

    input_ids [batch, sequence]                       (or [batch, 1]: one token per call)
    attention_mask [batch, past + sequence]           optional
    position_ids [batch, sequence]                    optional
    past_key_values.<l>.key / .value                  (Optimum, transformers)   -> present.<l>.key / .value
    past_key_<l> / past_value_<l>                     (onnxruntime-genai style) -> present_key_<l> / present_value_<l>
    past_key_values_<l>_key / _value                  (torch.onnx)              -> present_<l>_key / _value
    logits [batch, sequence, vocab]                   (`logits`, else the first output that is not a present)

Each cache input is [batch, kv_heads, past, head_size]: its sequence axis is the one whose declared dimension the
present grows (a symbol), axis 2 where that is not declared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_PAST = (
    re.compile(r"past_key_values\.(?P<layer>\d+)\.(?P<kind>key|value)"),
    re.compile(r"past_(?P<kind>key|value)_(?P<layer>\d+)"),
    re.compile(r"past_key_values_(?P<layer>\d+)_(?P<kind>key|value)"),
)
_PRESENT = (
    re.compile(r"present\.(?P<layer>\d+)\.(?P<kind>key|value)"),
    re.compile(r"present_(?P<kind>key|value)_(?P<layer>\d+)"),
    re.compile(r"present_(?P<layer>\d+)_(?P<kind>key|value)"),
    re.compile(r"present_key_values_(?P<layer>\d+)_(?P<kind>key|value)"),
)
_KNOWN_INPUTS = ("input_ids", "attention_mask", "position_ids")


class NotADecoderError(ValueError):
    """The model's inputs or outputs are not those of a decoder with a KV cache (the message says which)."""


@dataclass(frozen=True)
class CacheEntry:
    """One cache tensor: its past input, the present output that continues it, and its declared shape."""

    past: str
    present: str
    shape: tuple[int | str, ...]
    axis: int
    """The sequence axis (the one that grows)."""

    def empty(self, batch: int, dtype: Any) -> np.ndarray:
        """The cache before the first token: zero positions along `axis`."""
        sizes = [batch if n == 0 else 0 if n == self.axis else size for n, size in enumerate(self.shape)]
        if any(not isinstance(size, int) for size in sizes):
            raise NotADecoderError(
                f"cache input '{self.past}' is declared {list(self.shape)}: its sizes other than batch and sequence "
                "must be fixed to start from an empty cache"
            )
        return np.zeros(sizes, dtype)


@dataclass(frozen=True)
class DecoderSignature:
    input_ids: str
    attention_mask: str | None
    position_ids: str | None
    logits: str
    cache: tuple[CacheEntry, ...]
    whole_prompt: bool
    """Whether `input_ids` takes many tokens per call (a prefill), else one."""

    @classmethod
    def of(cls, inputs: Sequence[Any], outputs: Sequence[Any]) -> DecoderSignature:
        """The signature of a model with `inputs` and `outputs` (each with `name` and `shape`)."""
        by_name = {info.name: info for info in inputs}
        if "input_ids" not in by_name:
            raise NotADecoderError(f"the model has no input 'input_ids' (its inputs: {', '.join(by_name)})")
        ids_shape = tuple(by_name["input_ids"].shape)
        if len(ids_shape) != 2:
            raise NotADecoderError(f"input 'input_ids' is declared {list(ids_shape)}: expected [batch, sequence]")
        presents = {_key(info.name, _PRESENT): info for info in outputs if _key(info.name, _PRESENT) is not None}
        cache, unknown = [], []
        for info in inputs:
            key = _key(info.name, _PAST)
            if key is None:
                if info.name not in _KNOWN_INPUTS:
                    unknown.append(info.name)
                continue
            if key not in presents:
                raise NotADecoderError(f"cache input '{info.name}' has no present output (layer {key[0]} {key[1]})")
            present = presents[key]
            cache.append(CacheEntry(info.name, present.name, tuple(info.shape), _sequence_axis(info, present)))
        if unknown:
            raise NotADecoderError(
                f"inputs {', '.join(map(repr, unknown))} are not a decoder's (input_ids, "
                "attention_mask, position_ids, past key/value caches)"
            )
        if not cache:
            raise NotADecoderError("the model has no KV-cache inputs (past_key_values.<l>.key, past_key_<l>, ...)")
        names = [info.name for info in outputs if _key(info.name, _PRESENT) is None]
        logits = "logits" if "logits" in names else names[0] if names else None
        if logits is None:
            raise NotADecoderError("the model has no logits output")
        return cls(
            "input_ids",
            "attention_mask" if "attention_mask" in by_name else None,
            "position_ids" if "position_ids" in by_name else None,
            logits,
            tuple(sorted(cache, key=lambda entry: _key(entry.past, _PAST))),  # type: ignore[arg-type, return-value]
            ids_shape[1] != 1,
        )

    @property
    def past_symbols(self) -> list[str]:
        """The symbols naming the caches' lengths (to bound by the maximum length)."""
        return list(dict.fromkeys(str(e.shape[e.axis]) for e in self.cache if isinstance(e.shape[e.axis], str)))


def _key(name: str, patterns: Sequence[re.Pattern[str]]) -> tuple[int, str] | None:
    for pattern in patterns:
        if match := pattern.fullmatch(name):
            return int(match["layer"]), match["kind"]
    return None


def _sequence_axis(past: Any, present: Any) -> int:
    grown = [n for n, (a, b) in enumerate(zip(past.shape, present.shape)) if n > 0 and a != b]
    return grown[0] if len(grown) == 1 else 2
