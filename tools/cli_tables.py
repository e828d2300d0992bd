"""The tables `minimlc compile` prints: stage timings, model statistics, and schedule spaces (`--emit space`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def space_table(spaces: list[dict[str, Any]]) -> str:
    """Per kernel a header (kernel, rule, calls), then one line per knob: its name, default and range."""
    lines: list[str] = []
    for space in spaces:
        calls = space["calls"] or "0 (load time only)"
        lines.append(f"{space['kernel']}  rule {space['rule']}  calls {calls}")
        width = max((len(knob["name"]) for knob in space["knobs"]), default=0)
        for knob in space["knobs"]:
            values = ", ".join(json.dumps(value) for value in knob["values"])
            lines.append(f"  {knob['name']:<{width}}  default {json.dumps(knob['default']):<8}  of {values}")
    return "\n".join(lines) + "\n"


def timing_table(model: str, timings: Sequence[tuple[str, float]]) -> str:
    width = max(len(stage) for stage, _ in (*timings, ("total", 0.0)))
    lines = [f"compile time of {model}:"]
    lines += [f"  {stage:<{width}}  {seconds:8.3f} s" for stage, seconds in timings]
    lines.append(f"  {'total':<{width}}  {sum(seconds for _, seconds in timings):8.3f} s")
    return "\n".join(lines)


def stats_table(model: str, stats: dict[str, int | float]) -> str:
    """The keys of `InferenceSession.stats`, aligned, with the arena as a share of the intermediates."""
    width = max(len(key) for key in stats)
    lines = [f"statistics of {model}:"]
    for key, value in stats.items():
        text = f"{value:12.3f}" if isinstance(value, float) else f"{value:12,d}"
        if key == "arena_bytes" and stats.get("intermediate_bytes"):
            text += f"  ({value / stats['intermediate_bytes']:.0%} of intermediate_bytes)"
        lines.append(f"  {key:<{width}}  {text}")
    return "\n".join(lines)
