"""The convolution rule, and every decision about convolutions: the algorithm (`prefers_im2col`, read by
`te-conv-im2col`, and `prefers_winograd`, read by `te-conv-winograd`), the channel padding
(`channel_padding_multiple`, read by `graph-pad-conv-channels`), the im2col GEMM's padding (`ROW_MULTIPLE`,
`COLUMN_MULTIPLE`) and the direct schedule's tile and reduction order.

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
from minimlc.lowering.llvm.conversion import byte_size
from minimlc.lowering.loop.analysis import affine_form, loops_of
from minimlc.lowering.loop.loop_split import in_tail, tail_name
from minimlc.lowering.schedule.kernel_analysis import (
    feeds_a_residual_add,
    is_weight_at_every_call,
    output_and_reduction_loops,
    product_of_loads,
)
from minimlc.lowering.schedule.space import Config, Knob, Space, register_tile_steps
from minimlc.lowering.target import Target

ROW_MULTIPLE = 8
"""im2col GEMM rows (output pixels) are padded to a multiple of this: the largest register tile height the GEMM
schedule uses, so that it never falls back to a one-row tile on odd feature maps (55x55, 13x13, 7x7)."""
COLUMN_MULTIPLE = 16
"""im2col GEMM columns (output channels) are padded to a multiple of this: a whole vector register (AVX-512) or
two."""
CONV_MAX_COLUMNS = 14
"""Most output columns a convolution tile covers. The tile takes the largest count up to this that divides the
width and fits the registers: ResNet widths 112, 56, 28, 14 take 14 and 7 takes 7; the 55, 27 and 13 of SqueezeNet
and Inception v1 take 11, 9 (or 27's 9 with two vectors) and 13. A tile of one column reloads every weight vector
for each multiply-add (3-4x slower than ONNX Runtime on those widths when only 14, 8, 7, 6, 4, 2, 1 were allowed)."""
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
L1_SET_SPAN = 4096
L1_WAYS = 8
"""The L1 data cache's geometry as register tiles meet it: addresses 4 KiB apart share a set, which holds 8 lines
(32 KiB 8-way on Zen 3/4/5 and Skylake; Intel's 48 KiB L1s have 12 ways, of which 8 is the safe share). A direct
convolution's tile reads one input pixel per column in every reduction step; where pixels lie a multiple of 4 KiB
apart (1024 input channels, or 512 under a stride of 2) all its columns' lines fall in one set, and more than
`L1_WAYS` of them evict each other every step (`_same_set_lines`)."""
CONV_MIN_ACCUMULATORS = 8
"""Fewest vector accumulators the default register tile should hold: a multiply-add's latency (4 cycles on Zen 4/5
and recent Intel cores) times the multiply-adds issued per cycle (2), the independent sums that keep the FMA units
busy. SqueezeNet's stem (3x3/2 3->64, 111 columns: 3 per tile) held 6 with two vectors of channels, and took 1.2x the
time of the 12 of four vectors (one thread, by CPU time)."""


@dataclass(frozen=True)
class ConvShape:
    """A group-1 2-d convolution as the GEMM sees it."""

    batch: int
    in_channels: int
    out_channels: int
    out_height: int
    out_width: int
    kernel_height: int
    kernel_width: int

    @property
    def rows(self) -> int:
        return self.batch * self.out_height * self.out_width

    @property
    def depth(self) -> int:
        return self.in_channels * self.kernel_height * self.kernel_width


def channel_padding_multiple(channels: int, target: Target) -> int:
    """What `graph-pad-conv-channels` rounds `channels` output channels up to: the vector width, which the direct
    schedule vectorizes over, or two vectors (the default tile's width, `conv_tile`) where two cost at most a
    sixteenth more channels and either the channels need padding anyway, or the target has 16 vector registers.
    SqueezeNet's 1000 classes become 1024 on AVX-512 (a 13x32 tile) instead of 1008 (13x16; that kernel alone 0.636
    vs 0.686 ms, the model 0.965x by CPU time), and 1008 on AVX2 instead of staying 1000, whose one-vector tile of 13
    columns broadcasts an input for every multiply-add (Zen 3: 6.26 vs 3.01 ms with two vectors of 5 columns, the
    model 0.80x its time)."""
    lanes = target.vector_lanes
    extra = -channels % (2 * lanes)
    if channels % lanes and extra - -channels % lanes <= channels // 16:
        return 2 * lanes
    if target.vector_registers < 32 and 0 < extra <= channels // 16:
        return 2 * lanes
    return lanes


def prefers_im2col(shape: ConvShape, target: Target, input_is_concat: bool = False) -> bool:
    """The `auto` choice of `te-conv-im2col`, a rule read off per-shape measurements of both algorithms
    (docs/DESIGN.md, "Measured facts"): im2col + GEMM where the direct schedule's register tile is too narrow
    (`_few_columns`: on AVX-512, fewer than 6 output columns, as on odd widths; it then streams its weight panel once
    per column; on AVX2, fewer than 8 accumulators), except for inputs of
    under 8 channels (RGB stems: their products are 27-147 deep, too shallow for the gather to pay); and wherever the
    direct schedule does not apply (output channels not a multiple of the vector width). With activations
    channels-last (`te-channels-last`) the direct schedule won every other convolution of ResNet-50, 1x1 ones
    included (1x1 256->64 at 56x56: 0.98 vs 3.61 x ONNX Runtime), except where the input is a channel
    concatenation, which stays NCHW (te-channels-last): a 1x1 convolution that does not widen (F <= C) over at least
    `8 * ROW_MULTIPLE` pixels then reads it in place as the GEMM's A operand, the concatenation fused into that
    read, instead of through a transposing copy (SqueezeNet's fire modules: the copy alone took 2.6 of 14 ms)."""
    if shape.out_channels % target.vector_lanes:
        return True  # the direct schedule needs whole vectors of output channels
    if shape.in_channels < 8:
        return False
    nr, mr = conv_tile(shape.out_channels, shape.out_width, target)
    if _few_columns(nr // target.vector_lanes, mr, target):
        return True
    pointwise = shape.kernel_height == shape.kernel_width == 1
    return input_is_concat and pointwise and shape.out_channels <= shape.in_channels and shape.rows >= 8 * ROW_MULTIPLE


WINOGRAD_MIN_CHANNELS = 64
"""Fewest input and output channels for which `prefers_winograd` takes Winograd F(2x2, 3x3)."""
WINOGRAD_MIN_TILES = 32
"""Fewest 2x2 tiles (GEMM rows per transform point) for which `prefers_winograd` takes Winograd: each transformed
weight serves that many rows, and the transformed weight is 16/9 the size of the filter. ResNet-50's 7x7 stage (16
tiles, the last row and column of them half outside the map; 16 MiB of transformed weight) measured 11.3 ms a block
against 9.7 direct, SqueezeNet's 13x13 64 -> 256 (49 tiles) 1.85 against 2.05 (an AVX2 EPYC, znver1)."""
WINOGRAD_MAX_TRANSFORM_BYTES = 16 << 20
"""Largest transformed input (16 points x tiles x input channels) or GEMM result `prefers_winograd` accepts: both
stay in the last-level cache of the machines measured (32 MiB on the Zen 4), and the arena does not grow by the
hundreds of MB that VGG's 224x224 and 112x112 convolutions would need."""


def winograd_tiles(out_height: int, out_width: int) -> tuple[int, int]:
    """Rows and columns of F(2x2, 3x3) tiles over an output map; an odd side takes one more, half outside the map:
    a 7x7 map has 4 x 4 tiles."""
    return -(-out_height // 2), -(-out_width // 2)


def prefers_winograd(shape: ConvShape, target: Target) -> bool:
    """The `auto` choice of `te-conv-winograd` for an eligible (stride-1 3x3) convolution: Winograd F(2x2, 3x3) where
    both channel counts are at least `WINOGRAD_MIN_CHANNELS`, the output channels fill the GEMM's two-vector tiles and
    the transform-domain buffers fit `WINOGRAD_MAX_TRANSFORM_BYTES`. Its batched GEMM does 16 multiply-adds per tile
    and channel pair against the direct schedule's 36, but the transforms cost memory traffic in proportion to C + F:
    measured on a Zen 4 (AVX-512, one thread, thread CPU time, in the model), the 3x3 convolutions of light ResNet-50
    (64, 128 and 256 channels) took 1.5-1.65 ms against 2.15 direct, the model 0.906x; Inception v2 (64-256
    channels) 0.865x; DenseNet-121's 128 -> 32 (a transformed input four times the output) measured 1.06x slower
    in one A/B and 0.93-0.98x in two later ones: it stays direct here, and `minimlc tune` decides it per machine
    (`tuner/algorithms.py`). Convolutions of fewer than `WINOGRAD_MIN_TILES` tiles stay direct as well."""
    lanes = target.vector_lanes
    c, f = shape.in_channels, shape.out_channels
    tiles_h, tiles_w = winograd_tiles(shape.out_height, shape.out_width)
    tiles = shape.batch * tiles_h * tiles_w
    fits = 16 * tiles * max(c, f) * 4 <= WINOGRAD_MAX_TRANSFORM_BYTES
    many = tiles >= WINOGRAD_MIN_TILES
    return f % (2 * lanes) == 0 and min(c, f) >= WINOGRAD_MIN_CHANNELS and fits and many


def _few_columns(vectors: int, columns: int, target: Target) -> bool:
    """Whether a direct register tile of `vectors` channel vectors x `columns` output columns streams its weight
    panel too often for the direct schedule to beat im2col + GEMM: fewer than 6 columns where the registers hold
    more (32 registers: up to 14 columns of two vectors), fewer than `CONV_MIN_ACCUMULATORS` accumulators where
    they do not (16 registers, AVX2: at most 6 columns of two vectors, with a tail where 6 does not divide the
    width). Light ResNet-50 on Zen 3, one thread, by thread CPU time: 1.67x ONNX Runtime with the columns rule
    (im2col nearly everywhere), 1.39x with every convolution direct."""
    if target.vector_registers >= 32:
        return columns < 6
    return columns * vectors < CONV_MIN_ACCUMULATORS


def conv_tile(channels: int, width: int, target: Target, column_stride: int = 0) -> tuple[int, int]:
    """The register tile (output channels NR, output columns MR) of the direct schedule for a convolution with
    `channels` output channels (a multiple of the vector width) and output rows `width` wide, whose consecutive
    columns read input pixels `column_stride` bytes apart (0: unknown): two vectors of channels where they divide
    them, else one, and the most columns that fit (`_tile_columns`); four vectors where two leave fewer than
    `CONV_MIN_ACCUMULATORS` accumulators and four hold more (widths with no divisor from 4 to 14: SqueezeNet's 3x3/2
    stem, 111 wide, 3 columns, on 32-register targets)."""
    lanes = target.vector_lanes
    nr = 2 * lanes if channels % (2 * lanes) == 0 else lanes
    mr = _tile_columns(width, nr // lanes, target, column_stride)
    if mr * (nr // lanes) < CONV_MIN_ACCUMULATORS and channels % (4 * lanes) == 0:
        wide = _tile_columns(width, 4, target, column_stride)
        if wide * 4 > mr * (nr // lanes):
            return 4 * lanes, wide
    return nr, mr


def _tile_columns(width: int, vectors: int, target: Target, column_stride: int = 0) -> int:
    """The output columns of a register tile of `vectors` channel vectors: at most `CONV_MAX_COLUMNS` and `width`,
    their accumulators fitting the vector registers beside one weight vector each and a broadcast input, and their
    input pixels (`column_stride` bytes apart) at most `L1_WAYS` lines to an L1 set. The 1x1 1024->256 convolution
    at 14x14 (light ResNet-50's most called kernel): 14 columns of 4 KiB-apart pixels 70 GFLOP/s, 7 columns 104 (Zen
    4, one thread, caches warm); on 2 KiB (512 channels: 7 lines to a set) 14 columns and 7 ran alike.

    On 32-register targets, the most columns that divide `width` (tiles of up to 14 columns find a divisor on common
    widths). On 16-register targets (AVX2: at most 6 columns of two vectors) the count need not divide it: the
    columns left over get a tile of their own (`ConvRule.apply`), and the count is the one whose tiles take the
    fewest cycles by `_row_cycles`: 6 on widths 56 and 28, 5 on 14 (5 + 5 + 4), 4 on 7 (4 + 3). Light ResNet-50 on
    Zen 3 (one thread, thread CPU time, one process): 172 ms with divisors (4 columns on its 56/28 maps, 2 on 14,
    im2col on 7), 139 ms with 6 columns and a tail everywhere, whose 14- and 7-wide kernels this choice makes 5-15%
    faster; four vectors of 3 columns (MLAS's AVX2 tile, which keeps the weights in memory operands) spilled
    registers and took 247 ms."""
    in_registers = [
        f for f in range(min(CONV_MAX_COLUMNS, width), 0, -1) if f * vectors + vectors + 1 <= target.vector_registers
    ]
    fitting = [f for f in in_registers if _same_set_lines(f, column_stride) <= L1_WAYS]
    if target.vector_registers >= 32:
        divisor = next(f for f in fitting if width % f == 0)
        if fitting == in_registers or divisor * vectors >= CONV_MIN_ACCUMULATORS:
            return divisor  # else the L1 took the divisors worth having: a tail, as with 16 registers
    return min(fitting, key=lambda f: _row_cycles(width, f, vectors))


def _same_set_lines(columns: int, column_stride: int) -> int:
    """The most of `columns` input pixels, `column_stride` bytes apart, whose cache lines share an L1 set."""
    if not column_stride:
        return 1
    lines = {column * column_stride // 64 for column in range(columns)}
    sets = [line % (L1_SET_SPAN // 64) for line in lines]
    return max(sets.count(index) for index in sets)


def _row_cycles(width: int, columns: int, vectors: int) -> int:
    """A row's cost in half cycles per reduction step, in tiles of `columns` and a tail: each tile's multiply-adds
    at two a cycle, but at least `CONV_MIN_ACCUMULATORS` / 2 cycles (a multiply-add's latency: fewer accumulators
    leave the FMA units idle), plus a cycle of overhead (its input broadcasts, loop and tile bookkeeping)."""
    tiles = [columns] * (width // columns) + ([width % columns] if width % columns else [])
    return sum(max(tile * vectors, CONV_MIN_ACCUMULATORS) + 2 for tile in tiles)


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
    """Bytes between the input pixels that consecutive output columns read (`_tile_columns`)."""


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
        loaded machine."""
        nr, mr = conv_tile(workload.channel_count, workload.width, target, workload.column_stride)
        return {
            "nr": nr,
            "mr": mr,
            "channels": "innermost",
            "unroll": True,
            "pack": True,
            "prefetch": False,
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
