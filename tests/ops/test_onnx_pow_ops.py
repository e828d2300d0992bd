"""Numerics of Pow with integer operands against ONNX Runtime at O0 and O3: a float32 base to int32 and int64
exponents, and integer bases to integer exponents (square-and-multiply; a negative exponent truncates the
reciprocal), and integer bases to float exponents (in float64, truncated back, as ONNX Runtime computes them); a float
base to a constant 2 or 3 by multiplying."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model

RNG = np.random.default_rng(23)


@pytest.mark.parametrize("exponent_type", [np.int32, np.int64])
def test_float_base_integer_exponent(exponent_type: Any) -> None:
    feeds = {"x": RNG.uniform(-2.0, 2.0, size=(3, 4)).astype(np.float32), "y": np.array([-2, 0, 1, 3], exponent_type)}
    check_against_onnxruntime(InferenceSession, one_node_model("Pow", feeds, {}, opset=15), feeds)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_base_integer_exponent(dtype: Any) -> None:
    base = np.array([[-3, -2, -1, 0, 1, 2, 3, 7], [5, -5, 1, -1, 2, -2, 11, 4]], dtype)
    exponent = np.array([[0, 1, 3, 2, 9, 10, 5, 4], [3, 3, -2, -3, -1, -4, 6, 0]], dtype)
    feeds = {"x": base, "y": exponent}
    check_against_onnxruntime(InferenceSession, one_node_model("Pow", feeds, {}, opset=15), feeds)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_base_float_exponent(dtype: Any) -> None:
    feeds = {"x": np.array([[2, 3, 7], [9, -4, 5]], dtype), "y": np.array([0.5, 2.0, -1.0], np.float32)}
    check_against_onnxruntime(InferenceSession, one_node_model("Pow", feeds, {}, opset=15), feeds)


@pytest.mark.parametrize(
    ("exponent", "multiplies"),
    [(np.array(2.0, np.float32), 1), (np.array([3.0], np.float32), 2), (np.array(3, np.int64), 2)],
)
def test_a_constant_square_or_cube_multiplies(exponent: np.ndarray, multiplies: int) -> None:
    """A float base to a constant 2 or 3 is `x * x` (`x * x * x`), as ONNX Runtime computes it: no `powf` call."""
    feeds = {"x": RNG.uniform(-3.0, 3.0, size=(2, 64)).astype(np.float32)}
    model = one_node_model("Pow", feeds, {}, constants={"y": exponent}, opset=15)
    check_against_onnxruntime(InferenceSession, model, feeds)
    ir = str(import_model(model).module)
    assert ir.count("graph.mul ") == multiplies
    assert "graph.pow" not in ir


def test_other_constant_exponents_and_broadcasting_ones_stay_powers() -> None:
    """4 is not multiplied out, nor a 3 of shape [1, 1] that broadcasts a [4] base to [1, 4]."""
    feeds = {"x": RNG.uniform(0.5, 3.0, size=(4,)).astype(np.float32)}
    for exponent in (np.array(4.0, np.float32), np.array([[3.0]], np.float32)):
        model = one_node_model("Pow", feeds, {}, constants={"y": exponent}, opset=15)
        check_against_onnxruntime(InferenceSession, model, feeds)
        assert "graph.pow" in str(import_model(model).module)
