"""The direct convolution's default register tile (`conv_tile`): two vectors of output channels and the most
columns that fit the registers (on 32-register targets: that divide the width, where a divisor holds at least
`CONV_MIN_ACCUMULATORS` accumulators; else, and on 16-register targets, the cheapest columns with a tail taking the
rest: ZFNet's prime 109-wide stem, SqueezeNet's 111), widened to four vectors where two leave fewer than
`CONV_MIN_ACCUMULATORS` accumulators (maps at most 3 wide) and four hold more; every other shape (ResNet-50's,
SqueezeNet's and Inception's widths) keeps its tile; and the output-channel padding (`channel_padding_multiple`):
two vectors where that costs few more channels and they need padding anyway or the target has 16 registers."""

from __future__ import annotations

import pytest

from minimlc.lowering.strategy.conv import (
    CONV_MAX_COLUMNS,
    CONV_MIN_ACCUMULATORS,
    ConvShape,
    conv_tile,
    prefers_im2col,
)
from minimlc.lowering.strategy.padding import channel_padding_multiple
from minimlc.lowering.target import Target, target_from_name

AVX512, AVX2 = target_from_name("skylake-avx512"), target_from_name("x86-64-v3")


@pytest.mark.parametrize(
    ("channels", "width", "tile"),
    [
        (96, 109, (32, 14)),  # ZFNet's stem, 7x7/2 3->96 over a prime width: 7 tiles of 14 and a tail of 11, not 1
        (128, 17, (32, 13)),  # 13 + 4 columns: 26 and 8 accumulators
        (64, 111, (32, 14)),  # SqueezeNet's stem, 3x3/2 3->64: its divisor 3 held 6 accumulators
        (64, 51, (32, 14)),
        (32, 111, (32, 14)),
        (16, 111, (16, 14)),
    ],
)
def test_widths_without_a_good_divisor_take_a_tail(channels: int, width: int, tile: tuple[int, int]) -> None:
    assert conv_tile(channels, width, AVX512) == tile


@pytest.mark.parametrize(
    ("channels", "width", "tile"),
    [
        (64, 3, (64, 3)),  # 12 accumulators instead of 6
        (64, 2, (64, 2)),
        (64, 1, (64, 1)),
        (32, 3, (32, 3)),  # channels that four vectors do not divide keep two
    ],
)
def test_few_accumulators_widen_the_tile(channels: int, width: int, tile: tuple[int, int]) -> None:
    assert conv_tile(channels, width, AVX512) == tile


@pytest.mark.parametrize(
    ("channels", "width", "tile"),
    [
        (64, 112, (32, 14)),  # ResNet-50, DenseNet-121 and Inception's 7x7/2 stems
        (64, 56, (32, 14)),
        (256, 56, (32, 14)),
        (128, 28, (32, 14)),
        (256, 14, (32, 14)),
        (512, 7, (32, 7)),
        (2048, 7, (32, 7)),
        (192, 7, (32, 7)),  # Inception v2's 7x7 maps
        (64, 55, (32, 11)),  # SqueezeNet's fire modules
        (128, 27, (32, 9)),
        (256, 13, (32, 13)),
        (16, 13, (16, 13)),
        (48, 7, (16, 7)),
    ],
)
def test_other_shapes_keep_their_tile(channels: int, width: int, tile: tuple[int, int]) -> None:
    assert conv_tile(channels, width, AVX512) == tile


@pytest.mark.parametrize(
    ("channels", "width", "tile"),
    [
        (64, 111, (16, 6)),  # 18 tiles of 6 columns and a tail of 3: no divisor needed
        (64, 56, (16, 6)),  # ResNet-50's maps: 6, 6, 5 and 4 columns where divisors gave 4, 4, 2 and 1
        (256, 28, (16, 6)),
        (256, 14, (16, 5)),  # 5 + 5 + 4 columns: 10 and 8 accumulators, not 6 + 6 + 2
        (512, 7, (16, 4)),  # 4 + 3 rather than 6 + 1 (a one-column tail holds 2 accumulators)
        (64, 55, (16, 5)),  # SqueezeNet's fire modules: 11 tiles of 5
        (24, 56, (8, 14)),  # one vector of channels: 14 columns, 14 accumulators
        (64, 3, (32, 2)),  # two vectors would hold 6 accumulators, four vectors of 2 columns hold 8
        (64, 1, (32, 1)),
    ],
)
def test_avx2_tiles_take_the_cheapest_columns_with_a_tail(channels: int, width: int, tile: tuple[int, int]) -> None:
    assert conv_tile(channels, width, AVX2) == tile


