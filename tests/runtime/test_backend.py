"""The ONNX backend API (`minimlc.backend.onnx_backend`): prepare/run, lazy compilation per shape and per integer input
value, constant outputs, inputs, errors."""

from __future__ import annotations

import unittest
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import minimlc.backend.onnx_backend as backend
from minimlc.backend.onnx_backend import Signature
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError, UnsupportedOpsError
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
    assert list(rep.sessions) == [Signature(((2, 3), (2, 3)))]
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(rep.run([a, b])[0], a - b)
    np.testing.assert_array_equal(rep.run({"b": b, "a": a})[0], a - b)
    (y,) = backend.run_model(one_node_model("Relu", {"x": [2, 3]}, [2, 3]), a - 2)
    np.testing.assert_array_equal(y, np.maximum(a - 2, 0))


def test_outputs_are_a_named_tuple() -> None:
    outputs = backend.run_model(one_node_model("Relu", {"x": [3]}, [3]), [np.array([-1, 0, 2], np.float32)])
    np.testing.assert_array_equal(outputs["y"], [0, 0, 2])
    assert outputs.y is outputs[0]  # pyright: ignore[reportAttributeAccessIssue]


def test_symbolic_dimensions_compile_once_for_every_shape() -> None:
    rep = backend.prepare(one_node_model("Relu", {"x": ["N", 3]}, ["N", 3]))
    assert rep.sessions == {}
    assert rep.every_shape_session is not None
    for batch in (2, 5, 2, 0):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
        np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))
    assert rep.every_shape_session.stats["compiles"] == 1
    assert "symbolic_fallback" not in rep.every_shape_session.stats
    assert rep.sessions == {}
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
    ("element_type", "name"),
    [(TensorProto.STRING, "STRING"), (TensorProto.COMPLEX64, "COMPLEX64")],
)
def test_inputs_of_types_without_native_code_are_not_implemented(element_type: int, name: str) -> None:
    model = one_node_model("Identity", {"x": [3]}, [3], element_type)
    assert not backend.is_compatible(model)
    with pytest.raises(
        NotImplementedError,
        match=rf"^graph input 'x' has element type {name}; minimlc supports float32, float64, .*, float8_e8m0fnu inputs$",
    ):
        backend.prepare(model)


def test_string_sequence_outputs_are_not_implemented() -> None:
    model = one_node_model("Relu", {"x": [3]}, [3])
    sequence = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.STRING, [3]))
    model.graph.output[0].CopyFrom(helper.make_value_info("y", sequence))
    assert not backend.is_compatible(model)
    with pytest.raises(NotImplementedError, match=r"^graph output 'y' holds strings; minimlc supports numbers only"):
        backend.prepare(model)


def test_a_sequence_output_computed_as_a_tensor_is_refused() -> None:
    model = one_node_model("Relu", {"x": [3]}, [3])
    sequence = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [3]))
    model.graph.output[0].CopyFrom(helper.make_value_info("y", sequence))
    assert backend.is_compatible(model)
    with pytest.raises(NotImplementedError, match=r"^output 'y' is not a tensor and is computed at run time"):
        backend.prepare(model)


def reshape_model(shape_type: int = TensorProto.INT64) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        "reshape",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("shape", shape_type, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_integer_inputs_are_bound_and_compiled_once_per_value() -> None:
    rep = backend.prepare(reshape_model())
    assert backend.is_compatible(reshape_model())
    assert rep.sessions == {}, "integer inputs are known only when the model runs"
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(rep.run([x, np.array([3, 2])])[0], x.reshape(3, 2))
    first = rep.sessions[Signature(((2, 3), (2,)), ((3, 2),))]
    np.testing.assert_array_equal(rep.run({"x": x + 1, "shape": [3, -1]})[0], (x + 1).reshape(3, 2))
    np.testing.assert_array_equal(rep.run([x, np.array([3, 2])])[0], x.reshape(3, 2))
    assert rep.sessions[Signature(((2, 3), (2,)), ((3, 2),))] is first, "the same value reuses its session"
    assert sorted(rep.sessions) == [
        Signature(((2, 3), (2,)), ((3, -1),)),
        Signature(((2, 3), (2,)), ((3, 2),)),
    ]
    assert [info.name for info in first.get_inputs()] == ["x"], "a bound input is not fed to native code"
    assert first.get_outputs()[0].shape == (3, 2)


def test_int32_inputs_are_bound_too() -> None:
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["data", "axes"], ["y"])],
        "unsqueeze",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("axes", TensorProto.INT32, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3])],
    )
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert rep.bound_inputs == ["axes"]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    for axis in (0, -3):
        (y,) = rep.run([data, np.array([axis], np.int32)])
        np.testing.assert_array_equal(y, np.expand_dims(data, axis))
    assert len(rep.sessions) == 2


