"""A quantized ResNet-style network in QOperator form (`examples/quantized_resnet.py`: QuantizeLinear, QLinearConv
stem and residual blocks with a DequantizeLinear/Add/Relu/QuantizeLinear join, QLinearMatMul head) gives exactly
ONNX Runtime's uint8 outputs.

The oracle runs at ORT_ENABLE_BASIC: from ORT_ENABLE_EXTENDED on, ONNX Runtime rewrites DequantizeLinear -> Add ->
QuantizeLinear into its contrib QLinearAdd, whose rounding is not ONNX's (it moves ~10% of the join's outputs by
one or more steps).
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from quantized_resnet import quantized_resnet

from minimlc.runtime import InferenceSession


@pytest.mark.parametrize(("size", "opt_level"), [(56, 3), (12, 0)], ids=["56x56-O3", "12x12-O0"])
def test_quantized_resnet_matches_onnxruntime_exactly(size: int, opt_level: int) -> None:
    model = quantized_resnet(size=size)
    feeds = {"x": np.random.default_rng(3).normal(0.0, 1.0, (1, 3, size, size)).astype(np.float32)}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    expected = ort.InferenceSession(model.SerializeToString(), options).run(None, feeds)
    actual = InferenceSession(model, cache=False, opt_level=opt_level).run(None, feeds)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype == np.uint8
        assert len(np.unique(want)) > 3  # the outputs are not saturated to a constant
        np.testing.assert_array_equal(got, want)
