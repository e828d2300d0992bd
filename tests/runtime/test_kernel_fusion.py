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
from onnx import TensorProto, helper, numpy_helper

from minimlc.lowering import OPT_LEVELS, PIPELINES
from minimlc.runtime import InferenceSession
from minimlc.tools import model_tools

RTOL = ATOL = 1e-4


class _Builder:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str, shape: tuple[int, ...], scale: float = 0.3, low: float | None = None) -> str:
        values = self.rng.standard_normal(shape) * scale if low is None else self.rng.uniform(low, 2.0, shape)
        self.initializers.append(numpy_helper.from_array(values.astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def conv(self, x: str, c_in: int, c_out: int, name: str, size: int, **attributes: object) -> str:
        weight = self.weight(f"{name}.w", (c_out, c_in, size, size), scale=1.0 / np.sqrt(c_in * size * size))
        pads = [size // 2] * 4
        return self.node(
            "Conv",
            [x, weight, self.weight(f"{name}.b", (c_out,))],
            name,
            kernel_shape=[size, size],
            pads=pads,
            **attributes,
        )

    def batch_norm(self, x: str, channels: int, name: str) -> str:
        params = [self.weight(f"{name}.{p}", (channels,)) for p in ("gamma", "beta", "mean")]
        params.append(self.weight(f"{name}.var", (channels,), low=0.5))
        return self.node("BatchNormalization", [x, *params], name)

    def model(self, input_shape: list[int], output: str, output_shape: list[int]) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "fusion",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        onnx.checker.check_model(model)
        return model


def residual_blocks() -> onnx.ModelProto:
    """Two residual blocks (3x3 conv + bias + ReLU, 3x3 conv + bias, + input, ReLU), the second with a 1x1
    projection on the shortcut, then global pooling, a Gemm and a Softmax: ResNet's kernel kinds in small."""
    b = _Builder(11)
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
    b = _Builder(12)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 8, 16, "c1", 3, strides=[2, 2]), 16, "bn1")], "r1")
    y = b.batch_norm(b.conv(y, 16, 16, "c2", 3), 16, "bn2")
    y = b.node("Relu", [b.node("Add", [y, b.conv("x", 8, 16, "c3", 1, strides=[2, 2])], "sum")], "r2")
    return b.model([1, 8, 24, 24], b.conv(y, 16, 16, "c4", 1), [1, 16, 12, 12])


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
    """Each conv with its layout copy, pad and epilogue is one kernel; pooling and each softmax step stay their own
    kernels; the Flatten and the Gemm's bias join the Gemm."""
    stats = InferenceSession(residual_blocks(), opt_level=3).stats
    convs, pool, gemm, softmax = 5, 1, 1, 4
    assert stats["kernels"] == convs + pool + gemm + softmax, stats
