"""The window-reduction rule: pooling and depthwise convolution, one vector operation per window tap.

Applies to a max or sum over a window of one input read whose innermost output loop (the width) moves the read
(pooling), or a sum of that read times reads the width loop does not move (a depthwise convolution: each channel's
window times that channel's weights):

    loop.for "i0" c { "i1" oh { "i2" ow { acc = -inf; loop.for "k3" kh { "k4" kw {
      acc = max(acc, x[i0, 2 * i1 + k3, 2 * i2 + k4]) } } ... } } }

Schedule: accumulate in the output, move the window loops outside the width loop and make that loop one vector
operation per window tap (a row of outputs updated at once instead of a serial max chain per output), the row of
outputs kept in a local tile (`loop-cache-write` at the row loop). Knobs: `vectorize` (on only where the width loop
fits, see `PoolWorkload.vectorizable`), `cache_row` (where there is a row loop). With `graph-pad-max-pool` before
it, padded max pools read plain affine coordinates; a padded tap (`select(inside, x[...], c)`: an average pool's, or
a channels-last max pool's whose -inf padding te-inline put back, with the ReLU or per-channel scale and shift the
pad had taken in) is taken when its bounds check does not depend on the vectorized loop. A channels-last pool whose
innermost loop (channels) is too long for one vectorized loop gets it split into channel blocks instead
(`PoolWorkload.channel_block`), the window loops between the block loop and the vectorized block, and the block's
outputs kept in a local tile.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form
from minimlc.lowering.loop.loop_vectorize import MAX_LANES
from minimlc.lowering.schedule.kernel_analysis import (
    accumulator_of,
    output_and_reduction_loops,
    unit_stride,
    updates_of,
)
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class PoolWorkload:
    """A window reduction: its output and window loops."""

    kernel: str
    spatial: tuple[str, ...]
    """The output loops, outermost first; the last one indexes the output's innermost (width) dimension."""
    reduction: tuple[str, ...]
    vectorizable: bool
    """Whether the width loop may become one vector operation: if it fits one vector register (reads of a large
    stride go lane by lane), or if it walks the input with a stride up to `MAX_INTERLEAVE` (`unit_stride`: a stride-2
    row is one wide load and a shuffle per tap) and fits `MAX_LANES` (LLVM splits the vector): a 3x3/2 max pool over
    16x112x112 channels-first, 56 outputs a row, 1.3x faster than left to LLVM's loop vectorizer (Zen 4). Otherwise
    the kernel is left to LLVM as it is: with lane-by-lane reads a long strided row was 3x slower (27 outputs of
    stride 2)."""
    channel_block: int = 0
    """For a channels-last pool whose innermost loop (the channels) is too long for one vectorized loop: the channels
    one vector operation per tap covers (at most `MAX_LANES`, dividing them: a multiple of the vector width, or of
    half of it where no multiple of the whole divides them); 0 else."""


@dataclass(frozen=True)
class PoolRule:
    """Pooling and depthwise convolution: window loops outside a vectorized row (see the module docstring)."""

    name: str = "pool"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> PoolWorkload | None:
        accumulator = accumulator_of(kernel)
        if accumulator is None:
            return None
        update = updates_of(kernel, accumulator, (arith.MaximumfOp, arith.MaxnumfOp, arith.AddfOp))
        if len(update) != 1:
            return None
        params = list(kernel.body.block.args)
        terms = [
            v
            for v in update[0].operands
            if not (isinstance(v.owner, memref.LoadOp) and v.owner.memref is accumulator.result)
        ]
        if len(terms) != 1:
            return None
        product = terms[0].owner
        depthwise = isinstance(update[0], arith.AddfOp) and isinstance(product, arith.MulfOp)
        padded = _padded_read(product)
        if padded is not None:  # (a depthwise product is never a padded tap)
            reads = _tap_reads(padded.lhs, params)
        else:
            factors = [product.lhs, product.rhs] if depthwise else terms
            reads = [v.owner for v in factors if isinstance(v.owner, memref.LoadOp) and v.owner.memref in params]
            if len(reads) != len(factors):
                return None
        spatial_loops, reduction_loops = output_and_reduction_loops(kernel, accumulator)
        if not reads or not spatial_loops or not reduction_loops:
            return None
        width = spatial_loops[-1]
        moving = [
            r for r in reads if any((affine_form(index) or {}).get(width.induction_var, 0) for index in r.indices)
        ]
        if len(reads) > 1 and not depthwise:  # a tap computed from the window's read and per-channel reads
            windowed = [
                r for r in reads if any(_depends_on(i, lp.induction_var) for lp in reduction_loops for i in r.indices)
            ]
            if len(windowed) != 1 or windowed[0] not in moving:
                return None
        elif len(moving) != 1:
            return None
        if padded is not None and _depends_on(padded.cond, width.induction_var):
            return None
        vectorizable = width.trip_count <= target.vector_lanes or (unit_stride(width) and width.trip_count <= MAX_LANES)
        return PoolWorkload(
            kernel.sym_name.data,
            tuple(lp.loop_name.data for lp in spatial_loops),
            tuple(lp.loop_name.data for lp in reduction_loops),
            vectorizable,
            _channel_block(width, target) if not depthwise and not vectorizable else 0,
        )

    def space(self, workload: PoolWorkload, target: Target) -> Space:
        default = self.default(workload, target)
        return Space(
            (
                Knob("vectorize", (True, False) if _vectorizable(workload) else (False,), default["vectorize"]),
                Knob("cache_row", (True, False) if len(workload.spatial) > 1 else (False,), default["cache_row"]),
            )
        )

    def default(self, workload: PoolWorkload, target: Target) -> Config:
        return {"vectorize": _vectorizable(workload), "cache_row": len(workload.spatial) > 1}

    def apply(self, workload: PoolWorkload, config: Config) -> list[str]:
        if not config["vectorize"]:
            return []
        if workload.channel_block:
            return _channel_block_steps(workload, config)
        name, spatial, w = workload.kernel, workload.spatial, workload.spatial[-1]
        steps = [
            f"loop-decompose-reduction{{kernel={name}}}",
            f"loop-reorder{{kernel={name} order={','.join([*spatial[:-1], *workload.reduction, w])}}}",
            f"loop-vectorize{{kernel={name} loop={w}_init}}",
            f"loop-vectorize{{kernel={name} loop={w}}}",
        ]
        if config["cache_row"]:
            steps.append(f"loop-cache-write{{kernel={name} loop={spatial[-2]} fill=true}}")
        return steps


