"""Padding decisions, each taken for the schedule that later runs the padded kernel: the output channels of a
convolution (`graph-pad-conv-channels`) and the columns of a Gemm's or MatMul's weight (`graph-pad-gemm-columns`) are
rounded up to `channel_padding_multiple`, im2col's GEMM rows and columns (`te-conv-im2col`) to `ROW_MULTIPLE` and
`COLUMN_MULTIPLE`. The graph and te passes that pad, and `prefers_im2col` (`strategy/conv.py`), read them here.

    channel_padding_multiple(1000, target_from_name("skylake-avx512"))   # 32: SqueezeNet's 1000 classes -> 1024
"""

from __future__ import annotations

from minimlc.lowering.target import Target

ROW_MULTIPLE = 8
"""im2col GEMM rows (output pixels) are padded to a multiple of this: the largest register tile height the GEMM
schedule uses, so that it never falls back to a one-row tile on odd feature maps (55x55, 13x13, 7x7)."""
COLUMN_MULTIPLE = 16
"""im2col GEMM columns (output channels) are padded to a multiple of this: a whole vector register (AVX-512) or
two."""


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
