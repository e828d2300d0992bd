"""The types every schedule rule shares: knobs, spaces, configs and the `Rule` protocol (TVM's MetaSchedule
`ScheduleRule` with its sampled decisions, kept to named finite choices).

A rule recognises one kind of kernel and says which decisions a tuner could make about it:

    workload = GEMM.match(module, kernel, target)      # None: not a GEMM
    space = GEMM.space(workload, target)               # Space((Knob("mr", (1, 2, ..., 8), 8), Knob("nr", ...)))
    config = GEMM.default(workload, target)            # {"mr": 8, "nr": 16, ...}: the measured heuristics
    GEMM.apply(workload, config)                       # ["loop-decompose-reduction{kernel=matmul_0}", ...]

`apply` returns primitive pass items (a trace) that `mini-opt -p` replays. A space with no knobs means the rule
claims the kernel but has no schedule for it (it stays as te-to-loop left it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from minimlc.lowering.strategy.tuning_db import Config, KnobValue
from minimlc.lowering.target import Target


class ConfigError(ValueError):
    """A config that names an unknown knob, misses one, or picks a value outside a knob's range."""


@dataclass(frozen=True)
class Knob:
    """One decision of a schedule: its name, the values it may take and the one the default schedule takes."""

    name: str
    values: tuple[KnobValue, ...]
    default: KnobValue
    depends_on: str = ""
    """What run-time extent the knob's effect depends on (a kernel with dynamic loops: `width` splits a loop of a
    run-time trip count, leaving a run-time remainder); empty for a knob of static loops only."""

    def __post_init__(self) -> None:
        if self.default not in self.values:
            raise ValueError(f"knob '{self.name}': default {self.default!r} is not one of {list(self.values)}")


@dataclass(frozen=True)
class Space:
    """The knobs of one kernel's schedule; their product is every schedule the rule can apply to it."""

    knobs: tuple[Knob, ...] = ()

    def default(self) -> Config:
        return {knob.name: knob.default for knob in self.knobs}

    def sample(self, rng: random.Random) -> Config:
        """A config with each knob's value drawn uniformly from its range."""
        return {knob.name: rng.choice(knob.values) for knob in self.knobs}

    def check(self, config: Config, kernel: str) -> None:
        """Raise ConfigError naming the kernel, the knob and its range unless `config` picks one value per knob."""
        names = {knob.name for knob in self.knobs}
        unknown = sorted(set(config) - names)
        if unknown:
            raise ConfigError(f"kernel '{kernel}': unknown knob(s) {', '.join(unknown)} (knobs: {', '.join(names)})")
        for knob in self.knobs:
            if knob.name not in config:
                raise ConfigError(f"kernel '{kernel}': no value for knob '{knob.name}'")
            value = config[knob.name]
            if value not in knob.values or type(value) is not type(knob.default):
                raise ConfigError(
                    f"kernel '{kernel}': knob '{knob.name}' = {value!r} is not in its range {list(knob.values)}"
                )

    def fits(self, config: Config) -> bool:
        """Whether `config` picks one value in range for every knob (what `check` raises for otherwise)."""
        try:
            self.check(config, "")
        except ConfigError:
            return False
        return True

    def describe(self) -> list[dict[str, Any]]:
        """The knobs as JSON-ready dicts: `{"name", "values", "default"}`, and `"depends_on"` for a knob whose effect
        depends on a run-time extent (`Knob.depends_on`)."""
        return [
            {"name": k.name, "values": list(k.values), "default": k.default}
            | ({"depends_on": k.depends_on} if k.depends_on else {})
            for k in self.knobs
        ]


class Rule(Protocol):
    """A schedule rule: which kernels it applies to, their knobs, today's choice, and the trace of a choice."""

    name: str

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> Any | None:
        """The workload (the rule's description of the kernel) if the rule applies to `kernel`, else None."""
        ...

    def space(self, workload: Any, target: Target) -> Space:
        """The knobs of `workload`'s schedule, each with its default from `default`."""
        ...

    def default(self, workload: Any, target: Target) -> Config:
        """The default schedule's choice for `workload` (the measured heuristics)."""
        ...

    def apply(self, workload: Any, config: Config) -> list[str]:
        """The primitive pass items that schedule `workload` as `config` says."""
        ...


def divisors(value: int, largest: int) -> tuple[int, ...]:
    """The divisors of `value` up to `largest`, ascending."""
    return tuple(d for d in range(1, min(value, largest) + 1) if value % d == 0)


def register_tile_steps(kernel: str, rows: str, columns: str, tile: str, unroll: bool, fill: bool = False) -> list[str]:
    """The end of a register-blocked schedule (GEMM, direct convolution): unroll the tile's `rows` loop (if asked),
    vectorize its `columns` loop and keep the tile in registers, accumulated and written back once at loop `tile`.

    `fill`: the whole reduction lies inside `tile` (one depth block), so the tile starts at the zero that
    `loop-decompose-reduction`'s nest fills the output with and the write-back stores; that nest goes once the tiles
    (a tail's too) write every output element: one pass over the output instead of a zeroing pass and a
    read-add-write one."""
    steps = [f"loop-unroll{{kernel={kernel} loop={rows}}}"] if unroll else []
    start = "fill=true" if fill else "accumulate=true"
    return [
        *steps,
        f"loop-vectorize{{kernel={kernel} loop={columns}}}",
        f"loop-cache-write{{kernel={kernel} loop={tile} {start}}}",
    ]
