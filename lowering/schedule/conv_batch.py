"""Image kernels under a run-time batch: the static rule of one image, inside the batch loop.

A kernel of a model with a symbolic batch (`docs/design/symbolic_shapes.md`) whose one loop of a run-time trip count
is the batch, outermost, around loops of static trip counts, does per image what the static kernel of batch 1
does. The static rules that schedule images (`conv`, `pool`, `depthwise`)
read only the loops they transform, never the batch loop, so each is tried on such a kernel as it is: the schedule
of one image is the static one, and the batch loop stays the outermost loop, which parallel placement joins to the
image's own parallel band (`parallel.py`), so that batch 1 is parallel inside its image and batch 8 over images and
inside them:

    loop.for "i0" %i0 = 0 to %n step 1 serial { loop.for "i1" %i1 = 0 to 64 step 1 serial { ... conv ... } }
    // gets the conv rule's schedule (its register tiles accumulated over the zeroed output: `batched_steps`), then
    loop-parallel{kernel=conv_1 loop=i0},loop-parallel{kernel=conv_1 loop=i1_o}

`default-schedule` asks the `dynamic` rule first about every kernel with a dynamic loop; it asks this one
(`batched_workload`) before its own cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of
from minimlc.lowering.schedule.conv import CONV
from minimlc.lowering.schedule.depthwise import DEPTHWISE
from minimlc.lowering.schedule.pool import POOL
from minimlc.lowering.schedule.space import Config, Rule
from minimlc.lowering.target import Target

IMAGE_RULES: tuple[Rule, ...] = (CONV, POOL, DEPTHWISE)
"""The static rules tried on a kernel under a run-time batch, in `default-schedule`'s order."""


@dataclass(frozen=True)
class BatchedWorkload:
    """A kernel under a run-time batch loop that a static rule matched per image."""

    rule: Rule
    workload: Any
    batch: str
    """The batch loop (outermost, a run-time trip count)."""


def batched_steps(workload: BatchedWorkload, config: Config) -> list[str]:
    """The static rule's schedule of one image, as it is: register tiles that start at the output's fill
    (`loop-cache-write{fill=true}`) drop the fill nest once they cover every image (the batch loop from 0 to `%n`)."""
    return workload.rule.apply(workload.workload, config)


def batch_loop(kernel: func.FuncOp) -> loop.ForOp | None:
    """The loop of `kernel` over a run-time batch: its only loop of a run-time trip count, from 0 by 1, a top-level
    loop of the kernel holding every other loop; None if there is no such loop."""
    loops = loops_of(kernel)
    dynamic = [lp for lp in loops if lp.is_dynamic]
    if len(dynamic) != 1:
        return None
    (batch,) = dynamic
    top = [op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]
    if top != [batch] or (batch.lower.value.data, batch.step.value.data) != (0, 1):
        return None
    return batch


def batched_workload(module: ModuleOp, kernel: func.FuncOp, target: Target) -> BatchedWorkload | None:
    """The first of `IMAGE_RULES` that matches `kernel` under its batch loop (`batch_loop`), or None. A rule that
    reads the batch loop's trip count (a `ValueError`) does not match."""
    batch = batch_loop(kernel)
    if batch is None:
        return None
    for rule in IMAGE_RULES:
        try:
            workload = rule.match(module, kernel, target)
        except ValueError:
            continue
        if workload is not None:
            return BatchedWorkload(rule, workload, batch.loop_name.data)
    return None
