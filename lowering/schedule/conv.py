"""The direct convolution rule: its register tile, reduction order and channel blocks. The decisions that earlier
stages read too are in `strategy/`: the algorithm (`prefers_im2col`, `prefers_winograd`) and the default register
tile it rests on (`conv_tile`) in `strategy/conv.py`, the channel padding in `strategy/padding.py`.

Applies to a direct convolution: a sum of input x weight reads in which one output loop, the output channels,
indexes the weight and not the input, its trip count a multiple of the vector width:

    loop.for "i0" n { "i1" f { "i2" oh { "i3" ow { acc = 0; loop.for "k4" kh { "k5" kw { "k6" c {
      acc += x[i0, i2 + k4, i3 + k5, k6] * w[i1, k6, k4, k5] } } } ... } } } }

Schedule: vectorize over `nr` output channels (weights packed into `nr`-wide panels at load time, in the order the
reduction loops walk them), register-block `mr` output columns, reduce with the input's innermost dimension (its
channels) innermost (outermost is a point of the space, never the default: see `ConvRule.default`), and keep the
`mr x nr` tile in registers (`loop-cache-write` at the column loop). Knobs: `nr` (multiples of the vector width that
divide the channels), `mr` (1 to `CONV_MAX_COLUMNS` columns; where `mr` does not divide the width, the columns are
split after the reorder and the `width % mr` left over get a register tile of their own), `channels`
(`innermost`/`outermost`), `unroll`, `pack`, `prefetch`, `channel_block` (0: each panel of `nr` output channels
over every column tile in turn, the outermost loop; else that many channels, whole panels, walked one panel after
another inside each column tile, so a tile's pixels get their channels in a row and a residual epilogue reads its
lines in order: `epilogue.py` folds it then; by default 0, except for a convolution whose output goes to a residual
add on a map at least 28 wide, `residual_block`). The other algorithm, im2col + GEMM, is chosen before this
rule runs (`te-conv-im2col`, per shape by `prefers_im2col`, or for all convolutions with its `algorithm` option) and
reaches the schedules as a GEMM (the `conv_gemm` kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, loops_of, model_weight_bytes
from minimlc.lowering.loop.loop_split import in_tail, tail_name
from minimlc.lowering.schedule.kernel_analysis import (
    feeds_a_residual_add,
    is_weight_at_every_call,
    output_and_reduction_loops,
    product_of_loads,
)
from minimlc.lowering.schedule.space import Config, Knob, Space, register_tile_steps
from minimlc.lowering.strategy.conv import CONV_MAX_COLUMNS, conv_tile
from minimlc.lowering.strategy.data_layout import byte_size
from minimlc.lowering.target import Target

CONV_MAX_BLOCK = 512
"""Most output channels a column tile walks, panel after panel (the `channel_block` knob)."""
RESIDUAL_BLOCK = 256
RESIDUAL_BLOCK_MIN_WIDTH = 28
"""The default channel block of a convolution that feeds a residual add (`residual_block`): up to 256 channels on maps
at least 28 wide. Light ResNet-50's junctions (1x1 conv + residual add + ReLU), blocked by 256 in the model against
the default's panel order (one thread, thread CPU time): on a Zen 3 (AVX2) 64->256 at 56x56 0.957x, 128->512 at 28x28
0.896x, 256->1024 at 14x14 1.000x, 512->2048 at 7x7 0.998x; on a Xeon (AVX-512, 2 MiB L2) 0.65-0.72x at 56x56, 0.89x
at 28x28, 0.96x at 14x14 and 1.07-1.15x at 7x7, where the default's panel order keeps a panel in L2 over the
map's seven rows."""


