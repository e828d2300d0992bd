"""The rows rule: kernels of several stages that reduce rows and then rewrite them (softmax, layer normalisation:
the `te.KERNEL_GROUP` kernels of `graph_to_te/normalization.py`), computed one row at a time.

Applies to a kernel of two or more top-level loop nests whose leading loops agree (same bounds) with the last
nest's; those shared loops are the rows (all axes before the reduced ones):

    loop.for "i0__" 0 to 8 { loop.for "i1__" 0 to 1 { acc = 0; loop.for "k2" 0 to 256 { acc += x[i0__, k2] } ... } }
    loop.for "i0_" 0 to 8 { loop.for "i1_" 0 to 1 { ... inv[i0_, i1_] = 1 / sqrt(...) } }
    loop.for "i0" 0 to 8 { loop.for "i1" 0 to 256 { y[i0, i1] = (x[i0, i1] - mean[i0, 0]) * inv[i0, 0] ... } }

Schedule: move every earlier stage into the last stage's innermost row loop (`loop-compute-at`, last producer
first), so one iteration computes a row's statistics and then the row, which stays in cache in between (and
parallel placement then splits the rows between threads); and vectorize the innermost loop of each stage without
a reduction (the row rewrite, softmax's exp) by `width`. Reductions are left to LLVM, which vectorizes them thanks to
their reassociable sums. Knobs: `fuse` (on only where there are shared row loops) and `width` (0 or one, two or
four vector widths; a loop shorter than the width stays scalar, a longer one keeps a scalar tail). Default: fused,
one vector width.

Row loops of a run-time trip count are shared when they run to the same `index` value (`loop_bounds`), and a
run-time innermost loop is split by `width` with a scalar remainder: the `dynamic` rule gives this schedule to such a
kernel (a prefill's softmax over `[batch, heads, sequence, past + sequence]` scores).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of, walk_ops
from minimlc.lowering.loop.loop_fuse import loop_bounds
from minimlc.lowering.schedule.elementwise import vector_steps
from minimlc.lowering.schedule.kernel_analysis import unit_stride
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target

STAGE_SIBLINGS = (loop.ForOp, loop.AllocOp, loop.ExtentsOp, func.ReturnOp)
"""The ops beside the stages at a rows kernel's top level (`loop.extents`: a kernel of run-time extents)."""
VECTOR_LIMIT = 1 << 30
"""The trip count the `width` knob assumes for a run-time one (every width is in the space)."""


@dataclass(frozen=True)
class RowsWorkload:
    """A multi-stage kernel: the outermost loop of each stage but the last, the last stage's innermost shared row
    loop (None: the stages share no loop), and the innermost loops (name, trip count) of the stages without a
    reduction, unless that loop is a row loop."""

    kernel: str
    stages: tuple[str, ...]
    at: str | None
    vector_loops: tuple[tuple[str, int | None], ...]
    """(name, trip count), None for a run-time trip count."""


def _row_path(nest: loop.ForOp) -> list[loop.ForOp]:
    """`nest` and the loops below it that are each the only op of their parent's body."""
    path = [nest]
    while len(ops := list(path[-1].body.block.ops)) == 1 and isinstance(ops[0], loop.ForOp):
        path.append(ops[0])
    return path


def _reduces(nest: loop.ForOp) -> bool:
    """Whether the nest accumulates in a local buffer."""
    return any(
        isinstance(op, memref.LoadOp)
        and isinstance(alloc := op.memref.owner, loop.AllocOp)
        and alloc.scope.data == "local"
        for op in walk_ops(nest)
    )


@dataclass(frozen=True)
class RowsRule:
    """Multi-stage row kernels: stages computed row by row, row rewrites vectorized (see the module docstring)."""

    name: str = "rows"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> RowsWorkload | None:
        top = list(kernel.body.block.ops)
        nests = [op for op in top if isinstance(op, loop.ForOp)]
        if len(nests) < 2 or any(not isinstance(op, STAGE_SIBLINGS) for op in top):
            return None
        paths = [_row_path(nest) for nest in nests]
        last = paths[-1]
        shared = 0
        while all(
            len(path) > shared and shared < len(last) and loop_bounds(path[shared]) == loop_bounds(last[shared])
            for path in paths
        ):
            shared += 1
        vector_loops = tuple(
            (inner.loop_name.data, None if inner.is_dynamic else inner.trip_count)
            for nest, path in zip(nests, paths)
            if not _reduces(nest) and (inner := loops_of(nest)[-1]) not in path[:shared] and unit_stride(inner)
        )
        return RowsWorkload(
            kernel.sym_name.data,
            tuple(nest.loop_name.data for nest in nests[:-1]),
            last[shared - 1].loop_name.data if shared else None,
            vector_loops,
        )

    def space(self, workload: RowsWorkload, target: Target) -> Space:
        lanes = target.vector_lanes
        longest = max((trip or VECTOR_LIMIT for _, trip in workload.vector_loops), default=0)
        widths = tuple(f * lanes for f in (1, 2, 4) if f * lanes <= longest)
        default = self.default(workload, target)
        fuse = (True, False) if workload.at is not None else (False,)
        return Space((Knob("fuse", fuse, default["fuse"]), Knob("width", (0, *widths), default["width"])))

    def default(self, workload: RowsWorkload, target: Target) -> Config:
        lanes = target.vector_lanes
        vectorizable = any(trip is None or trip >= lanes for _, trip in workload.vector_loops)
        return {"fuse": workload.at is not None, "width": lanes if vectorizable else 0}

    def apply(self, workload: RowsWorkload, config: Config) -> list[str]:
        name, width = workload.kernel, config["width"]
        steps: list[str] = []
        if config["fuse"]:
            at = workload.at
            steps += [f"loop-compute-at{{kernel={name} stage={stage} at={at}}}" for stage in reversed(workload.stages)]
        for inner, trip in workload.vector_loops:
            if trip is None or trip >= width:
                steps += vector_steps(name, inner, trip, int(width))
        return steps


ROWS = RowsRule()