FLOAT = TensorProto.FLOAT


def data_model(nodes: list[onnx.NodeProto], inputs: dict[str, int]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "reads_data",
        [helper.make_tensor_value_info(name, element, [2]) for name, element in inputs.items()],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def shape_also_read_as_data() -> onnx.ModelProto:
    graph = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "s"], ["r"]),
            helper.make_node("Cast", ["s"], ["f"], to=TensorProto.FLOAT, name="cast"),
            helper.make_node("Add", ["r", "f"], ["y"]),
        ],
        "shape_and_data",
        [helper.make_tensor_value_info("x", FLOAT, [2]), helper.make_tensor_value_info("s", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("model", "feeds"),
    [
        (
            data_model([helper.make_node("Gather", ["x", "i"], ["y"])], {"x": FLOAT, "i": TensorProto.INT64}),
            [
                [np.array([1.5, -2.0], np.float32), np.array([1, 0])],
                [np.array([3.0, 4.0], np.float32), np.array([1, 1])],
            ],
        ),
        (
            data_model(
                [helper.make_node("Where", ["c", "x", "z"], ["y"])], {"c": TensorProto.BOOL, "x": FLOAT, "z": FLOAT}
            ),
            [
                [np.array([True, False]), np.array([1.0, 2.0], np.float32), np.array([5.0, 6.0], np.float32)],
                [np.array([False, True]), np.array([1.0, 2.0], np.float32), np.array([5.0, 6.0], np.float32)],
            ],
        ),
        (
            shape_also_read_as_data(),
            [[np.array([1.0, 2.0], np.float32), np.array([2])]],
        ),
    ],
    ids=["gather_indices", "where_condition", "a_shape_also_read_as_data"],
)
def test_integer_and_bool_inputs_read_as_data_run_natively(
    model: onnx.ModelProto, feeds: list[list[np.ndarray]]
) -> None:
    """They are run-time inputs of one compiled session (bound, too, where they set a shape): nothing computed from
    them is folded at import time."""
    assert backend.is_compatible(model)
    rep = backend.prepare(model)
    for arrays in feeds:
        (actual,) = rep.run(arrays)
        (expected,) = ReferenceEvaluator(model).run(None, dict(zip([vi.name for vi in model.graph.input], arrays)))
        np.testing.assert_allclose(actual, expected)
    (session,) = rep.sessions.values()
    assert session.stats["kernels"] > 0


def test_bound_inputs_are_checked() -> None:
    rep = backend.prepare(reshape_model())
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(InvalidInputError, match=r"^input 'shape': expected dtype int64, got int32; convert it with"):
        rep.run([x, np.array([3, 2], np.int32)])
    with pytest.raises(InvalidInputError, match=r"^input 'shape': expected shape \(2,\), got \(3,\)$"):
        rep.run([x, np.array([3, 2, 1])])
    with pytest.raises(
        ModelImportError, match=r"\(Reshape\): cannot reshape an input of shape \(2, 3\) \(6 elements\) to"
    ):
        rep.run([x, np.array([4, 2])])
    assert rep.sessions == {}


def test_constant_outputs_keep_their_dtype_and_need_no_native_code() -> None:
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("ConstantOfShape", ["shape"], ["zeros"])],
        "shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
            helper.make_tensor_value_info("zeros", TensorProto.FLOAT, [2, 3]),
        ],
    )
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    (session,) = rep.sessions.values()
    assert [(info.name, info.shape, info.type) for info in session.get_outputs()] == [
        ("shape", (2,), "tensor(int64)"),
        ("zeros", (2, 3), "tensor(float)"),
    ]
    assert session.llvm_ir == ""
    shape, zeros = rep.run([np.ones((2, 3), np.float32)])
    assert shape.dtype == np.int64
    np.testing.assert_array_equal(shape, [2, 3])
    np.testing.assert_array_equal(zeros, np.zeros((2, 3), np.float32))
    shape[0] = 7  # outputs are fresh arrays
    np.testing.assert_array_equal(rep.run([np.ones((2, 3), np.float32)])[0], [2, 3])
    with pytest.raises(InvalidInputError, match=r"input 'x': expected shape"):
        session.run(None, {"x": np.ones((3, 2), np.float32)})


