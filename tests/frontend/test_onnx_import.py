"""The ONNX importer: the graph ops, shapes, weights and signature it builds (its errors:
`test_onnx_import_errors.py`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_import_models import Dims, onnx_model, unary_model, value_info
from xdsl.dialects import func
from xdsl.ir import Operation

from minimlc.backend.shape_inputs import shape_setting_inputs
from minimlc.dialects import graph
from minimlc.frontend.onnx import (
    ImportedModel,
    ModelImportError,
    TensorInfo,
    import_model,
)


def _ops(imported: ImportedModel) -> list[Operation]:
    main = imported.module.body.block.first_op
    assert isinstance(main, func.FuncOp)
    return list(main.body.block.ops)


def _weight(shape: Sequence[int], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _mlp() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Flatten", ["image"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc0/weight:0", "fc0.bias"], ["hidden"], name="fc0", transB=1),
        helper.make_node("Relu", ["hidden"], ["act"], name="relu"),
        helper.make_node("MatMul", ["act", "fc1.weight"], ["logits"], name="fc1"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax"),
    ]
    weights = {
        "fc0/weight:0": _weight((8, 12), 1),
        "fc0.bias": _weight((8,), 2),
        "fc1.weight": _weight((8, 4), 3),
    }
    return onnx_model(nodes, [value_info("image", ["N", 3, 4])], [value_info("probs", ["N", 4])], weights)


def test_mlp_ops_shapes_and_weights() -> None:
    model = _mlp()
    imported = import_model(model, input_shapes={"image": [2, 3, 4]})
    ops = _ops(imported)
    assert [op.name for op in ops] == [
        "graph.reshape",
        "graph.weight",
        "graph.weight",
        "graph.gemm",
        "graph.relu",
        "graph.weight",
        "graph.matmul",
        "graph.softmax",
        "func.return",
    ]
    assert [graph.shape_of(op.results[0]) for op in ops[:-1]] == [
        (2, 12), (8, 12), (8,), (2, 8), (2, 8), (8, 4), (2, 4), (2, 4)
    ]  # fmt: skip
    gemm, softmax = ops[3], ops[7]
    assert isinstance(gemm, graph.GemmOp)
    assert gemm.trans_b is not None
    assert gemm.trans_a is None
    assert isinstance(softmax, graph.SoftmaxOp)
    assert softmax.axis.value.data == 1
    names = [op.weight_name.data for op in ops if isinstance(op, graph.WeightOp)]
    assert names == list(imported.weights) == ["fc0/weight:0", "fc0.bias", "fc1.weight"]
    for tensor in model.graph.initializer:
        stored = imported.weights[tensor.name]
        assert stored.dtype == np.float32
        assert stored.flags.c_contiguous
        np.testing.assert_array_equal(stored, numpy_helper.to_array(tensor))
    assert imported.inputs == [TensorInfo("image", (2, 3, 4), np.dtype("float32"))]
    assert imported.outputs == [TensorInfo("probs", (2, 4), np.dtype("float32"))]
    assert imported.outputs[0].type == "tensor(float)"


def test_readable_name_hints() -> None:
    text = str(import_model(_mlp(), input_shapes={"image": [1, 3, 4]}).module)
    assert "func.func @main(%image: tensor<1x3x4xf32>) -> tensor<1x4xf32>" in text
    assert '%fc0_weight = graph.weight "fc0/weight:0" : tensor<8x12xf32>' in text
    assert "%hidden = graph.gemm %flat, %fc0_weight, %fc0_bias {trans_b}" in text
    assert "func.return %probs : tensor<1x4xf32>" in text


@pytest.mark.parametrize("form", ["proto", "bytes", "str", "path"])
def test_model_forms(form: str, tmp_path: Path) -> None:
    model = unary_model("Relu", [2, 3])
    path = tmp_path / "relu.onnx"
    onnx.save(model, path)
    source = {"proto": model, "bytes": model.SerializeToString(), "str": str(path), "path": path}[form]
    imported = import_model(source)
    assert [op.name for op in _ops(imported)] == ["graph.relu", "func.return"]
    assert imported.outputs == [TensorInfo("y", (2, 3), np.dtype("float32"))]


def test_constant_outputs_are_kept_apart_with_their_own_type() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("Constant", [], ["c"], value_floats=[1.5]),
    ]
    outputs = [value_info("shape", [2], TensorProto.INT64), value_info("y", [2, 3]), value_info("c", [1])]
    imported = import_model(onnx_model(nodes, [value_info("x", [2, 3])], outputs))
    assert imported.outputs == [
        TensorInfo("shape", (2,), np.dtype("int64")),
        TensorInfo("y", (2, 3), np.dtype("float32")),
        TensorInfo("c", (1,), np.dtype("float32")),
    ]
    assert imported.computed_outputs == [imported.outputs[1]]
    assert imported.outputs[0].type == "tensor(int64)"
    np.testing.assert_array_equal(imported.constant_outputs["shape"], [2, 3])
    np.testing.assert_array_equal(imported.constant_outputs["c"], [1.5])
    assert imported.weights == {}
    text = str(imported.module)
    assert "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32>" in text
    assert "func.return %y : tensor<2x3xf32>" in text


def test_batch_normalization_training_mode_is_batch_statistics_in_graph_ops() -> None:
    params = {name: _weight([3], seed) for seed, name in enumerate(("scale", "bias", "mean", "var"))}
    node = helper.make_node(
        "BatchNormalization", ["x", *params], ["y", "running_mean", "running_var"], training_mode=1, momentum=0.75
    )
    outputs = [value_info("y", [2, 3, 4]), value_info("running_mean", [3]), value_info("running_var", [3])]
    imported = import_model(onnx_model([node], [value_info("x", [2, 3, 4])], outputs, params, opset=15))
    ops = _ops(imported)
    assert not any(isinstance(op, graph.BatchNormOp) for op in ops)
    means = [op for op in ops if isinstance(op, graph.ReduceMeanOp)]
    assert [(op.axes.get_values(), op.keepdims is not None) for op in means] == [((0, 2), True)] * 2
    constants = sorted(op.value.value.data for op in ops if isinstance(op, graph.ConstantOp))
    assert constants == [pytest.approx(1e-5), 0.25, 0.25, 0.75, 0.75]
    assert [info.shape for info in imported.computed_outputs] == [(2, 3, 4), (3,), (3,)]
    (ret,) = [op for op in ops if isinstance(op, func.ReturnOp)]
    assert [value.name_hint for value in ret.operands] == ["y", "running_mean", "running_var"]


def test_max_pool_indices_are_an_int64_output() -> None:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2], storage_order=1)
    outputs = [value_info("y", [1, 2, 2, 2]), value_info("i", [1, 2, 2, 2], TensorProto.INT64)]
    imported = import_model(onnx_model([node], [value_info("x", [1, 2, 4, 5])], outputs, opset=12))
    ops = _ops(imported)
    (pool,) = [op for op in ops if isinstance(op, graph.MaxPoolOp)]
    (indices,) = [op for op in ops if isinstance(op, graph.MaxPoolIndicesOp)]
    assert indices.pooled == pool.result
    assert indices.column_major is not None
    assert (indices.kernel_shape, indices.strides) == (pool.kernel_shape, pool.strides)
    assert imported.computed_outputs == [
        TensorInfo("y", (1, 2, 2, 2), np.dtype("float32")),
        TensorInfo("i", (1, 2, 2, 2), np.dtype("int64")),
    ]
    assert "-> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)" in str(imported.module)
    outputs[1] = value_info("i", [1, 2, 2, 2], TensorProto.INT32)
    with pytest.raises(ModelImportError, match=r"^output 'i' is declared INT32, but it is computed as int64$"):
        import_model(onnx_model([node], [value_info("x", [1, 2, 4, 5])], outputs, opset=12))


def test_shape_setting_inputs_are_shape_setting_operands_and_dropouts_ratio_and_training_mode() -> None:
    """The graph inputs the backend binds: those read where a node needs a constant, directly or through nodes (`r2`
    through Add), not data (`low`, `indices`), not through Shape (`x`)."""
    nodes = [
        helper.make_node("Add", ["r2", "one"], ["ratio"]),
        helper.make_node("Dropout", ["x", "ratio"], ["x2"]),
        helper.make_node("Shape", ["x"], ["dims"]),
        helper.make_node("Reshape", ["x2", "dims"], ["x3"]),
        helper.make_node("Dropout", ["x", "r", "t"], ["y"]),
        helper.make_node("Dropout", ["y", "", "t2"], ["z"]),
        helper.make_node("Clip", ["z", "low"], ["w"]),
        helper.make_node("Reshape", ["w", "shape"], ["v"]),
        helper.make_node("ReduceMax", ["v", "axes"], ["u"]),
        helper.make_node("Gather", ["u", "indices"], ["o"]),
    ]
    names = ("x", "r", "t", "t2", "low", "shape", "axes", "indices", "r2", "one")
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1]) for name in names]
    bound = shape_setting_inputs(helper.make_graph(nodes, "g", inputs, []))
    assert bound == {"r", "t", "t2", "shape", "axes", "r2", "one"}


def test_signature_order_and_returned_values() -> None:
    nodes = [
        helper.make_node("Sub", ["b", "a"], ["d"], name="sub"),
        helper.make_node("Identity", ["d"], ["e"], name="id"),
    ]
    outputs = [value_info("e", [2, 3]), value_info("a", [2, 3]), value_info("d", [2, 3]), value_info("e", [2, 3])]
    model = onnx_model(nodes, [value_info("b", [3]), value_info("a", [2, 3])], outputs)
    imported = import_model(model)
    assert [i.name for i in imported.inputs] == ["b", "a"]
    assert [o.name for o in imported.outputs] == ["e", "a", "d", "e"]
    main = imported.module.body.block.first_op
    assert isinstance(main, func.FuncOp)
    sub, ret = _ops(imported)
    assert isinstance(sub, graph.SubOp)
    assert isinstance(ret, func.ReturnOp)
    b, a = main.body.block.args
    assert (sub.lhs, sub.rhs) == (b, a)
    assert list(ret.arguments) == [sub.result, a, sub.result, sub.result]
    assert [graph.shape_of(t) for t in main.function_type.inputs] == [(3,), (2, 3)]


def test_ir3_initializers_listed_as_inputs_are_constants() -> None:
    node = helper.make_node("Add", ["x", "bias"], ["y"], name="add")
    inputs = [value_info("x", [2, 3]), value_info("bias", [3])]
    model = onnx_model([node], inputs, [value_info("y", [2, 3])], {"bias": _weight((3,))}, opset=7, ir_version=3)
    imported = import_model(model)
    assert [i.name for i in imported.inputs] == ["x"]
    assert list(imported.weights) == ["bias"]


def test_constants_become_weights_only_when_used_as_data() -> None:
    nodes = [
        helper.make_node("Constant", [], ["shape"], value_ints=[3, -1]),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="r0"),
        helper.make_node("Reshape", ["r", "shape"], ["s"], name="r1"),
        helper.make_node("Constant", [], ["two"], value_float=2.0),
        helper.make_node("Mul", ["s", "two"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "two"], ["y"], name="add"),
    ]
    target = {"target": np.array([0, -1], dtype=np.int64)}
    imported = import_model(onnx_model(nodes, [value_info("x", [2, 3, 2])], [value_info("y", [3, 4])], target))
    ops = _ops(imported)
    assert [op.name for op in ops] == [
        "graph.reshape", "graph.reshape", "graph.weight", "graph.mul", "graph.add", "func.return"
    ]  # fmt: skip
    assert [graph.shape_of(op.results[0]) for op in ops[:2]] == [(2, 6), (3, 4)]
    assert list(imported.weights) == ["two"]
    assert imported.weights["two"].shape == ()
    assert imported.weights["two"].dtype == np.float32
    assert ops[3].operands[1] is ops[4].operands[1] is ops[2].results[0]


@pytest.mark.parametrize(
    ("shape", "target", "allowzero", "expected"),
    [
        ((2, 3, 4), [4, -1], 0, (4, 6)),
        ((2, 3, 4), [0, -1], 0, (2, 12)),
        ((2, 3, 4), [-1], 0, (24,)),
        ((2, 3, 4), [2, 0, 2, 2], 0, (2, 3, 2, 2)),
        ((2, 0, 4), [0, 8], 1, (0, 8)),
    ],
)
def test_reshape_target_shape(
    shape: tuple[int, ...], target: list[int], allowzero: int, expected: tuple[int, ...]
) -> None:
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=allowzero)
    initializers = {"shape": np.array(target, dtype=np.int64)}
    model = onnx_model(
        [node], [value_info("x", shape)], [value_info("y", ["?"] * len(expected))], initializers, opset=14
    )
    reshape, _ = _ops(import_model(model))
    assert isinstance(reshape, graph.ReshapeOp)
    assert graph.shape_of(reshape.result) == expected


@pytest.mark.parametrize(("axis", "expected"), [(0, (1, 24)), (1, (2, 12)), (2, (6, 4)), (3, (24, 1)), (-1, (6, 4))])
def test_flatten_shape(axis: int, expected: tuple[int, int]) -> None:
    reshape, _ = _ops(import_model(unary_model("Flatten", [2, 3, 4], axis=axis)))
    assert isinstance(reshape, graph.ReshapeOp)
    assert graph.shape_of(reshape.result) == expected


@pytest.mark.parametrize(("perm", "expected"), [(None, (4, 3, 2)), ([1, 2, 0], (3, 4, 2))])
def test_transpose_perm(perm: list[int] | None, expected: tuple[int, ...]) -> None:
    attributes = {} if perm is None else {"perm": perm}
    transpose, _ = _ops(import_model(unary_model("Transpose", [2, 3, 4], **attributes)))
    assert isinstance(transpose, graph.TransposeOp)
    assert list(transpose.perm.get_values()) == (perm or [2, 1, 0])
    assert graph.shape_of(transpose.result) == expected


@pytest.mark.parametrize(("axis", "expected"), [(None, 2), (-2, 1), (0, 0)])
def test_softmax_13_axis(axis: int | None, expected: int) -> None:
    attributes = {} if axis is None else {"axis": axis}
    softmax, _ = _ops(import_model(unary_model("Softmax", [2, 3, 4], **attributes)))
    assert isinstance(softmax, graph.SoftmaxOp)
    assert softmax.axis.value.data == expected


@pytest.mark.parametrize(
    ("shape", "axis", "coerced"),
    [((2, 3, 4), None, (2, 12)), ((2, 3, 4), -1, (6, 4)), ((2, 3, 4), 0, (1, 24))],
)
def test_softmax_11_coerces_to_2d(shape: tuple[int, ...], axis: int | None, coerced: tuple[int, int]) -> None:
    attributes = {} if axis is None else {"axis": axis}
    ops = _ops(import_model(unary_model("Softmax", shape, opset=11, **attributes)))
    assert [op.name for op in ops] == [
        "graph.reshape",
        "graph.softmax",
        "graph.reshape",
        "func.return",
    ]
    assert [graph.shape_of(op.results[0]) for op in ops[:3]] == [coerced, coerced, shape]
    assert isinstance(ops[1], graph.SoftmaxOp)
    assert ops[1].axis.value.data == 1


def test_softmax_11_on_2d_needs_no_reshape() -> None:
    ops = _ops(import_model(unary_model("Softmax", [3, 5], opset=11)))
    assert [op.name for op in ops] == ["graph.softmax", "func.return"]


@pytest.mark.parametrize(
    ("declared", "given", "expected"),
    [(["N", 3], [5, 3], (5, 3)), ([None, 3], [1, 3], (1, 3)), ([2, 3], [2, 3], (2, 3))],
)
def test_input_shapes(declared: Dims, given: list[int], expected: tuple[int, ...]) -> None:
    imported = import_model(unary_model("Relu", declared), input_shapes={"x": given})
    assert imported.inputs[0].shape == imported.outputs[0].shape == expected


@pytest.mark.parametrize(
    ("declared", "given", "shown"),
    [([2, 3], [4, 3], "[2, 3]"), (["N", 3], [5, 4], "[N, 3]"), ([None, 3, 8], [1, 3, 9], "[?, 3, 8]")],
)
def test_input_shapes_cannot_change_a_static_dimension(declared: Dims, given: list[int], shown: str) -> None:
    message = (
        rf"^input 'x' is given shape {re.escape(str(given))}, but the model declares {re.escape(shown)}: "
        r"only symbolic or unknown dimensions can be set$"
    )
    with pytest.raises(ModelImportError, match=message):
        import_model(unary_model("Relu", declared), input_shapes={"x": given})


def test_a_constant_named_like_another_of_other_contents_gets_its_own_weight() -> None:
    """Two constants under one name (converters naming their folded tables alike): each keeps its contents."""
    from xdsl.builder import Builder
    from xdsl.ir import Block
    from xdsl.rewriter import InsertPoint

    from minimlc.frontend.onnx_ops import ConstantValue, WeightStore

    store = WeightStore(Builder(InsertPoint.at_end(Block())))
    first = store.handle(ConstantValue("table", np.arange(4, dtype=np.float32)), "t")
    again = store.handle(ConstantValue("table", np.arange(4, dtype=np.float32)), "t")
    other = store.handle(ConstantValue("table", np.ones(4, dtype=np.float32)), "t")
    third = store.handle(ConstantValue("table", np.zeros(2, dtype=np.int64)), "t")
    assert again is first and other is not first and third not in (first, other)
    assert sorted(store.arrays) == ["table", "table__2", "table__3"]
    np.testing.assert_array_equal(store.arrays["table__2"], np.ones(4, dtype=np.float32))