@dataclass(frozen=True)
class ConvWorkload:
    """A direct convolution: its loops and its weight."""

    kernel: str
    spatial: tuple[str, ...]
    """The output loops, outermost first."""
    reduction: tuple[str, ...]
    """The reduction loops, outermost first."""
    walks_input_channels: tuple[bool, ...]
    """Per reduction loop: whether it walks the input's innermost dimension (its channels) with unit stride."""
    weight_dims: tuple[int | None, ...]
    """Per reduction loop: the weight dimension it indexes, if any."""
    channels: str
    """The output-channel loop: it indexes the weight and not the input."""
    channel_count: int
    columns: str
    """The innermost output loop other than the channel loop (the output's width)."""
    width: int
    weight_operand: int
    weight_dim: int
    weight_rank: int
    residual: bool = False
    """Whether its output goes to a residual add and nothing else (`kernel_analysis.feeds_a_residual_add`)."""
    column_stride: int = 0
    """Bytes between the input pixels that consecutive output columns read (`conv_tile`)."""
    model_weight_bytes: int = 0
    """The bytes of all the model's weights (`analysis.model_weight_bytes`): over the L2, `prefetch` by default."""


def conv_workload(
    module: ModuleOp, kernel: func.FuncOp, target: Target, accumulator: Operation, reads: list[Operation]
) -> ConvWorkload | None:
    """The direct convolution of `kernel` whose sum `accumulator` adds products of the two loads `reads` (one a
    weight at every call, indexed by exactly one output loop that the other read does not move, the channels), or
    None. Shared by the float and integer rules."""
    spatial_loops, reduction_loops = output_and_reduction_loops(kernel, accumulator)
    if len(spatial_loops) < 2 or not reduction_loops:
        return None
    params = list(kernel.body.block.args)
    ivs = {lp.induction_var: lp for lp in loops_of(kernel)}
    for weight, data in (reads, reads[::-1]):
        assert isinstance(weight, memref.LoadOp)
        assert isinstance(data, memref.LoadOp)
        if weight.memref not in params or not all(index in ivs for index in weight.indices):
            continue
        operand = params.index(weight.memref)
        if not is_weight_at_every_call(module, kernel.sym_name.data, operand):
            continue
        data_loops = {v for index in data.indices for v in (affine_form(index) or {None: 0}) if v is not None}
        channels = [
            (dim, ivs[index])
            for dim, index in enumerate(weight.indices)
            if ivs[index] in spatial_loops and index not in data_loops
        ]
        if len(channels) != 1:
            continue
        dim, channel_loop = channels[0]
        if channel_loop.trip_count % target.vector_lanes:
            continue
        width = [lp for lp in spatial_loops if lp is not channel_loop][-1]
        innermost = affine_form(data.indices[-1]) or {}
        weight_dims = {ivs[index]: d for d, index in enumerate(weight.indices)}
        return ConvWorkload(
            kernel.sym_name.data,
            tuple(lp.loop_name.data for lp in spatial_loops),
            tuple(lp.loop_name.data for lp in reduction_loops),
            tuple(innermost.get(lp.induction_var, 0) == 1 for lp in reduction_loops),
            tuple(weight_dims.get(lp) for lp in reduction_loops),
            channel_loop.loop_name.data,
            channel_loop.trip_count,
            width.loop_name.data,
            width.trip_count,
            operand,
            dim,
            len(weight.indices),
            feeds_a_residual_add(module, kernel),
            _column_stride(data, width),
            model_weight_bytes(module),
        )
    return None


def _column_stride(read: memref.LoadOp, columns: loop.ForOp) -> int:
    """Bytes the input `read` moves per iteration of the output-column loop `columns` (row-major memref)."""
    memref_type = read.memref.type
    assert isinstance(memref_type, MemRefType)
    shape, elements = memref_type.get_shape(), 0
    for dim, index in enumerate(read.indices):
        step = (affine_form(index) or {}).get(columns.induction_var, 0)
        elements += step * math.prod(shape[dim + 1 :])
    return elements * byte_size(memref_type.element_type)