@pytest.mark.parametrize("target", [AVX512, AVX2], ids=["avx512", "avx2"])
def test_tiles_fit_the_registers_and_divide_the_shape_on_32_registers(target: Target) -> None:
    lanes = target.vector_lanes
    for channels in (lanes, 2 * lanes, 3 * lanes, 4 * lanes, 8 * lanes):
        for width in range(1, 120):
            nr, mr = conv_tile(channels, width, target)
            vectors = nr // lanes
            assert channels % nr == 0
            assert mr <= min(width, CONV_MAX_COLUMNS)
            if target.vector_registers >= 32 and width % mr:  # a tail only where no divisor holds enough
                assert all(d * vectors < CONV_MIN_ACCUMULATORS for d in range(1, mr + 1) if width % d == 0)
            assert mr * vectors + vectors + 1 <= target.vector_registers
            if vectors == 4:  # widened only from a tile of too few accumulators, to one of more
                assert mr * 4 > conv_tile(2 * lanes, width, target)[1] * 2
                assert conv_tile(2 * lanes, width, target)[1] * 2 < CONV_MIN_ACCUMULATORS


def test_widening_leaves_the_algorithm_choice_alone() -> None:
    """`prefers_im2col` reads the tile's columns: a widened tile has at most 3 (a narrow one would have too), so
    every convolution of 8 or more input channels it applies to still goes to im2col."""
    for width in range(1, 120):
        nr, mr = conv_tile(64, width, AVX512)
        if nr == 64:
            assert mr <= 3
            assert prefers_im2col(ConvShape(1, 16, 64, width, width, 3, 3), AVX512)


@pytest.mark.parametrize(
    ("channels", "avx512", "avx2"),
    [
        (1000, 32, 16),  # SqueezeNet's classes: 1024 (a 13x32 tile) rather than 1008 (13x16); on AVX2 1008
        (136, 16, 16),  # 16 registers: 144 channels in tiles of two vectors rather than one
        (24, 32, 8),  # ShuffleNet's stem: 32 either way
        (40, 16, 8),  # 48, not 64: two vectors would cost 40 % more channels
        (100, 16, 8),
        (1008, 16, 8),  # whole vectors already: never padded further
        (48, 16, 8),
    ],
)
def test_channel_padding_takes_two_vectors_where_they_cost_little(channels: int, avx512: int, avx2: int) -> None:
    assert channel_padding_multiple(channels, AVX512) == avx512
    assert channel_padding_multiple(channels, AVX2) == avx2


@pytest.mark.parametrize(
    ("channels", "width", "column_stride", "tile"),
    [
        (256, 14, 4096, (32, 7)),  # 1x1 1024->256 at 14x14: 14 pixels 4 KiB apart would share one L1 set
        (1024, 14, 4096, (32, 7)),  # 1x1/2 512->1024: a stride of 2 over 512 channels is 4 KiB too
        (512, 7, 8192, (32, 7)),  # 7 lines to a set fit its 8 ways
        (256, 14, 2048, (32, 14)),  # 512 channels: the pixels alternate between two sets, 7 lines each
        (256, 14, 4096 + 64, (32, 14)),  # a line apart in every set
        (256, 13, 4, (32, 13)),  # channels-first: the 13 pixels share one line
        (512, 56, 4096, (32, 8)),
        (256, 13, 4096, (32, 8)),  # no divisor from 2 to 8: a tile of 8 and a tail of 5, not 13 tiles of 1
    ],
)
def test_tiles_keep_their_columns_lines_within_the_l1_ways(
    channels: int, width: int, column_stride: int, tile: tuple[int, int]
) -> None:
    assert conv_tile(channels, width, AVX512, column_stride) == tile
    assert conv_tile(channels, width, AVX512) == conv_tile(channels, width, AVX512, column_stride=256)
