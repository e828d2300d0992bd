"""bench/bench_kernels.py --model-convs: the distinct convolutions of a light model with their call counts, and one
shape timed with both convolution algorithms beside ONNX Runtime (their outputs checked against it)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_kernels import ConvSpec, bench_conv_algorithms, model_convs


def test_model_convs_lists_distinct_shapes_with_calls() -> None:
    convs = model_convs("squeezenet")
    assert len(convs) == 18
    assert sum(calls for _, calls in convs) == 26
    stem, calls = convs[0]
    assert (stem.label(), stem.out_size(), calls) == ("3x3/2 3->64 @224", (111, 111), 1)


def test_one_shape_with_both_algorithms() -> None:
    spec = ConvSpec(8, 17, 17, 16, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1))
    report = bench_conv_algorithms(spec, 2, runs=1, warmup=0)
    assert report["kernel"] == "3x3 8->16 @17 (x2)"
    assert set(report["results"]) == {"direct", "im2col", "onnxruntime"}  # type: ignore[arg-type]
    # A 17-wide output, prime: the direct tile takes 13 columns and a tail of 4 with 32 vector registers, 6 + 6 + 5
    # with 16; enough columns either way for the direct schedule.
    assert report["auto"] == "direct"