def test_constant_and_computed_outputs_interleave() -> None:
    (y, mask) = backend.run_node(
        helper.make_node("Dropout", ["x"], ["y", "mask"]), [np.array([-1.0, 2.0], np.float32)], opset_version=13
    )
    np.testing.assert_array_equal(y, [-1.0, 2.0])
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, [True, True])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Relu", ["x"], ["r"])],
        "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [
            helper.make_tensor_value_info(name, element, [dim])
            for name, element, dim in (
                ("r", TensorProto.FLOAT, 3),
                ("s", TensorProto.INT64, 1),
                ("r", TensorProto.FLOAT, 3),
            )
        ],
    )
    r, s, r_again = backend.run_model(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), [np.array([-1, 0, 2], np.float32)]
    )
    np.testing.assert_array_equal(r, [0, 0, 2])
    np.testing.assert_array_equal(s, [3])
    np.testing.assert_array_equal(r_again, [0, 0, 2])


def test_computed_outputs_must_have_their_declared_element_type() -> None:
    model = one_node_model("Relu", {"x": [3]}, [3])
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    with pytest.raises(ModelImportError, match=r"^output 'y' is declared INT64, but it is computed as float32$"):
        backend.prepare(model)


def test_int64_indices_computed_at_run_time() -> None:
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y", "indices"], kernel_shape=[2])],
        "argmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 1, 3]),
        ],
    )
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    (session,) = rep.sessions.values()
    assert [info.type for info in session.get_outputs()] == ["tensor(float)", "tensor(int64)"]
    y, indices = rep.run([np.array([[[3.0, 1.0, 1.0, 5.0]]], np.float32)])
    np.testing.assert_array_equal(y, [[[3.0, 1.0, 5.0]]])
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, [[[0, 1, 3]]])  # the first of equal maxima


def test_constant_outputs_must_match_their_declared_type() -> None:
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"])],
        "shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(ModelImportError, match=r"^output 's' is declared FLOAT, but its constant value is int64$"):
        backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


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
    with pytest.raises(NotImplementedError, match="run-time uint8 tensor; Relu computes on float32 only"):
        backend.run_node(helper.make_node("Relu", ["x"], ["y"]), [np.array([1, 2], np.uint8)])


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


def training_dropout_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=0)],
        "training_dropout",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("t", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_bool_inputs_and_float32_constant_operands_are_bound() -> None:
    rep = backend.prepare(training_dropout_model())
    assert rep.sessions == {}, "ratio and training_mode are known only when the model runs"
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    for training in (True, False):
        y, mask = rep.run([x, np.float32(0.0), np.bool_(training)])
        np.testing.assert_array_equal(y, x)
        assert mask.dtype == np.bool_
        np.testing.assert_array_equal(mask, np.ones((2, 3), np.bool_))
    assert sorted(rep.sessions) == [
        Signature(((2, 3), (), ()), ((0.0,), (False,))),
        Signature(((2, 3), (), ()), ((0.0,), (True,))),
    ]
    session = rep.sessions[Signature(((2, 3), (), ()), ((0.0,), (True,)))]
    assert [info.name for info in session.get_inputs()] == ["x"]
    with pytest.raises(InvalidInputError, match=r"^input 'r': expected dtype float32, got float64"):
        rep.run([x, np.array(0.0), np.bool_(True)])


def test_training_dropout_with_a_positive_ratio_is_not_implemented() -> None:
    rep = backend.prepare(training_dropout_model())
    x = np.ones((2, 3), np.float32)
    with pytest.raises(
        UnsupportedFeatureError,
        match=r"\(Dropout\): training mode with ratio 0\.5 is not supported: it drops elements at random "
        r"\(only ratio 0, the identity, is\)$",
    ):
        rep.run([x, np.float32(0.5), np.bool_(True)])
    (y, mask) = rep.run([x, np.float32(0.5), np.bool_(False)])  # inference: the ratio does not matter
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(mask, np.ones((2, 3), np.bool_))


def test_inputs_a_shape_operand_is_computed_from_are_bound() -> None:
    """Reshape's shape computed from the graph input `n` (also read as data: y = x * n) through Concat and Add: `n`
    is bound for the shape (its chain duplicated onto its bound copy) and fed for the product, as a function body
    (CenterCropPad's, a window's) computes its pads or Range limit from an input."""
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["n", "one"], ["rows"]),
            helper.make_node("Concat", ["rows", "minus_one"], ["shape"], axis=0),
            helper.make_node("Reshape", ["x", "shape"], ["r"]),
            helper.make_node("Cast", ["n"], ["n_float"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["r", "n_float"], ["y"]),
        ],
        "computed_shape",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("n", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "columns"])],
        [
            onnx.numpy_helper.from_array(np.array([1], np.int64), "one"),
            onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
        ],
    )
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert rep.bound_inputs == ["n"] and rep.fed_inputs == ["x", "n"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for n in (2, 3):
        (y,) = rep.run([x, np.array([n], np.int64)])
        np.testing.assert_array_equal(y, x.reshape(n + 1, -1) * n)
    assert all(session.stats["kernels"] > 0 for session in rep.sessions.values())
