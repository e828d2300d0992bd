"""Ops on element types and forms that were refused before: Pad (every mode) of integers, bools and float64, Pow of
an integer base to float exponents, MaxPool of 8- and 16-bit integers, ReduceMax/ReduceMin of bools, reductions
over an empty axis of float64 and integers, exp/log/sqrt/tanh of float64, Compress and Unique of bfloat16. Against
ONNX Runtime where it has the kernel (onnx's reference evaluator where not), at O0 and O3 (conftest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError

RNG = np.random.default_rng(11)


def _model(op_type: str, feeds: Mapping[str, np.ndarray], constants: Mapping[str, np.ndarray], opset: int = 18,
           outputs: int = 1, **attributes: Any) -> onnx.ModelProto:  # fmt: skip
    inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in feeds.items()
    ]
    names = [f"Y{i}" for i in range(outputs)]
    node = helper.make_node(op_type, [*feeds, *constants], names, **attributes)
    initializers = [onnx.numpy_helper.from_array(array, name) for name, array in constants.items()]
    graph = helper.make_graph([node], "typed", inputs, [helper.make_tensor_value_info(n, 0, None) for n in names])
    graph.initializer.extend(initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def _check(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], oracle: str = "ort") -> None:
    if oracle == "ort":
        expected = ort.InferenceSession(model.SerializeToString()).run(None, dict(feeds))
    else:
        expected = ReferenceEvaluator(model).run(None, dict(feeds))
    session = InferenceSession(model, cache=False)
    actual = session.run(None, dict(feeds))
    assert session.stats["kernels"] > 0
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-12 if want.dtype == np.float64 else 1e-6, atol=1e-12)
        else:
            np.testing.assert_array_equal(got, want)


PAD_DATA = {
    "int32": RNG.integers(-50, 50, (3, 4)).astype(np.int32),
    "int64": RNG.integers(-50, 50, (3, 4)).astype(np.int64),
    "uint8": RNG.integers(0, 255, (3, 4)).astype(np.uint8),
    "float64": RNG.standard_normal((3, 4)),
}


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("dtype", sorted(PAD_DATA))
def test_pad_of_other_element_types(dtype: str, mode: str) -> None:
    x = PAD_DATA[dtype]
    constants = {"pads": np.array([1, 2, 2, 1], np.int64)}
    if mode == "constant":
        constants["value"] = np.array(7, x.dtype)
    _check(_model("Pad", {"x": x}, constants, mode=mode), {"x": x})


def test_pad_of_bools_and_negative_pads() -> None:
    x = RNG.integers(0, 2, (3, 4)).astype(np.bool_)
    _check(_model("Pad", {"x": x}, {"pads": np.array([1, 0, 0, 2], np.int64)}, mode="edge"), {"x": x}, "reference")
    _check(_model("Pad", {"x": x}, {"pads": np.array([0, 1, 1, 0], np.int64)}), {"x": x}, oracle="reference")
    ints = PAD_DATA["int64"]
    _check(_model("Pad", {"x": ints}, {"pads": np.array([1, -1, 0, 2], np.int64)}, mode="reflect"), {"x": ints})


def test_pad_with_run_time_pads_is_refused() -> None:
    x = np.zeros((2, 3), np.float32)
    model = _model("Pad", {"x": x, "pads": np.array([0, 1, 0, 1], np.int64)}, {})
    with pytest.raises(UnsupportedFeatureError, match="input pads must be a compile-time constant: it sets the"):
        InferenceSession(model, cache=False)


@pytest.mark.parametrize(("base", "exponent"), [(np.int32, np.float32), (np.int64, np.float32), (np.int64, np.float64)])
def test_pow_of_integer_base_to_float_exponents(base: type, exponent: type) -> None:
    x = np.array([[3, -5, 4, -6, 7], [1, 2, 9, 5, -2]], base)
    y = np.array([0.0, 1.0, 2.5, 3.0, -1.0], exponent)  # no NaN or infinity: ORT's cast of those is the CPU's

    _check(_model("Pow", {"x": x, "y": y}, {}), {"x": x, "y": y})


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_max_pool_of_small_integers(dtype: type) -> None:
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (1, 2, 5, 5), endpoint=True).astype(dtype)
    attributes = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    _check(_model("MaxPool", {"x": x}, {}, opset=12, **attributes), {"x": x})


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("shape", [(3, 4), (3, 0)], ids=["values", "empty"])
def test_reduce_max_min_of_bools(op: str, shape: tuple[int, ...]) -> None:
    x = RNG.integers(0, 2, shape).astype(np.bool_)
    model = _model(op, {"x": x}, {"axes": np.array([1], np.int64)}, opset=20, keepdims=0)
    _check(model, {"x": x}, oracle="reference")


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_reductions_over_an_empty_axis(op: str, dtype: type) -> None:
    x = np.zeros((3, 0), dtype)
    _check(_model(op, {"x": x}, {"axes": np.array([1], np.int64)}, keepdims=1), {"x": x}, oracle="reference")


@pytest.mark.parametrize("op", ["Exp", "Log", "Sqrt", "Tanh"])
def test_math_of_float64(op: str) -> None:
    x = RNG.uniform(0.1, 4.0, (4, 7))
    _check(_model(op, {"x": x}, {}), {"x": x})


def test_compress_and_unique_of_bfloat16() -> None:
    x = RNG.standard_normal((3, 4)).astype(ml_dtypes.bfloat16)
    x[1] = x[0]
    condition = np.array([True, False, True])
    _check(_model("Compress", {"x": x, "condition": condition}, {}, axis=0), {"x": x, "condition": condition}, "ref")
    _check(_model("Unique", {"x": x}, {}, outputs=4, sorted=1), {"x": x}, oracle="reference")


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_of_float64(axis: int) -> None:
    x = RNG.standard_normal((5, 33)) * 4
    _check(_model("Softmax", {"x": x}, {}, axis=axis), {"x": x})


def test_softmax_of_integers_is_refused() -> None:
    x = np.zeros((2, 3), np.int64)
    with pytest.raises(UnsupportedFeatureError, match="Softmax of i64 is not supported, only of floats"):
        InferenceSession(_model("Softmax", {"x": x}, {}), cache=False)
