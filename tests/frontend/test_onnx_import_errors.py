"""The ONNX importer's errors: unsupported ops (all of them, by name and opset), unreadable files, malformed
nodes and attributes, bad input shapes and reshape targets; each a precise message, never a crash."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_import_models import onnx_model, unary_model, value_info

from minimlc.frontend.onnx import (
    ModelImportError,
    UnsupportedFeatureError,
    UnsupportedOpsError,
    import_model,
)


def test_unsupported_ops_are_all_reported_before_converting() -> None:
    nodes = [
        helper.make_node("GlobalLpPool", ["x"], ["c1"], name="pool1", p=3),
        helper.make_node("Add", ["c1", "bad"], ["a"], name="add_with_bad_shapes"),
        helper.make_node("GlobalLpPool", ["a"], ["c2"], name="pool2", p=3),
        helper.make_node("MaxRoiPool", ["seq", "seq"], ["h"], name="roi_pool_0", pooled_shape=[1, 1]),
        helper.make_node("GlobalLpPool", ["c2"], ["c3"], p=3),
        helper.make_node("Frobnicate", ["c3"], ["y"], name="frob", domain="com.example"),
    ]
    inputs = [value_info("x", [1, 1, 9, 9]), value_info("bad", [5]), value_info("seq", [1, 1, 2])]
    outputs = [value_info("y", [1, 1, 3, 3]), value_info("h", [1, 1, 2])]
    model = onnx_model(nodes, inputs, outputs, {}, extra_opsets=[("com.example", 2)])
    message = (
        "model has 3 unsupported operator types: GlobalLpPool (opset 13): pool1, pool2, <unnamed node #4>; "
        "MaxRoiPool (opset 13): roi_pool_0; com.example.Frobnicate (opset 2): frob"
    )
    with pytest.raises(UnsupportedOpsError, match=re.escape(message)) as caught:
        import_model(model)
    assert caught.value.ops == [
        ("GlobalLpPool", 13, ["pool1", "pool2", "<unnamed node #4>"]),
        ("MaxRoiPool", 13, ["roi_pool_0"]),
        ("com.example.Frobnicate", 2, ["frob"]),
    ]
    assert isinstance(caught.value, ModelImportError | NotImplementedError | ValueError)


def test_one_unsupported_op_message() -> None:
    with pytest.raises(
        UnsupportedOpsError, match=r"^model has 1 unsupported operator type: GlobalLpPool \(opset 13\): n$"
    ):
        import_model(unary_model("GlobalLpPool", [1, 1, 2, 2]))


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.onnx"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        import_model(missing)


def test_unparsable_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\xff\xff\xff\xff not a model")
    with pytest.raises(ModelImportError, match=f"cannot parse an ONNX model from '{re.escape(str(path))}'"):
        import_model(path)


def _with_node(op_type: str, inputs: list[str], name: str = "n", **attributes: object) -> Callable[[], onnx.ModelProto]:
    """One node over inputs x (2, 3) and y (4,), and initializers i64 (int64) and f64 (float64)."""

    def build() -> onnx.ModelProto:
        node = helper.make_node(op_type, inputs, ["out"], name=name, **attributes)
        constants = {
            "i64": np.array([2, 3], dtype=np.int64),
            "f64": np.ones((3,), dtype=np.float64),
        }
        return onnx_model(
            [node], [value_info("x", [2, 3]), value_info("y", [4])], [value_info("out", ["?"])], constants
        )

    return build


ERROR_CASES: list[tuple[str, Callable[[], object], str]] = [
    (
        "unparsable bytes",
        lambda: b"\xff\xff\xff\xff",
        "cannot parse an ONNX model from the given bytes",
    ),
    (
        "empty bytes",
        lambda: b"",
        r"invalid ONNX model: The model does not have an ir_version set properly",
    ),
    (
        "checker failure",
        lambda: unary_model("Softmax", [2, 3], axis=1.5),
        r"invalid ONNX model: Mismatched attribute type in 'n : axis'",
    ),
    (
        "input of an unknown value",
        lambda: _with_node("Relu", ["nowhere"])(),
        r"(?s)invalid ONNX model: .*input 'nowhere' of node.*is not output of any previous nodes",
    ),
    (
        "string input",
        lambda: onnx_model([], [value_info("x", [2], TensorProto.STRING)], [value_info("x", [2], TensorProto.STRING)]),
        r"^input 'x' has element type STRING; only tensors of float32, float64, int8, .*, float8_e8m0fnu are "
        r"supported$",
    ),
    (
        "non-float computed output",
        lambda: onnx_model(
            [helper.make_node("Relu", ["x"], ["y"])],
            [value_info("x", [2])],
            [value_info("y", [2], TensorProto.INT64)],
        ),
        r"^output 'y' is declared INT64, but it is computed as float32$",
    ),
    (
        "constant output of another type than declared",
        lambda: onnx_model(
            [helper.make_node("Constant", [], ["c"], value_ints=[1])],
            [],
            [value_info("c", [1], TensorProto.FLOAT)],
        ),
        r"^output 'c' is declared FLOAT, but its constant value is int64$",
    ),
    (
        "symbolic dim",
        lambda: unary_model("Relu", [2, "N"]),
        r"^input 'x' has a symbolic dimension 'N' at axis 1; "
        r"pass input_shapes=\{'x': \[\.\.\.\]\}$",
    ),
    (
        "unknown dim",
        lambda: unary_model("Relu", [None]),
        r"^input 'x' has an unknown dimension at axis 0; pass input_shapes=\{'x': \[\.\.\.\]\}$",
    ),
    (
        "reshape shape from an int64 graph input",
        lambda: onnx_model(
            [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
            [value_info("x", [2, 3]), value_info("s", [2], TensorProto.INT64)],
            [value_info("y", [3, 2])],
        ),
        r"^node 'r' \(Reshape\): the shape input must be a compile-time constant",
    ),
    (
        "reshape shape computed from data",
        _with_node("Reshape", ["x", "y"], name="r"),
        r"^node 'r' \(Reshape\): the shape input must be a compile-time constant",
    ),
    (
        "reshape shape of floats",
        _with_node("Reshape", ["x", "f64"], name="r"),
        r"^node 'r' \(Reshape\): shape must be a 1-D integer tensor, got float64 of shape \(3,\)$",
    ),
    (
        "bad broadcast",
        _with_node("Add", ["x", "y"], name="add"),
        r"^node 'add' \(Add\): input shapes \(2, 3\) and \(4,\) are not broadcast-compatible$",
    ),
    (
        "unnamed node",
        _with_node("Mul", ["y", "x"], name=""),
        r"^node '<unnamed node #0>' \(Mul\): "
        r"input shapes \(4,\) and \(2, 3\) are not broadcast-compatible$",
    ),
    (
        "matmul mismatch",
        _with_node("MatMul", ["x", "y"]),
        r"^node 'n' \(MatMul\): input shapes \(2, 3\) and \(4,\) are not matmul-compatible$",
    ),
    (
        "gemm inner dims",
        _with_node("Gemm", ["x", "x"]),
        r"^node 'n' \(Gemm\): "
        r"inner dimensions differ: op\(A\) is \(2, 3\) and op\(B\) is \(2, 3\)$",
    ),
    (
        "gemm rank",
        _with_node("Gemm", ["x", "y"]),
        r"^node 'n' \(Gemm\): A and B must be 2-D, got shapes \(2, 3\) and \(4,\)$",
    ),
    (
        "gemm bias",
        _with_node("Gemm", ["x", "x", "y"], transB=1),
        r"^node 'n' \(Gemm\): C of shape \(4,\) does not broadcast to the result shape \(2, 2\)$",
    ),
    (
        "softmax axis",
        _with_node("Softmax", ["x"], axis=2),
        r"^node 'n' \(Softmax\): axis 2 is out of range for an input of rank 2$",
    ),
    (
        "flatten axis",
        _with_node("Flatten", ["x"], axis=-3),
        r"^node 'n' \(Flatten\): axis -3 is out of range for an input of rank 2$",
    ),
    (
        "transpose perm",
        _with_node("Transpose", ["x"], perm=[0, 0]),
        r"^node 'n' \(Transpose\): perm \[0, 0\] is not a permutation of 0\.\.1$",
    ),
    (
        "float64 weight",
        _with_node("Add", ["x", "f64"]),
        r"^node 'n' \(Add\): input element types f32 and f64 differ$",
    ),
    (
        "int64 weight",
        _with_node("Add", ["x", "i64"]),
        r"^node 'n' \(Add\): input element types f32 and i64 differ$",
    ),
    (
        "old-opset attribute",
        lambda: onnx_model(
            [helper.make_node("Add", ["x", "y"], ["z"], name="add", broadcast=1)],
            [value_info("x", [2, 3]), value_info("y", [3])],
            [value_info("z", [2, 3])],
            opset=6,
        ),
        r"^node 'add' \(Add\): attributes \['broadcast'\] are not supported \(opset 6\)$",
    ),
    (
        "constant without a value",
        lambda: onnx_model([helper.make_node("Constant", [], ["c"], name="c")], [], [value_info("c", [1])]),
        r"^node 'c' \(Constant\): exactly one of the attributes value, value_float, value_floats, "
        r"value_int, value_ints is required$",
    ),
    (
        "constant with a string value",
        lambda: onnx_model(
            [helper.make_node("Constant", [], ["c"], name="c", value_string="hi")],
            [],
            [value_info("c", [1])],
        ),
        r"^node 'c' \(Constant\): attributes \['value_string'\] are not supported \(opset 13\)$",
    ),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_import_errors(source: Callable[[], onnx.ModelProto | bytes], message: str) -> None:
    with pytest.raises(ModelImportError, match=message):
        import_model(source())


@pytest.mark.parametrize(
    "source",
    [
        lambda: onnx_model(
            [helper.make_node("Relu", ["x"], ["y"])],
            [value_info("x", [2], TensorProto.INT64)],
            [value_info("y", [2], TensorProto.INT64)],
        ),
        _with_node("Cast", ["x"], to=TensorProto.STRING),
        _with_node("Cast", ["x"], to=TensorProto.COMPLEX64),
    ],
    ids=["relu of int64 data", "cast to string", "cast to complex64"],
)
def test_valid_but_unsupported_models_are_not_implemented(
    source: Callable[[], onnx.ModelProto],
) -> None:
    """What minimlc lacks (an op or element type it does not compute on) is a NotImplementedError, not a malformed
    model."""
    with pytest.raises(UnsupportedFeatureError) as caught:
        import_model(source())
    assert isinstance(caught.value, NotImplementedError)


@pytest.mark.parametrize(
    ("input_shapes", "message"),
    [
        ({"z": [2]}, r"^input_shapes names unknown inputs \['z'\]; the model's inputs are 'x'$"),
        ({"x": [2, 3]}, r"^input_shapes gives input 'x' rank 2, but the model declares rank 1$"),
        ({"x": [-2]}, r"^input_shapes gives input 'x' a negative dimension: \(-2,\)$"),
    ],
)
def test_bad_input_shapes(input_shapes: dict[str, list[int]], message: str) -> None:
    with pytest.raises(ModelImportError, match=message):
        import_model(unary_model("Relu", ["N"]), input_shapes=input_shapes)


@pytest.mark.parametrize(
    ("target", "allowzero", "message"),
    [
        ([-1, -1], 0, r"shape \[-1, -1\] may hold at most one -1 and no other negative value"),
        ([2, -3], 0, r"shape \[2, -3\] may hold at most one -1 and no other negative value"),
        ([5, -1], 0, r"cannot infer the -1 in shape \[5, -1\] for an input of shape \(2, 3\)"),
        ([0, 0, 0], 0, r"shape \[0, 0, 0\] copies dimension 2, but the input has rank 2"),
        ([3, 3], 0, r"cannot reshape an input of shape \(2, 3\) \(6 elements\) to \(3, 3\)"),
        ([0, -1], 1, r"shape \[0, -1\] has both 0 and -1, which allowzero=1 forbids"),
        ([0, 6], 1, r"cannot reshape an input of shape \(2, 3\) \(6 elements\) to \(0, 6\)"),
    ],
)
def test_bad_reshape_shapes(target: list[int], allowzero: int, message: str) -> None:
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="r", allowzero=allowzero)
    shape = {"shape": np.array(target, dtype=np.int64)}
    model = onnx_model([node], [value_info("x", [2, 3])], [value_info("y", ["?"])], shape, opset=14)
    with pytest.raises(ModelImportError, match=r"^node 'r' \(Reshape\): " + message + "$"):
        import_model(model)


@pytest.mark.parametrize("weight_dtype", [np.float64, np.int32])
def test_an_element_type_no_op_accepts_names_the_node(weight_dtype: type) -> None:
    """A float32 input times a weight of another element type (the ONNX checker rejects it too) is refused naming
    the node, not reported as an internal error of the importer."""
    weight = onnx.numpy_helper.from_array(np.ones((4, 3), weight_dtype), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="project")]
    model = onnx_model(nodes, [value_info("x", [2, 4])], [value_info("y", [2, 3])], {})
    model.graph.initializer.append(weight)
    expected = r"^node 'project' \(MatMul\): it makes an invalid graph\.matmul: "
    with pytest.raises(ModelImportError, match=expected) as e:
        import_model(model)
    assert "internal error" not in str(e.value)
    assert "\n" not in str(e.value)
