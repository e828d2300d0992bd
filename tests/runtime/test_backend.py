"""The ONNX backend API (`minimlc.runtime.backend`): prepare/run, lazy compilation per shape, inputs, errors."""

from __future__ import annotations

import unittest
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import minimlc.runtime.backend as backend
from minimlc.frontend.onnx import UnsupportedOpsError
from minimlc.runtime import InvalidInputError


def one_node_model(
    op_type: str,
    input_shapes: dict[str, list[int | str]],
    output_shape: list[int | str] | None,
    element_type: int = TensorProto.FLOAT,
    **attributes: object,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op_type, list(input_shapes), ["y"], **attributes)],
        op_type.lower(),
        [helper.make_tensor_value_info(name, element_type, shape) for name, shape in input_shapes.items()],
        [helper.make_tensor_value_info("y", element_type, output_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_static_model_compiles_at_prepare_and_runs_from_a_list_dict_or_array() -> None:
    rep = backend.prepare(one_node_model("Sub", {"a": [2, 3], "b": [2, 3]}, [2, 3]))
    assert list(rep.sessions) == [((2, 3), (2, 3))]
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(rep.run([a, b])[0], a - b)
    np.testing.assert_array_equal(rep.run({"b": b, "a": a})[0], a - b)
    (y,) = backend.run_model(one_node_model("Relu", {"x": [2, 3]}, [2, 3]), a - 2)
    np.testing.assert_array_equal(y, np.maximum(a - 2, 0))


def test_outputs_are_a_named_tuple() -> None:
    outputs = backend.run_model(one_node_model("Relu", {"x": [3]}, [3]), [np.array([-1, 0, 2], np.float32)])
    np.testing.assert_array_equal(outputs["y"], [0, 0, 2])
    assert outputs.y is outputs[0]  # pyright: ignore[reportAttributeAccessIssue]


def test_symbolic_dimensions_compile_once_per_input_shape() -> None:
    rep = backend.prepare(one_node_model("Relu", {"x": ["N", 3]}, ["N", 3]))
    assert rep.sessions == {}
    for batch in (2, 5, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
        np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))
    assert sorted(rep.sessions) == [((2, 3),), ((5, 3),)]
    with pytest.raises(InvalidInputError, match=r"input 'x': expected shape \('\?', 3\), got \(2, 4\)"):
        rep.run([np.zeros((2, 4), np.float32)])


@pytest.mark.parametrize("value", [np.float32(-2.5), np.array(-2.5, np.float32), -2.5, np.float64(-2.5)])
def test_scalars_and_zero_d_inputs(value: object) -> None:
    (y,) = backend.run_model(one_node_model("Neg", {"x": []}, []), [value])
    assert y.shape == ()
    assert y.dtype == np.float32
    assert y == 2.5


def test_an_array_of_another_dtype_is_rejected() -> None:
    rep = backend.prepare(one_node_model("Relu", {"x": [3]}, [3]))
    with pytest.raises(InvalidInputError, match=r"expected dtype float32 .*got float64"):
        rep.run([np.zeros(3)])


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], r"takes 1 input\(s\) \['x'\], got 0"),
        ([np.zeros(3, np.float32)] * 2, r"takes 1 input\(s\) \['x'\], got 2"),
        ({"z": np.zeros(3, np.float32)}, r"unknown: \['z'\], missing: \['x'\]"),
        ([np.zeros(4, np.float32)], r"input 'x': expected shape \(3,\), got \(4,\)"),
        ([np.zeros((1, 3), np.float32)], r"input 'x': expected shape \(3,\), got \(1, 3\)"),
    ],
)
def test_bad_inputs(inputs: object, message: str) -> None:
    rep = backend.prepare(one_node_model("Relu", {"x": [3]}, [3]))
    with pytest.raises(InvalidInputError, match=message):
        rep.run(inputs)


@pytest.mark.parametrize(
    ("element_type", "name"), [(TensorProto.DOUBLE, "DOUBLE"), (TensorProto.INT64, "INT64"), (TensorProto.BOOL, "BOOL")]
)
def test_non_float32_models_are_not_implemented(element_type: int, name: str) -> None:
    model = one_node_model("Identity", {"x": [3]}, [3], element_type)
    assert not backend.is_compatible(model)
    with pytest.raises(NotImplementedError, match=rf"graph input 'x' has element type {name}; .*float32"):
        backend.prepare(model)


def test_unsupported_ops_are_not_implemented() -> None:
    with pytest.raises(NotImplementedError, match=r"unsupported operator type: .*NotAnOnnxOp") as info:
        backend.prepare(
            helper.make_model(
                helper.make_graph(
                    [helper.make_node("NotAnOnnxOp", ["x"], ["y"], domain="com.example")],
                    "g",
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
                ),
                opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
            )
        )
    assert isinstance(info.value, UnsupportedOpsError)


def test_devices() -> None:
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    assert not backend.supports_device("TPU")
    with pytest.raises(NotImplementedError, match="CPU only, not on 'CUDA'"):
        backend.prepare(one_node_model("Relu", {"x": [3]}, [3]), "CUDA")


def test_run_node() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    (y,) = backend.run_node(helper.make_node("Gemm", ["a", "b"], ["y"], transB=1), [a, b])
    np.testing.assert_allclose(y, a @ b.T, rtol=1e-5, atol=1e-6)
    (y,) = backend.run_node(helper.make_node("Softmax", ["x"], ["y"], axis=0), [a], opset_version=11)
    np.testing.assert_allclose(
        y, np.exp(a) / np.exp(a).sum(), rtol=1e-5, atol=1e-6
    )  # opset < 13: over all axes from 0 on
    with pytest.raises(NotImplementedError, match="INT64"):
        backend.run_node(helper.make_node("Relu", ["x"], ["y"]), [np.array([1, -1])])


def test_onnx_backend_test_runner_drives_the_backend() -> None:
    """onnx's own `BackendTest` runs its Relu node test (CPU passes, CUDA is skipped) through the module."""
    from onnx.backend.test import BackendTest

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # onnx builds some expected outputs from overflowing data
        runner = BackendTest(backend, __name__).include(r"^test_relu_(cpu|cuda)$")
    result = unittest.TestResult()
    runner.test_suite.run(result)
    assert result.errors == []
    assert result.failures == []
    assert result.testsRun - len(result.skipped) == 1
    assert any("test_relu_cuda" in str(test) for test, _ in result.skipped)
