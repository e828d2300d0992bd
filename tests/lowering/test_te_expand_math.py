"""te-expand-math: exp, erf and tanh of f32, compiled at O3 (vectorized), against numpy and Python's `math.erf` in
double precision over millions of points and the edge cases: at most 2 ulp (measured: 1.3) where the result is
finite, the same infinities, zeros and NaNs. O0 (libm) must agree with it to the same bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession

MAX_ULP = 2.0
EDGES = np.array(
    [
        np.nan,
        -np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1e-45,
        -1e-45,
        1e-38,
        1e-30,
        -1e-7,
        0.5,
        -0.5,
        0.34657359,
        1.0,
        -1.0,
        0.99999994,
        1.0000001,
        3.92,
        4.0,
        10.0,
        88.72283,
        88.722839,
        88.7229,
        89.0,
        100.0,
        -87.33654,
        -87.5,
        -103.27893,
        -103.9,
        -104.0,
        -110.0,
        3.4028235e38,
        -3.4028235e38,
        0.625,
        0.62499994,
        -0.625,
        8.9,
        9.0,
        9.1,
    ],
    dtype=np.float32,
)
REFERENCES = {"Exp": np.exp, "Erf": np.vectorize(math.erf, otypes=[np.float64]), "Tanh": np.tanh}
RANGES = {"Exp": (-105.0, 90.0), "Erf": (-5.0, 5.0), "Tanh": (-10.0, 10.0)}


def _points(op: str) -> np.ndarray:
    """Random points over the interesting range, near zero and tiny, then the edge cases: a multiple of 64 in all, so
    that the vectorized loop computes them (an odd-length vector is not split into vectors)."""
    rng = np.random.default_rng(0)
    lower, upper = RANGES[op]
    parts = [
        rng.uniform(lower, upper, 1_500_000),
        rng.uniform(-1.0, 1.0, 400_000 - EDGES.size),
        np.exp(rng.uniform(-100, 0, 100_000)) * rng.choice([-1, 1], 100_000),  # tiny magnitudes
    ]
    return np.concatenate([*parts, EDGES]).astype(np.float32)


def _session(op: str, size: int, opt_level: int) -> InferenceSession:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])],
        op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])],
    )
    return InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), opt_level=opt_level)


def ulp_errors(actual: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|actual - exact| in units of the last place of exact rounded to f32 (0 where both are the same inf or NaN)."""
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = exact.astype(np.float32)
        errors = np.abs(actual.astype(np.float64) - exact) / np.spacing(np.abs(rounded)).astype(np.float64)
    same = (actual == rounded) | (np.isnan(actual) & np.isnan(rounded))
    return np.where(same, 0.0, errors)


@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_expansion_is_within_two_ulp(op: str) -> None:
    x = _points(op)
    (actual,) = _session(op, x.size, 3).run(None, {"x": x})
    with np.errstate(over="ignore"):
        exact = REFERENCES[op](x.astype(np.float64))
    errors = ulp_errors(actual, exact)
    worst = int(np.argmax(errors))
    assert errors[worst] <= MAX_ULP, f"{op}({x[worst]!r}) = {actual[worst]!r}, exactly {exact[worst]!r}"
    edges = slice(x.size - EDGES.size, None)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.isinf(actual[edges]), np.isinf(exact[edges].astype(np.float32)))
    np.testing.assert_array_equal(np.isnan(actual[edges]), np.isnan(exact[edges]))


@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_unexpanded_libm_agrees(op: str) -> None:
    x = _points(op)[::64]
    (expanded,) = _session(op, x.size, 3).run(None, {"x": x})
    (libm,) = _session(op, x.size, 0).run(None, {"x": x})
    assert np.max(ulp_errors(expanded, libm.astype(np.float64))) <= MAX_ULP + 1


def _lrn(size: int, beta: float, bias: float, alpha: float = 1.0) -> InferenceSession:
    """LRN over one channel (`size` 1): y = x / (bias + alpha x^2)^beta, its power to a constant beta."""
    shape = [1, 1, size]
    node = helper.make_node("LRN", ["x"], ["y"], size=1, alpha=alpha, beta=beta, bias=bias)
    graph = helper.make_graph(
        [node],
        "lrn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    return InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), opt_level=3)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75])
def test_quarter_powers_are_square_roots_within_three_ulp(beta: float) -> None:
    """LRN's power to 0.25, 0.5 or 0.75 by square roots: y = x / (x^2)^beta within 3 ulp of float64 (measured: 2.9
    at 0.75, where libm's powf gives 1.5; the division's half ulp included), over magnitudes from 1e-17 to 1e17."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-100, 100, 32_768), np.exp(rng.uniform(-40, 40, 32_768))]).astype(np.float32)
    (y,) = _lrn(x.size, beta, 0.0).run(None, {"x": x.reshape(1, 1, -1)})
    square = (x * x).astype(np.float64)  # the kernel squares in float32
    exact = x.astype(np.float64) / np.power(square, beta)
    assert ulp_errors(y.ravel(), exact).max() <= 3.0


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75])
def test_quarter_powers_keep_pows_special_values(beta: float) -> None:
    """A base of -inf gives pow's +inf (y = x / inf = 0 for finite x), a negative base NaN, and NaN stays NaN."""
    x = np.array([1.0, -2.0, 0.5, np.nan] * 16, dtype=np.float32).reshape(1, 1, -1)
    (minus_infinity,) = _lrn(x.size, beta, -np.inf).run(None, {"x": x})
    np.testing.assert_array_equal(np.isnan(minus_infinity), np.isnan(x))
    assert np.all(minus_infinity[~np.isnan(x)] == 0.0)
    (negative,) = _lrn(x.size, beta, -10.0).run(None, {"x": x})  # -10 + x^2 < 0
    assert np.all(np.isnan(negative))
