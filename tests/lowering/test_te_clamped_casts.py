"""`te-clamped-casts`: QuantizeLinear to uint8 and int8, compiled at O3 (where the pass drops the range guard of the
clamped conversion), equals numpy's `saturate(round(x / s) + z)` bit for bit on NaN, infinities, huge values,
signed zeros and rounding ties (NaN gives 0, as the guarded conversion's INT_MIN truncated), and ONNX Runtime on
the finite ones."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import run_pipeline

SCALE = 0.05


def _quantize_model(zero: int, element: int) -> onnx.ModelProto:
    dtype = np.uint8 if element == TensorProto.UINT8 else np.int8
    initializers = [
        numpy_helper.from_array(np.array(SCALE, np.float32), "scale"),
        numpy_helper.from_array(np.array(zero, dtype), "zero"),
    ]
    node = helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"])
    graph = helper.make_graph(
        [node],
        "quantize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (64,))],
        [helper.make_tensor_value_info("q", element, (64,))],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _inputs() -> np.ndarray:
    special = [np.nan, -np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 0.0, -0.0]
    ties = [k * SCALE / 2 for k in range(-9, 10, 2)]  # half steps: rounding ties to even
    edges = [255.5 * SCALE, 254.5 * SCALE, -128.5 * SCALE, 127.5 * SCALE, -0.49 * SCALE]
    values = np.array(special + ties + edges, np.float32)
    rest = np.random.default_rng(4).normal(0.0, 8.0, 64 - len(values)).astype(np.float32)
    return np.concatenate([values, rest])


def _expected(x: np.ndarray, zero: int, dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        q = np.clip(np.rint(x / np.float32(SCALE)) + np.float32(zero), info.min, info.max)
    return np.where(np.isnan(q), 0, q).astype(dtype)


@pytest.mark.parametrize(("zero", "element"), [(0, TensorProto.UINT8), (7, TensorProto.UINT8), (-3, TensorProto.INT8)])
def test_quantize_linear_exact_on_special_values(zero: int, element: int) -> None:
    model = _quantize_model(zero, element)
    dtype = np.uint8 if element == TensorProto.UINT8 else np.int8
    x = _inputs()
    actual = InferenceSession(model, cache=False).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, _expected(x, zero, dtype))
    finite = np.where(np.isfinite(x), x, 0.0).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(
        InferenceSession(model, cache=False).run(None, {"x": finite})[0], session.run(None, {"x": finite})[0]
    )


def test_pipeline_drops_the_guard() -> None:
    """At O3 the quantized cast has no NaN-propagating clamp and no range test left (uint8, zero point 0)."""
    imported = import_model(_quantize_model(0, TensorProto.UINT8))
    run_pipeline(imported.module, 3, stop_after="te")
    text = str(imported.module)
    assert "arith.fptosi" in text
    assert "arith.maximumf" not in text
    assert "arith.minimumf" not in text
    assert "-2.14748365e+09" not in text
