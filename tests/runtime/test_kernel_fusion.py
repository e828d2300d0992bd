"""`loop-fuse-kernels` changes how many kernels run, not what they compute: small convolution models with bias, ReLU
and residual adds, compiled with and without the pass at O2 and O3 (on one thread and on two, so that parallel loops
of fused kernels are outlined), against ONNX Runtime.

Tolerance: |minimlc - ort| <= 1e-4 + 1e-4 * |ort|; with and without fusion the same loop nests run in the same order
on the same data (folding an epilogue into a convolution's write-back only drops an addition to zero), so those two
must agree exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from model_builder import ModelBuilder

from minimlc import InferenceSession
from minimlc.lowering.pipeline import OPT_LEVELS, PIPELINES
from minimlc.tools import model_tools

RTOL = ATOL = 1e-4


def residual_blocks() -> onnx.ModelProto:
    """Two residual blocks (3x3 conv + bias + ReLU, 3x3 conv + bias, + input, ReLU), the second with a 1x1
    projection on the shortcut, then global pooling, a Gemm and a Softmax: ResNet's kernel kinds in small."""
    b = ModelBuilder(11)
    y = b.node("Relu", [b.conv("x", 16, 16, "a1", 3)], "a1r")
    y = b.node("Relu", [b.node("Add", [b.conv(y, 16, 16, "a2", 3), "x"], "a_sum")], "a_out")
    z = b.node("Relu", [b.conv(y, 16, 32, "b1", 3)], "b1r")
    z = b.node("Add", [b.conv(z, 32, 32, "b2", 1), b.conv(y, 16, 32, "proj", 1)], "b_sum")
    z = b.node("GlobalAveragePool", [b.node("Relu", [z], "b_out")], "pool")
    z = b.node("Flatten", [z], "flat")
    z = b.node("Gemm", [z, b.weight("fc.w", (10, 32)), b.weight("fc.b", (10,))], "fc", transB=1)
    return b.model([1, 16, 32, 32], b.node("Softmax", [z], "prob"), [1, 10])


def conv_bn_residual() -> onnx.ModelProto:
    """Conv + batch norm + ReLU twice around a residual add, ending on a conv output (no pooling after it)."""
    b = ModelBuilder(12)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 8, 16, "c1", 3, strides=[2, 2]), 16, "bn1")], "r1")
    y = b.batch_norm(b.conv(y, 16, 16, "c2", 3), 16, "bn2")
    y = b.node("Relu", [b.node("Add", [y, b.conv("x", 8, 16, "c3", 1, strides=[2, 2])], "sum")], "r2")
    return b.model([1, 8, 24, 24], b.conv(y, 16, 16, "c4", 1), [1, 16, 12, 12])


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [2, 3])
@pytest.mark.parametrize("build", [residual_blocks, conv_bn_residual], ids=lambda build: build.__name__)
def test_fusion_on_and_off_match_onnxruntime(
    build: Callable[[], onnx.ModelProto], opt_level: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = build()
    fused = InferenceSession(model, opt_level=opt_level)
    name = f"lower-to-llvm-O{opt_level}"
    passes = OPT_LEVELS[opt_level].split(",")
    assert "loop-fuse-kernels" in passes
    unfused_pipeline = ",".join(p for p in passes if p != "loop-fuse-kernels")
    monkeypatch.setitem(PIPELINES, name, (PIPELINES[name][0], unfused_pipeline))
    unfused = InferenceSession(model, opt_level=opt_level)
    assert fused.stats["kernels"] < unfused.stats["kernels"]

    feeds = model_tools.random_inputs(model, seed=5)
    (expected,) = model_tools.run_oracle(model, feeds, "onnxruntime").values()
    (without,) = unfused.run(None, feeds)
    for session in (fused, fused.with_num_threads(2)):
        (actual,) = session.run(None, feeds)
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(actual, without)


def test_residual_blocks_fuse_to_one_kernel_per_conv() -> None:
    """Each conv with its layout copy, pad and epilogue is one kernel; pooling stays its own kernel, and so does the
    softmax (its four stages are one kernel from te-to-loop on); the Flatten and the Gemm's bias join the Gemm."""
    stats = InferenceSession(residual_blocks(), opt_level=3).stats
    convs, pool, gemm, softmax = 5, 1, 1, 1
    assert stats["kernels"] == convs + pool + gemm + softmax, stats
