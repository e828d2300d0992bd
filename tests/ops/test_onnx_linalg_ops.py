"""Numerics of Det at O0 and O3: every order the kernel takes (1 to 8), batches of several axes, singular and
permutation-needing matrices (partial pivoting), against ONNX Runtime for float32; float64 and float16 against
numpy's `linalg.det` (ONNX Runtime's Det is float32 only). Orders beyond 8 and non-square inputs are refused."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

RNG = np.random.default_rng(61)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (3, 2, 2)], ids=str)
def test_det(shape: tuple[int, ...]) -> None:
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32)}
    check_against_onnxruntime(InferenceSession, one_node_model("Det", feeds, {}, opset=11), feeds, rtol=1e-4)


def test_det_batches_with_pivoting_and_singular_matrices() -> None:
    """A zero leading entry (needs a row swap), a permutation (det -1), a singular matrix (two equal rows: 0) and a
    zero matrix, in a 2x3 batch of 3x3 matrices."""
    x = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
    x[0, 0] = [[0.0, 2.0, 1.0], [3.0, 1.0, 4.0], [1.0, 5.0, 9.0]]
    x[0, 1] = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    x[1, 0] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]
    x[1, 1] = 0.0
    feeds = {"x": x}
    check_against_onnxruntime(InferenceSession, one_node_model("Det", feeds, {}, opset=11), feeds, rtol=1e-5)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-12), (np.float16, 2e-3)], ids=["float64", "float16"])
def test_det_other_floats(dtype: type, rtol: float) -> None:
    x = RNG.standard_normal((4, 5, 5)).astype(dtype)
    feeds = {"x": x}
    session = InferenceSession(one_node_model("Det", feeds, {}, opset=22), cache=False)
    (actual,) = session.run(None, feeds)
    assert actual.dtype == dtype and session.stats["kernels"] > 0
    expected = np.linalg.det(x.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=1e-12)


def test_det_of_large_matrices_is_refused() -> None:
    feeds = {"x": np.zeros((9, 9), np.float32)}
    with pytest.raises(UnsupportedFeatureError, match="Det of 9x9 matrices is not supported"):
        InferenceSession(one_node_model("Det", feeds, {}, opset=11), cache=False)


def test_det_of_non_square_matrices_is_refused() -> None:
    model = one_node_model("Det", {"x": np.zeros((3, 3), np.float32)}, {}, opset=11)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2  # onnx's shape inference would refuse it
    with pytest.raises(ModelImportError, match=r"input of shape \(2, 3\) is not a batch of square matrices"):
        InferenceSession(model, cache=False)