@dataclass(frozen=True)
class ConvRule:
    """Direct convolution: register tile mr columns x nr channels over packed weight panels (see the module
    docstring)."""

    name: str = "conv"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ConvWorkload | None:
        found = product_of_loads(kernel)
        if found is None:
            return None
        accumulator, reads = found
        return conv_workload(module, kernel, target, accumulator, reads)

    def space(self, workload: ConvWorkload, target: Target) -> Space:
        default = self.default(workload, target)
        c, nrs = workload, panel_widths(workload.channel_count, target)
        return Space(
            (
                Knob("nr", nrs, default["nr"]),
                Knob("mr", tuple(range(1, min(c.width, CONV_MAX_COLUMNS) + 1)), default["mr"]),
                Knob("channels", ("innermost", "outermost"), default["channels"]),
                Knob("unroll", (True, False), True),
                Knob("pack", (True, False), True),
                Knob("prefetch", (False, True), default["prefetch"]),
                Knob("channel_block", channel_blocks(c.channel_count, nrs), default["channel_block"]),
            )
        )

    def default(self, workload: ConvWorkload, target: Target) -> Config:
        """The register tile of `conv_tile`, channels innermost. Channels outermost was the default for deep panels
        under tiles of at most 7 columns until timings by thread CPU time, paired in one process (the tuner's
        measurer), showed it losing on both ResNet-50 shapes it chose: 3x3/2 512->512 from 14x14 2.37 vs 1.08 ms,
        3x3 512->512 at 7x7 1.20 vs 1.09 ms (Zen 5, one thread); the wall-clock figures it rested on came from a
        loaded machine. The next weight panel is prefetched where the model's weights exceed the L2
        (`prefers_prefetch`)."""
        nr, mr = conv_tile(workload.channel_count, workload.width, target, workload.column_stride)
        return {
            "nr": nr,
            "mr": mr,
            "channels": "innermost",
            "unroll": True,
            "pack": True,
            "prefetch": prefers_prefetch(workload, target),
            "channel_block": residual_block(workload, target),
        }

    def apply(self, workload: ConvWorkload, config: Config) -> list[str]:
        c, name = workload, workload.kernel
        f, w, mr = c.channels, c.columns, int(config["mr"])
        outermost = config["channels"] == "outermost"
        # The reduction loop that walks the input's channels goes innermost (unit stride) or outermost.
        order = sorted(range(len(c.reduction)), key=lambda r: c.walks_input_channels[r] != outermost)
        reduction = [c.reduction[r] for r in order]
        outer = [lp for lp in c.spatial if lp not in (f, w)]
        steps = [
            f"loop-decompose-reduction{{kernel={name}}}",
            f"loop-split{{kernel={name} loop={f} factor={config['nr']}}}",
        ]
        # The loop over channel panels: outermost (`f_o`, each panel over every column tile in turn), or, with a
        # `channel_block` of several panels, split into blocks (`f_o_o`, outermost) and panels (`f_o_i`, inside the
        # column tiles: a tile's output pixels get their block's channels one panel after another).
        panels = int(config["channel_block"]) // int(config["nr"])
        block, tile = (f"{f}_o_o", f"{f}_o_i") if panels > 1 else (f"{f}_o", None)
        if tile:
            steps.append(f"loop-split{{kernel={name} loop={f}_o factor={panels}}}")
        walk = [tile] if tile else []
        tail = c.width % mr
        if tail:
            # Order the nest with the columns whole, then split them: the tail `w_t` (beside `w_o`, under the
            # outer loops) keeps the channel split that packing needs, and gets a register tile of its own below.
            whole = [*outer[:1], block, *outer[1:], w, *walk, *reduction, f"{f}_i"]
            steps.append(f"loop-reorder{{kernel={name} order={','.join(whole)}}}")
            steps.append(f"loop-split{{kernel={name} loop={w} factor={mr}}}")
            inner = [f"{w}_o", *walk, *reduction, f"{w}_i", f"{f}_i"]
            steps.append(f"loop-reorder{{kernel={name} order={','.join(inner)}}}")
        else:
            loops = [*outer[:1], block, *outer[1:], f"{w}_o", *walk, *reduction, f"{w}_i", f"{f}_i"]
            steps.append(f"loop-split{{kernel={name} loop={w} factor={mr}}}")
            steps.append(f"loop-reorder{{kernel={name} order={','.join(loops)}}}")
        if config["pack"]:
            pack_order = _pack_order(c, order)
            option = f" order={','.join(map(str, pack_order))}" if pack_order else ""
            pack = f"operand={c.weight_operand} dim={c.weight_dim} factor={config['nr']}{option}"
            steps.append(f"loop-pack{{kernel={name} {pack}}}")
            if config["prefetch"]:
                steps.append(f"loop-prefetch{{kernel={name} loop={reduction[-1]} operand={c.weight_operand}}}")
        unroll = bool(config["unroll"])
        steps += register_tile_steps(name, f"{w}_i", f"{f}_i", tile or f"{w}_o", unroll, fill=True)
        if tail:
            # The tail's `tail` columns as one more tile: `w_t` split whole into `w_t_o` (one iteration) and `w_t_i`.
            t, channels = tail_name(w), in_tail(f"{f}_i", w)
            tail_tile = in_tail(tile, w) if tile else None
            inner = [*([tail_tile] if tail_tile else []), *(in_tail(r, w) for r in reduction), f"{t}_i", channels]
            steps.append(f"loop-split{{kernel={name} loop={t} factor={tail}}}")
            steps.append(f"loop-reorder{{kernel={name} order={','.join([f'{t}_o', *inner])}}}")
            steps += register_tile_steps(name, f"{t}_i", channels, tail_tile or f"{t}_o", unroll, fill=True)
        return steps


