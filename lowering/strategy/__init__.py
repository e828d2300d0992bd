"""Cross-stage decisions (TVM's op strategy): what one stage decides that another stage, earlier or later, must
decide alike, in one home that every stage may import, so that no stage imports a later one.

- `conv.py`: a convolution's algorithm (im2col + GEMM, Winograd or direct), the direct schedule's default register
  tile that choice rests on, and a channels-last depthwise convolution's channel vectors;
- `padding.py`: how far graph passes pad output channels and GEMM columns, and te-conv-im2col its GEMM's rows and
  columns;
- `tuning_db.py`: the tuning database, measured choices that override the rules (algorithms and schedules);
- `vectorization.py`: which loops vector code can be generated for (interleaved strides, math ops left to libm);
- `data_layout.py`: how values are represented for LLVM (memrefs as bare pointers, bytes per element).

Analyses that several stages share stay with the IR they read, at the earliest stage that needs them
(`loop/kernel_patterns.py`, `loop/expand.py`, `graph_to_te/builder.py`) or in `generic/` (`structural_key.py`).

    from minimlc.lowering.strategy.conv import ConvShape, prefers_winograd
    prefers_winograd(ConvShape(1, 64, 64, 56, 56, 3, 3), target_from_name("znver4"))   # True
"""
