"""onnx's nine light CNNs with seeded random weights, minimlc against ONNX Runtime on the same seeded input.

The shipped light models have ConstantOfShape(0.02) weights, so every class gets the same score whatever the
kernels compute; `model_tools.randomise_weights` replaces those weights by seeded random ones scaled per role (conv
and matrix weights 1/sqrt(fan_in), positive BatchNormalization variances), which makes every output element depend
on every layer. Besides the model's outputs, the logits (the input of a final Softmax) are compared, because a
saturated or near-uniform softmax hides errors.

Tolerance: max|minimlc - ORT| <= 1e-4 + 1e-3 * max|ORT| per tensor. Both compute in float32 but sum in different
orders (minimlc vectorises and contracts to FMA, ONNX Runtime uses im2col + GEMM): rounding grows with the reduction
length (up to 4,608 terms per conv output) and the depth (up to 121 convs), to relative errors near 1e-5..1e-4 of
the tensor's scale; an indexing or padding bug gives errors of order 1e-1 of it.
"""

from __future__ import annotations

import onnx
import pytest

from minimlc.runtime import InferenceSession
from minimlc.tools import model_tools
from minimlc.tools.conformance import light_model_paths

pytestmark = pytest.mark.slow

RTOL, ATOL = 1e-3, 1e-4
SEED = 0


def with_logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model, also outputting the input of a Softmax that produces a graph output."""
    outputs = {vi.name for vi in model.graph.output}
    logits = [node.input[0] for node in model.graph.node if node.op_type == "Softmax" and node.output[0] in outputs]
    return model_tools.with_outputs(model, logits) if logits else model


@pytest.mark.parametrize("path", light_model_paths(), ids=lambda path: path.stem)
def test_light_model_with_random_weights_matches_onnxruntime(path) -> None:
    model = with_logits(model_tools.randomise_weights(onnx.load(path), seed=SEED))
    feeds = model_tools.random_inputs(model, seed=SEED)
    names = [vi.name for vi in model.graph.output]
    actual = dict(zip(names, InferenceSession(model).run(names, feeds)))
    expected = model_tools.run_oracle(model, feeds, "onnxruntime")
    errors = model_tools.compare(actual, expected, names, RTOL, ATOL)
    assert all(error.within_tolerance for error in errors), errors