def _padded_read(term: Operation | None) -> arith.SelectOp | None:
    """`term` if it is a read or a constant as a tap lies inside the input or not (a padded average pool's tap)."""
    if isinstance(term, arith.SelectOp) and isinstance(term.rhs.owner, arith.ConstantOp):
        return term
    return None


def _tap_reads(value: SSAValue, params: list[SSAValue]) -> list[memref.LoadOp]:
    """The reads a padded tap's value is computed from (the window's read, and per-channel ones where a batch
    normalisation or a ReLU was inlined into the tap: `max(x[...] * s[c] + b[c], 0)`); empty if it is computed from
    anything but reads of the kernel's parameters, constants and float arithmetic."""
    reads: list[memref.LoadOp] = []
    pending = [value]
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, memref.LoadOp) and owner.memref in params:
            reads.append(owner)
        elif isinstance(owner, arith.AddfOp | arith.SubfOp | arith.MulfOp | arith.MaximumfOp | arith.MinimumfOp):
            pending.extend(owner.operands)
        elif not isinstance(owner, arith.ConstantOp):
            return []
    return reads


def _depends_on(value: SSAValue, index: SSAValue) -> bool:
    """Whether `value` is computed from `index` (a padded tap's condition from the vectorized loop's index, which
    would differ per lane)."""
    pending = [value]
    while pending:
        value = pending.pop()
        if value is index:
            return True
        if isinstance(value.owner, Operation):
            pending.extend(value.owner.operands)
    return False


def _vectorizable(workload: PoolWorkload) -> bool:
    return workload.vectorizable or bool(workload.channel_block)


def _channel_block(width: loop.ForOp, target: Target) -> int:
    """The channel block of a channels-last pool's innermost loop `width` (see `PoolWorkload.channel_block`)."""
    lanes, trip = target.vector_lanes, width.trip_count
    if trip % lanes and trip % (lanes // 2) == 0:
        lanes //= 2  # half vectors: SqueezeNet's 1000 classes, 125 x 8 (the blocks below then hold 2.5 vectors)
    if not unit_stride(width) or trip % lanes:
        return 0
    return max(f for f in range(lanes, MAX_LANES + 1, lanes) if trip % f == 0)


def _channel_block_steps(workload: PoolWorkload, config: Config) -> list[str]:
    """A channels-last pool: the channel loop split into blocks, the window loops between the block loop and the
    vectorized block, each block of outputs kept in a local tile across the taps (`cache_row`), started at the
    reduction's identity instead of the output's (no pass filling the output first)."""
    name, spatial, c, block = workload.kernel, workload.spatial, workload.spatial[-1], workload.channel_block
    steps = [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={c}_init factor={block}}}",
        f"loop-vectorize{{kernel={name} loop={c}_init_i}}",
        f"loop-split{{kernel={name} loop={c} factor={block}}}",
        f"loop-reorder{{kernel={name} order={','.join([*spatial[:-1], f'{c}_o', *workload.reduction, f'{c}_i'])}}}",
        f"loop-vectorize{{kernel={name} loop={c}_i}}",
    ]
    if config["cache_row"]:
        steps.append(f"loop-cache-write{{kernel={name} loop={c}_o fill=true}}")
    return steps


POOL = PoolRule()
