"""Import-time constant folding: shape chains, ConstantOfShape weights, foldable nodes of unsupported types, and the
unsupported-op check that runs before anything is converted."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.ir import Operation

from minimlc.dialects import graph
from minimlc.frontend.onnx import ImportedModel, ModelImportError, UnsupportedOpsError, import_model


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, Sequence[int]],
    outputs: Sequence[str] = ("y",),
    initializers: dict[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
) -> onnx.ModelProto:
    graph_proto = helper.make_graph(
        list(nodes),
        "fold",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
            for name, shape in inputs.items()
        ],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["?"]) for name in outputs],
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    return helper.make_model(
        graph_proto, opset_imports=[helper.make_opsetid("", opset)], ir_version=8
    )


def _ops(imported: ImportedModel) -> list[Operation]:
    main = imported.module.body.block.first_op
    assert isinstance(main, func.FuncOp)
    return list(main.body.block.ops)


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_shape_gather_unsqueeze_concat_reshape_chain_is_one_reshape() -> None:
    """The dynamic-batch flatten of exported CNNs: reshape x to (batch, -1) with the batch read from its shape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch_1d"]),
        helper.make_node("Concat", ["batch_1d", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    constants = {"zero": np.array(0, dtype=np.int64), "axes": _ints(0), "minus_one": _ints(-1)}
    imported = import_model(_model(nodes, {"x": (2, 3, 4)}, initializers=constants))
    ops = _ops(imported)
    assert [op.name for op in ops] == ["graph.reshape", "func.return"]
    assert graph.shape_of(ops[0].results[0]) == (2, 12)
    assert imported.weights == {}


def test_constant_of_shape_weights_become_graph_weights() -> None:
    """Opset-9 style weights (the light models): ConstantOfShape(0.02) on a constant shape, used as data."""
    fill = numpy_helper.from_array(np.array([0.02], dtype=np.float32))
    nodes = [
        helper.make_node("Constant", [], ["w_shape"], value=numpy_helper.from_array(_ints(3, 4))),
        helper.make_node("ConstantOfShape", ["w_shape"], ["w"], value=fill),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    imported = import_model(_model(nodes, {"x": (2, 3)}, opset=9))
    ops = _ops(imported)
    assert [op.name for op in ops] == ["graph.weight", "graph.matmul", "func.return"]
    weight = ops[0]
    assert isinstance(weight, graph.WeightOp)
    assert weight.weight_name.data == "w"
    assert graph.shape_of(weight.result) == (3, 4)
    np.testing.assert_array_equal(imported.weights["w"], np.full((3, 4), 0.02, dtype=np.float32))
    assert imported.weights["w"].dtype == np.float32


def test_foldable_node_of_an_unsupported_type_is_folded_not_reported() -> None:
    """Range and Mod have no converter, but on constants they are evaluated at import time."""
    nodes = [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Mod", ["r", "three"], ["m"], fmod=1),
        helper.make_node("Add", ["x", "m"], ["y"]),
    ]
    constants = {
        "start": np.array(0.0, np.float32),
        "limit": np.array(5.0, np.float32),
        "delta": np.array(1.0, np.float32),
        "three": np.array(3.0, np.float32),
    }
    imported = import_model(_model(nodes, {"x": (5,)}, initializers=constants))
    assert [op.name for op in _ops(imported)] == ["graph.weight", "graph.add", "func.return"]
    np.testing.assert_array_equal(
        imported.weights["m"], np.array([0, 1, 2, 0, 1], dtype=np.float32)
    )


def test_unsupported_check_runs_before_converting_and_ignores_foldable_nodes() -> None:
    """Every node of an unsupported type on runtime data is listed at once, even after a node that would fail to
    convert; a node of the same type on constants (folded) is not listed."""
    nodes = [
        helper.make_node("Add", ["x", "bad"], ["a"], name="bad_broadcast"),
        helper.make_node("GlobalLpPool", ["two"], ["c"], name="pool_on_constants"),
        helper.make_node("GlobalLpPool", ["x"], ["h"], name="pool_on_data"),
        helper.make_node("Add", ["h", "c"], ["m"]),
        helper.make_node("MaxRoiPool", ["m", "m"], ["y"], name="roi_pool", pooled_shape=[1, 1]),
    ]
    constants = {"two": np.array([[2.0, 1.0], [0.0, 3.0]], np.float32)}
    model = _model(nodes, {"x": (2, 2), "bad": (5,)}, outputs=["y", "a"], initializers=constants)
    message = (
        "model has 2 unsupported operator types: GlobalLpPool (opset 13): pool_on_data; MaxRoiPool (opset 13): roi_pool"
    )
    with pytest.raises(UnsupportedOpsError, match=f"^{re.escape(message)}$"):
        import_model(model)


def test_shape_of_a_folded_chain_feeds_an_unsupported_but_foldable_op() -> None:
    """Constants propagate through Shape (of a runtime tensor) into ops that have no converter."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node(
            "ConstantOfShape",
            ["s"],
            ["ones"],
            value=numpy_helper.from_array(np.ones(1, np.float32)),
        ),
        helper.make_node("CumSum", ["ones", "axis"], ["ramp"]),
        helper.make_node("Mul", ["x", "ramp"], ["y"]),
    ]
    imported = import_model(
        _model(nodes, {"x": (2, 3)}, initializers={"axis": np.array(0, np.int64)}, opset=15)
    )
    np.testing.assert_array_equal(imported.weights["ramp"], np.array([1, 2, 3], dtype=np.float32))


def test_folding_uses_the_model_opset() -> None:
    """Unsqueeze takes axes as an attribute before opset 13; folding must evaluate that version."""
    nodes = [
        helper.make_node("Unsqueeze", ["c"], ["u"], axes=[0]),
        helper.make_node("Add", ["x", "u"], ["y"]),
    ]
    constants = {"c": np.arange(3, dtype=np.float32)}
    imported = import_model(_model(nodes, {"x": (2, 3)}, initializers=constants, opset=11))
    assert imported.weights["u"].shape == (1, 3)


def test_folding_errors_name_the_node() -> None:
    nodes = [
        helper.make_node("Reshape", ["c", "bad_shape"], ["r"], name="fold_me"),
        helper.make_node("Add", ["x", "r"], ["y"]),
    ]
    constants = {"c": np.arange(6, dtype=np.float32), "bad_shape": _ints(4, 4)}
    with pytest.raises(
        ModelImportError, match=r"^node 'fold_me' \(Reshape\): cannot evaluate the node at import"
    ):
        import_model(_model(nodes, {"x": (2, 3)}, initializers=constants))


@pytest.mark.parametrize(
    ("start", "end", "expected"), [(0, None, [2, 3, 4]), (1, None, [3, 4]), (-2, -1, [3])]
)
def test_shape_slices_are_constants(start: int, end: int | None, expected: list[int]) -> None:
    attributes = {"start": start} | ({} if end is None else {"end": end})
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], **attributes),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
        helper.make_node("Identity", ["sf"], ["y"]),
    ]
    imported = import_model(_model(nodes, {"x": (2, 3, 4)}, opset=15))
    y = imported.constant_outputs["y"]
    np.testing.assert_array_equal(y, np.array(expected, dtype=np.float32))


def test_split_outputs_are_slices_with_their_names() -> None:
    nodes = [helper.make_node("Split", ["x"], ["left", "right"], axis=1)]
    imported = import_model(_model(nodes, {"x": (2, 4)}, outputs=["left", "right"], opset=11))
    ops = _ops(imported)
    assert [op.name for op in ops] == ["graph.slice", "graph.slice", "func.return"]
    assert [op.results[0].name_hint for op in ops[:2]] == ["left", "right"]
    assert [list(op.starts.get_values()) for op in ops[:2] if isinstance(op, graph.SliceOp)] == [
        [0, 0],
        [0, 2],
    ]


@pytest.mark.parametrize(
    ("node", "initializers", "message"),
    [
        (
            helper.make_node("Gather", ["x", "i"], ["y"], name="n"),
            {"i": _ints(0, 2)},
            r"indices \[2\] are out of range for axis 0 of extent 2",
        ),
        (
            helper.make_node("Squeeze", ["x", "axes"], ["y"], name="n"),
            {"axes": _ints(1)},
            r"cannot squeeze axis 1 of extent 3 \(shape \(2, 3\)\)",
        ),
        (
            helper.make_node("Split", ["x", "s"], ["y", "z"], name="n", axis=1),
            {"s": _ints(1, 1)},
            r"split sizes \[1, 1\] do not cut the axis of extent 3 into 2 outputs",
        ),
        (
            helper.make_node("Concat", ["x", "c"], ["y"], name="n", axis=0),
            {"c": np.zeros((1, 2), np.float32)},
            r"input shapes \(2, 3\) and \(1, 2\) differ outside the concatenation axis 0",
        ),
        (
            helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="n"),
            {"axes": _ints(1, -1)},
            r"axes \[1, -1\] repeat an axis",
        ),
        (
            helper.make_node("Cast", ["x"], ["y"], name="n", to=TensorProto.STRING),
            {},
            r"casting to object is not supported",
        ),
        (
            helper.make_node("Expand", ["x", "s"], ["y"], name="n"),
            {"s": _ints(4, 1)},
            r"input shape \(2, 3\) does not broadcast with the requested shape \(4, 1\)",
        ),
    ],
    ids=[
        "gather-range",
        "squeeze-wide",
        "split-sizes",
        "concat-shapes",
        "reduce-repeat",
        "cast",
        "expand",
    ],
)
def test_conversion_errors(
    node: onnx.NodeProto, initializers: dict[str, np.ndarray], message: str
) -> None:
    outputs = list(node.output)
    with pytest.raises(ModelImportError, match=rf"^node 'n' \({node.op_type}\): {message}"):
        import_model(_model([node], {"x": (2, 3)}, outputs=outputs, initializers=initializers))


def test_gather_indices_must_be_integers() -> None:
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="n")
    model = _model([node], {"x": (2, 3), "i": (2,)})
    with pytest.raises(ModelImportError, match=r"indices must be int32 or int64, got f32"):
        import_model(model)