def prefers_prefetch(workload: ConvWorkload, target: Target) -> bool:
    """Whether the default prefetches the next weight panel in the reduction (`loop-prefetch`): where the model's
    weights exceed the L2, so that each run reads a convolution's weights from L3 or memory. Light models, 1 thread,
    every convolution prefetched against none (Zen 5, 1 MiB L2, interleaved in one process): bfloat16 ResNet-50
    0.942x (its 3x3/2 512->512 from 14x14 0.72x), Inception v2 0.948x, DenseNet-121 0.971x; float32 ResNet-50 0.966x,
    Inception v2 0.967x, DenseNet-121 0.985x, SqueezeNet (4.7 MiB) 0.962x, ShuffleNet 0.992x."""
    return workload.model_weight_bytes > target.cache_bytes[1]


def panel_widths(channels: int, target: Target) -> tuple[int, ...]:
    """The `nr` knob's values: one, two or four vectors of output channels, those that divide `channels`."""
    lanes = target.vector_lanes
    return tuple(f * lanes for f in (1, 2, 4) if channels % (f * lanes) == 0)


def residual_block(workload: ConvWorkload, target: Target) -> int:
    """The default `channel_block`: 0, except for a convolution whose output goes to a residual add on a map at least
    `RESIDUAL_BLOCK_MIN_WIDTH` wide, which takes the largest block up to `RESIDUAL_BLOCK` channels: its tile then
    writes a pixel's channels in a row and the add folds into the write-back instead of a second pass over the
    output and the shortcut (`epilogue.py`)."""
    if not workload.residual or workload.width < RESIDUAL_BLOCK_MIN_WIDTH:
        return 0
    blocks = channel_blocks(workload.channel_count, panel_widths(workload.channel_count, target))
    return max(b for b in blocks if b <= RESIDUAL_BLOCK)


def channel_blocks(channels: int, nrs: tuple[int, ...]) -> tuple[int, ...]:
    """The `channel_block` knob's values: 0 (each panel of output channels over all column tiles in turn) and the
    divisors of `channels` that are multiples of every `nr` (so each is whole panels), at most `CONV_MAX_BLOCK`."""
    step = max(nrs)
    return (0, *(b for b in range(step, min(channels, CONV_MAX_BLOCK) + 1, step) if channels % b == 0))


def _pack_order(c: ConvWorkload, order: list[int]) -> list[int]:
    """The packed weight's other dimensions in reduction-loop order (the inner loops walk it front to back); empty
    where that is the weight's own order, or not one reduction loop per dimension."""
    weight_order = [d for d in (c.weight_dims[r] for r in order) if d is not None]
    others = [d for d in range(c.weight_rank) if d != c.weight_dim]
    if weight_order == others or sorted(weight_order) != others:
        return []
    return weight_order


CONV = ConvRule()
