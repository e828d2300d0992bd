"""A quantized ResNet-style network in QOperator form (`examples/quantized_resnet.py`: QuantizeLinear, QLinearConv
stem and residual blocks with a DequantizeLinear/Add/Relu/QuantizeLinear join, QLinearMatMul head) gives exactly
ONNX Runtime's uint8 outputs.

The oracle runs at ORT_ENABLE_BASIC: from ORT_ENABLE_EXTENDED on, ONNX Runtime rewrites DequantizeLinear -> Add ->
QuantizeLinear into its contrib QLinearAdd, whose rounding is not ONNX's (it moves ~10% of the join's outputs by
one or more steps). On a host without VNNI the weights use 7 bits (`reduce_range`): ONNX Runtime's u8 x s8 kernels
saturate there (`onnxruntime_saturates_u8s8`), and a test shows that with 8-bit weights minimlc still equals onnx's
reference evaluator where ONNX Runtime does not.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator
from quantized_resnet import onnxruntime_saturates_u8s8, quantized_resnet

from minimlc import InferenceSession
from minimlc.lowering.target import target_from_name


@pytest.mark.slow
@pytest.mark.parametrize(
    ("size", "opt_level", "target"),
    [(56, 3, "host"), (12, 0, "host"), (12, 2, "x86-64-v3"), (12, 3, "znver4")],
    ids=["56x56-O3", "12x12-O0", "12x12-O2-no-vnni", "12x12-O3-vnni"],
)
def test_quantized_resnet_matches_onnxruntime_exactly(size: int, opt_level: int, target: str) -> None:
    """On the host, without VNNI (the i32 multiply-add path) and with it (dot products, channels-last chains)."""
    if target != "host" and target_from_name(target).missing_on_host():
        pytest.skip(f"this host cannot run code for {target}")
    model = quantized_resnet(size=size, reduce_range=onnxruntime_saturates_u8s8())
    feeds = {"x": np.random.default_rng(3).normal(0.0, 1.0, (1, 3, size, size)).astype(np.float32)}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    expected = ort.InferenceSession(model.SerializeToString(), options).run(None, feeds)
    actual = InferenceSession(model, cache=False, opt_level=opt_level, target=target).run(None, feeds)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype == np.uint8
        assert len(np.unique(want)) > 3  # the outputs are not saturated to a constant
        np.testing.assert_array_equal(got, want)


def test_eight_bit_weights_are_exact_where_onnxruntime_saturates() -> None:
    """Full-range int8 weights on a small block: minimlc equals onnx's reference evaluator (exact int32 sums; its
    float64 requantization agrees with float32 on this size), whatever ONNX Runtime's kernels do on this host."""
    model = quantized_resnet(channels=16, size=8, blocks=1)
    reference_model = onnx.ModelProto()
    reference_model.CopyFrom(model)
    for opset in reference_model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = 21  # the reference evaluator has DequantizeLinear from 19; the ops used are unchanged
    feeds = {"x": np.random.default_rng(0).normal(0.0, 1.0, (1, 3, 8, 8)).astype(np.float32)}
    expected = ReferenceEvaluator(reference_model).run(None, feeds)
    actual = InferenceSession(model, cache=False).run(None, feeds)
    for got, want in zip(actual, expected, strict=True):
        assert len(np.unique(want)) > 3
        np.testing.assert_array_equal(got, want)
