"""The channels-last depthwise convolution rule: vectors over channels, a register tile of output columns.

Applies to a depthwise convolution stored channels-last (`te-channels-last`): a sum of input x weight reads whose
innermost output loop, the channels, indexes the input's last dimension with unit stride and the weight's first
(each channel's window times that channel's taps):

    loop.for "i0" n { "i1" oh { "i2" ow { "i3" c { acc = 0; loop.for "k4" 1 { "k5" kh { "k6" kw {
      acc += x[i0, 2 * i1 + k5, 2 * i2 + k6, i3] * w[i3, k4, k5, k6] } } } ... } } } }

Schedule: split the channels into vectors of `nr` lanes and the columns into tiles of `mr`, move the taps outside
the tile (`i2_o, i3_o, k4, k5, k6, i2_i, i3_i`), pack the weight at load time into `nr`-channel panels
(`[C / nr, 1, KH, KW, nr]`: one contiguous vector per tap) and keep the `mr x nr` tile in registers: per tap, one
weight vector serves `mr` input vectors and multiply-adds. Strides, dilations and padding (folded into the input's
channels-last copy) only move the input's row and column. The NCHW depthwise convolution stays with the pool rule
(vectors along a row). Knobs: `nr` (the vector width, or half or a quarter of it, dividing the channels), `mr`
(divisors of the width up to `DEPTHWISE_MAX_COLUMNS`), `unroll`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

from minimlc.lowering.loop.analysis import loops_of
from minimlc.lowering.schedule.kernel_analysis import (
    is_weight_at_every_call,
    output_and_reduction_loops,
    product_of_loads,
)
from minimlc.lowering.schedule.space import Config, Knob, Space, divisors, register_tile_steps
from minimlc.lowering.strategy.conv import channel_vectors
from minimlc.lowering.target import Target

DEPTHWISE_MAX_COLUMNS = 14
"""Most output columns a tile covers: each column is one accumulator register, plus the tap's weight vector and
an input vector (16 registers on AVX2 take 14)."""


@dataclass(frozen=True)
class DepthwiseWorkload:
    """A channels-last depthwise convolution: its loops and its weight."""

    kernel: str
    spatial: tuple[str, ...]
    """The output loops, outermost first: (batch, rows, columns, channels)."""
    reduction: tuple[str, ...]
    channel_count: int
    width: int
    weight_operand: int


@dataclass(frozen=True)
class DepthwiseRule:
    """Channels-last depthwise convolution: a register tile of columns x channel vectors (see the module
    docstring)."""

    name: str = "depthwise"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> DepthwiseWorkload | None:
        found = product_of_loads(kernel)
        if found is None:
            return None
        accumulator, reads = found
        spatial, reduction = output_and_reduction_loops(kernel, accumulator)
        if len(spatial) != 4 or not reduction:
            return None
        channel = spatial[-1].induction_var
        params = list(kernel.body.block.args)
        ivs = {lp.induction_var for lp in loops_of(kernel)}
        for weight, data in (reads, reads[::-1]):
            assert isinstance(weight, memref.LoadOp)
            assert isinstance(data, memref.LoadOp)
            if weight.memref not in params or data.memref is weight.memref:
                continue
            if tuple(weight.indices[:1]) != (channel,) or not all(i in ivs for i in weight.indices[1:]):
                continue
            if channel in weight.indices[1:] or data.indices[-1] is not channel:
                continue
            operand = params.index(weight.memref)
            if not is_weight_at_every_call(module, kernel.sym_name.data, operand):
                continue
            if not channel_vectors(spatial[-1].trip_count, target):
                return None
            return DepthwiseWorkload(
                kernel.sym_name.data,
                tuple(lp.loop_name.data for lp in spatial),
                tuple(lp.loop_name.data for lp in reduction),
                spatial[-1].trip_count,
                spatial[-2].trip_count,
                operand,
            )
        return None

    def space(self, workload: DepthwiseWorkload, target: Target) -> Space:
        default = self.default(workload, target)
        return Space(
            (
                Knob("nr", channel_vectors(workload.channel_count, target), default["nr"]),
                Knob("mr", divisors(workload.width, DEPTHWISE_MAX_COLUMNS), default["mr"]),
                Knob("unroll", (True, False), True),
            )
        )

    def default(self, workload: DepthwiseWorkload, target: Target) -> Config:
        """The widest channel vector and the most columns that divide the width and fit the registers (an
        accumulator per column, the weight and an input vector)."""
        nr = channel_vectors(workload.channel_count, target)[0]
        fits = [m for m in divisors(workload.width, DEPTHWISE_MAX_COLUMNS) if m + 2 <= target.vector_registers]
        return {"nr": nr, "mr": fits[-1], "unroll": True}

    def apply(self, workload: DepthwiseWorkload, config: Config) -> list[str]:
        name = workload.kernel
        batch, rows, w, c = workload.spatial
        order = [batch, rows, f"{w}_o", f"{c}_o", *workload.reduction, f"{w}_i", f"{c}_i"]
        steps = [
            f"loop-decompose-reduction{{kernel={name}}}",
            f"loop-split{{kernel={name} loop={c} factor={config['nr']}}}",
            f"loop-split{{kernel={name} loop={w} factor={config['mr']}}}",
            f"loop-reorder{{kernel={name} order={','.join(order)}}}",
            f"loop-pack{{kernel={name} operand={workload.weight_operand} dim=0 factor={config['nr']}}}",
        ]
        return steps + register_tile_steps(name, f"{w}_i", f"{c}_i", f"{c}_o", bool(config["unroll"]), fill=True)


DEPTHWISE = DepthwiseRule()
