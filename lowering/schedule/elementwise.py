"""The elementwise rule: vectorize the innermost loop of a kernel without reductions (elementwise ops, copies).

Applies where every access walks its buffer's last dimension with unit stride along the innermost loop, or does not
move with it (strided accesses vectorize lane by lane, slower than LLVM's scalar loop):

    loop.for "i0" %i0 = 0 to 4 step 1 serial { loop.for "i1" %i1 = 0 to 64 step 1 serial {
      %0 = memref.load %in0[%i0, %i1]; ...; memref.store %1, %out[%i0, %i1] } }

Schedule: split the innermost loop by `width` and vectorize the inner part (or vectorize the loop as it is when it is
`width` long). Knob: `width`, 0 (leave it to LLVM) or one to four vector widths up to the trip count; a width that
does not divide the trip count leaves a scalar tail (see `loop-split`). Default: one vector width where it divides the
trip count, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of, walk_ops
from minimlc.lowering.schedule.kernel_analysis import unit_stride
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class ElementwiseWorkload:
    """A kernel without reductions: its innermost loop."""

    kernel: str
    loop: str
    trip: int


@dataclass(frozen=True)
class ElementwiseRule:
    """Elementwise/injective: vectorize the innermost loop (see the module docstring)."""

    name: str = "elementwise"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ElementwiseWorkload | None:
        if any(isinstance(op, loop.AllocOp) for op in walk_ops(kernel)):
            return None
        innermost = loops_of(kernel)[-1]
        if not unit_stride(innermost):
            return None
        return ElementwiseWorkload(kernel.sym_name.data, innermost.loop_name.data, innermost.trip_count)

    def space(self, workload: ElementwiseWorkload, target: Target) -> Space:
        lanes = target.vector_lanes
        widths = tuple(f * lanes for f in (1, 2, 4) if f * lanes <= workload.trip)
        return Space((Knob("width", (0, *widths), self.default(workload, target)["width"]),))

    def default(self, workload: ElementwiseWorkload, target: Target) -> Config:
        lanes = target.vector_lanes
        # An empty loop (a zero-size tensor) gets no vector code: 0 would otherwise divide evenly.
        return {"width": lanes if workload.trip >= lanes and workload.trip % lanes == 0 else 0}

    def apply(self, workload: ElementwiseWorkload, config: Config) -> list[str]:
        return vector_steps(workload.kernel, workload.loop, workload.trip, int(config["width"]))


def vector_steps(kernel: str, loop: str, trip: int | None, width: int) -> list[str]:
    """The steps vectorising `loop` (of `trip` iterations, None: a run-time count) of `kernel` by `width` lanes:
    none for width 0, `loop-vectorize` where `width` is the whole loop, else split by `width` first (a dynamic loop's
    split leaves a scalar remainder)."""
    if not width:
        return []
    if width == trip:
        return [f"loop-vectorize{{kernel={kernel} loop={loop}}}"]
    return [
        f"loop-split{{kernel={kernel} loop={loop} factor={width}}}",
        f"loop-vectorize{{kernel={kernel} loop={loop}_i}}",
    ]


ELEMENTWISE = ElementwiseRule()
