"""Convolution decisions, read by the te passes that pick an algorithm and a layout and by the schedule rules that
run the result: im2col + GEMM (`prefers_im2col`, read by `te-conv-im2col`), Winograd F(2x2, 3x3) (`prefers_winograd`,
read by `te-conv-winograd`) or the direct schedule, whose default register tile (`conv_tile`) the im2col choice and
the direct rule (`schedule/conv.py`) both read; and the channel vectors of a channels-last depthwise convolution
(`channel_vectors`: `te-channels-last` stores it so only where there are some, `schedule/depthwise.py` vectorizes
over them).

    shape = ConvShape(batch=1, in_channels=64, out_channels=64, out_height=56, out_width=56, kernel_height=3,
                      kernel_width=3)
    prefers_winograd(shape, target_from_name("znver4"))   # True: 784 tiles of 64 -> 64 channels
    conv_tile(64, 56, target_from_name("znver4"))         # (32, 14): two vectors of channels x 14 columns
"""

from __future__ import annotations

from dataclasses import dataclass

from minimlc.lowering.strategy.padding import ROW_MULTIPLE
from minimlc.lowering.target import Target

CONV_MAX_COLUMNS = 14
"""Most output columns a convolution tile covers. The tile takes the largest count up to this that divides the
width and fits the registers: ResNet widths 112, 56, 28, 14 take 14 and 7 takes 7; the 55, 27 and 13 of SqueezeNet
and Inception v1 take 11, 9 (or 27's 9 with two vectors) and 13. A tile of one column reloads every weight vector
for each multiply-add (3-4x slower than ONNX Runtime on those widths when only 14, 8, 7, 6, 4, 2, 1 were allowed)."""
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
time of the 12 of four vectors (one thread, by CPU time); 14 columns and a tail hold 28 (`_tile_columns`)."""


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


def prefers_im2col(shape: ConvShape, target: Target, input_is_concat: bool = False) -> bool:
    """The `auto` choice of `te-conv-im2col`, a rule read off per-shape measurements of both algorithms
    (docs/measurements.md, "Convolution algorithms"): im2col + GEMM where the direct schedule's register tile is too narrow
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
    `CONV_MIN_ACCUMULATORS` accumulators and four hold more (maps at most 3 wide)."""
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
    widths), where that divisor holds at least `CONV_MIN_ACCUMULATORS` accumulators; else, as on 16 registers, the
    cheapest count with a tail. ZFNet's 7x7/2 stem over a prime width of 109 took one column (2 accumulators, 5.07 ms)
    and takes 14 and a tail of 11 (2.02 ms; the model 0.89x, Zen 5, one thread); SqueezeNet's 111-wide stem, whose
    divisor 3 had been widened to four vectors (12 accumulators, 0.199 ms), takes 14 columns of two (0.204 ms).
    On 16-register targets (AVX2: at most 6 columns of two vectors) the count need not divide it: the
    columns left over get a tile of their own (`ConvRule.apply` in `schedule/conv.py`), and the count is the one
    whose tiles take the fewest cycles by `_row_cycles`: 6 on widths 56 and 28, 5 on 14 (5 + 5 + 4), 4 on 7 (4 + 3).
    Light ResNet-50 on Zen 3 (one thread, thread CPU time, one process): 172 ms with divisors (4 columns on its 56/28
    maps, 2 on 14, im2col on 7), 139 ms with 6 columns and a tail everywhere, whose 14- and 7-wide kernels this
    choice makes 5-15% faster; four vectors of 3 columns (MLAS's AVX2 tile, which keeps the weights in memory
    operands) spilled registers and took 247 ms."""
    in_registers = [
        f for f in range(min(CONV_MAX_COLUMNS, width), 0, -1) if f * vectors + vectors + 1 <= target.vector_registers
    ]
    fitting = [f for f in in_registers if _same_set_lines(f, column_stride) <= L1_WAYS]
    if target.vector_registers >= 32:
        divisor = next(f for f in fitting if width % f == 0)
        if divisor * vectors >= CONV_MIN_ACCUMULATORS:
            return divisor  # else a tail, as with 16 registers: a prime width, or the L1 took the divisors worth having
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


def channel_vectors(channels: int, target: Target) -> tuple[int, ...]:
    """The vector widths (the target's, half and a quarter of it, at least 4 lanes) that divide `channels`,
    widest first."""
    lanes = target.vector_lanes
    return tuple(v for v in (lanes, lanes // 2, lanes // 4) if v >= 4 and channels % v == 0)
