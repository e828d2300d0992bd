"""Numerics of the ops that select, scatter and generate elements at run-time positions against ONNX Runtime at every
opt level: Trilu of every element type, ScatterElements, ScatterND, GatherND, OneHot, TopK, Hardmax, CumProd, EyeLike
and the window functions. Every data input is a graph input, so native code computes each case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_cases import check_against_onnxruntime, one_node_model

from minimlc.runtime import InferenceSession

RNG = np.random.default_rng(5)


def _data(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize(("k", "upper"), [(0, 1), (-1, 0), (2, 1)])
def test_trilu(dtype: Any, k: int, upper: int) -> None:
    feeds = {"x": _data((2, 3, 5), dtype)}
    model = one_node_model("Trilu", feeds, {"upper": upper}, constants={"k": np.array(k, np.int64)})
    check_against_onnxruntime(InferenceSession, model, feeds)
