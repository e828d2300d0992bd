"""Numerics of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against ONNX Runtime at O0 and O3: each
reduction, with and without class weights and ignore_index, 2-D and N-d targets, and the log_prob output."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession

RNG = np.random.default_rng(11)


def _feeds(shape: tuple[int, ...], weighted: bool, ignore_index: int | None, dtype: Any) -> dict[str, np.ndarray]:
    classes = shape[1]
    target = RNG.integers(0, classes, size=(shape[0], *shape[2:])).astype(dtype)
    if ignore_index is not None:
        target.flat[::3] = ignore_index
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32), "t": target}
    if weighted:
        feeds["w"] = RNG.uniform(0.5, 2.0, size=(classes,)).astype(np.float32)
    return feeds


LOSS_CASES = [
    pytest.param(
        shape, reduction, weighted, ignore_index, dtype, id=f"{shape}-{reduction}-w{weighted}-ii{ignore_index}"
    )
    for shape, dtype in [((4, 5), np.int64), ((3, 4, 2, 3), np.int32)]
    for reduction in ("none", "sum", "mean")
    for weighted in (False, True)
    for ignore_index in (None, 1, -1)
]


@pytest.mark.parametrize(("shape", "reduction", "weighted", "ignore_index", "dtype"), LOSS_CASES)
def test_negative_log_likelihood_loss(
    shape: tuple[int, ...], reduction: str, weighted: bool, ignore_index: int | None, dtype: Any
) -> None:
    feeds = _feeds(shape, weighted, ignore_index, dtype)
    attributes: dict[str, Any] = {"reduction": reduction}
    if ignore_index is not None:
        attributes["ignore_index"] = ignore_index
    model = one_node_model("NegativeLogLikelihoodLoss", feeds, attributes, opset=13)
    check_against_onnxruntime(InferenceSession, model, feeds)


@pytest.mark.parametrize(("shape", "reduction", "weighted", "ignore_index", "dtype"), LOSS_CASES[::2])
def test_softmax_cross_entropy_loss_and_log_prob(
    shape: tuple[int, ...], reduction: str, weighted: bool, ignore_index: int | None, dtype: Any
) -> None:
    feeds = _feeds(shape, weighted, ignore_index, dtype)
    attributes: dict[str, Any] = {"reduction": reduction}
    if ignore_index is not None:
        attributes["ignore_index"] = ignore_index
    model = one_node_model("SoftmaxCrossEntropyLoss", feeds, attributes, outputs=2, opset=13)
    check_against_onnxruntime(InferenceSession, model, feeds)
