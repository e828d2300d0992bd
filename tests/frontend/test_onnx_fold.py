"""Import-time constant folding by minimlc's own evaluators: shape chains, ConstantOfShape weights, the BERT position
ids, nodes on constants outside the fold set (compiled), the unsupported-op check that runs before anything is
converted, and the package never importing onnx's reference evaluator. Each evaluator against ONNX Runtime:
`test_onnx_fold_ops.py`."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.ir import Operation

from minimlc import InferenceSession
from minimlc.dialects import graph
from minimlc.frontend.onnx import (
    ImportedModel,
    ModelImportError,
    UnsupportedFeatureError,
    UnsupportedOpsError,
    import_model,
)


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


ONE = _ints(1)


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


def test_foldable_node_without_a_converter_is_folded_not_reported() -> None:
    """Range has no converter, but on constants it is evaluated at import time (and Mod on its output)."""
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
    """Every node of an unsupported type is listed at once, even after a node that would fail to convert, on constants
    too (only the fold set is evaluated at import time); a foldable node without a converter on constants is not."""
    nodes = [
        helper.make_node("Add", ["x", "bad"], ["a"], name="bad_broadcast"),
        helper.make_node("GlobalLpPool", ["two"], ["c"], name="pool_on_constants"),
        helper.make_node("GlobalLpPool", ["x"], ["h"], name="pool_on_data"),
        helper.make_node("ConstantOfShape", ["shape"], ["ones"], name="foldable", value=numpy_helper.from_array(ONE)),
        helper.make_node("Add", ["h", "c"], ["m"]),
        helper.make_node("MaxRoiPool", ["m", "m"], ["y"], name="roi_pool", pooled_shape=[1, 1]),
    ]
    constants = {"two": np.array([[2.0, 1.0], [0.0, 3.0]], np.float32), "shape": _ints(2)}
    model = _model(nodes, {"x": (2, 2), "bad": (5,)}, outputs=["y", "a"], initializers=constants)
    message = (
        "model has 2 unsupported operator types: GlobalLpPool (opset 13): pool_on_constants, pool_on_data; "
        "MaxRoiPool (opset 13): roi_pool"
    )
    with pytest.raises(UnsupportedOpsError, match=f"^{re.escape(message)}$"):
        import_model(model)


def test_shape_of_a_folded_chain_feeds_an_unsupported_but_foldable_op() -> None:
    """Constants propagate through Shape (of a runtime tensor) into ops that have no converter."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(_ints(1))),
        helper.make_node("CumSum", ["ones", "axis"], ["ramp"]),
        helper.make_node("Cast", ["ramp"], ["ramp_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "ramp_f"], ["y"]),
    ]
    imported = import_model(
        _model(nodes, {"x": (2, 3)}, initializers={"axis": np.array(0, np.int64)}, opset=15)
    )
    np.testing.assert_array_equal(imported.weights["ramp_f"], np.array([1, 2, 3], dtype=np.float32))


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
        ModelImportError, match=r"^node 'fold_me' \(Reshape\): cannot reshape an input of shape \(6,\) \(6 elements\)"
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


def _run_both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The outputs of minimlc's compiled model and of ONNX Runtime."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return InferenceSession(model).run(None, feeds), session.run(None, feeds)


def test_bert_position_ids_gather_from_a_constant_buffer() -> None:
    """torch.onnx.export (dynamo) of BERT: the sequence length read from the input's shape selects the first ids of
    a constant [1, 128] int64 buffer with GatherElements, whose 128 choices onnx's reference evaluator could not
    gather (np.choose takes at most 63)."""
    rng = np.random.default_rng(0)
    constants = {
        "buffer": rng.integers(0, 2, (1, 128)).astype(np.int64),
        **{"starts": _ints(1), "ends": _ints(2), "axes": _ints(0)},
        **{"zero": np.array(0, np.int64), "one": np.array(1, np.int64)},
    }
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "starts", "ends"], ["length"]),
        helper.make_node("Squeeze", ["length", "axes"], ["count"]),
        helper.make_node("Range", ["zero", "count", "one"], ["positions"]),
        helper.make_node("Unsqueeze", ["positions", "axes"], ["indices"]),
        helper.make_node("GatherElements", ["buffer", "indices"], ["gathered"], axis=1, name="node_gather"),
        helper.make_node("Cast", ["gathered"], ["ids"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "ids"], ["y"]),
    ]
    model = _model(nodes, {"x": (1, 128)}, initializers=constants, opset=18)
    imported = import_model(model)
    assert [op.name for op in _ops(imported)] == ["graph.weight", "graph.add", "func.return"]
    np.testing.assert_array_equal(imported.weights["ids"], constants["buffer"].astype(np.float32))
    feeds = {"x": rng.standard_normal((1, 128)).astype(np.float32)}
    (got,), (want,) = _run_both(model, feeds)
    np.testing.assert_array_equal(got, want)


def test_constant_inputs_outside_the_fold_set_are_compiled() -> None:
    """MatMul of two initializers and Exp of a constant are not folded: their inputs become weights and native code
    computes them."""
    rng = np.random.default_rng(1)
    constants = {name: rng.standard_normal((3, 3)).astype(np.float32) for name in ("a", "b")}
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["p"]),
        helper.make_node("Exp", ["p"], ["e"]),
        helper.make_node("Add", ["x", "e"], ["y"]),
        helper.make_node("Exp", ["a"], ["z"]),
    ]
    model = _model(nodes, {"x": (3, 3)}, outputs=["y", "z"], initializers=constants)
    imported = import_model(model)
    assert imported.constant_outputs == {}
    assert sorted(imported.weights) == ["a", "b"]
    assert {"graph.matmul", "graph.exp"} <= {op.name for op in _ops(imported)}
    feeds = {"x": rng.standard_normal((3, 3)).astype(np.float32)}
    for got, want in zip(*_run_both(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_node_folding_declines_is_compiled() -> None:
    """A cast to float8, which the evaluators do not compute, is compiled even on a constant."""
    nodes = [
        helper.make_node("Cast", ["c"], ["h"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["h"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "f"], ["y"]),
    ]
    imported = import_model(_model(nodes, {"x": (2,)}, initializers={"c": np.array([0.1, 7.3], np.float32)}))
    assert [op.name for op in _ops(imported)].count("graph.cast") == 2
    assert list(imported.weights) == ["c"]


def test_a_constant_operand_computed_at_run_time_names_the_node_that_computes_it() -> None:
    nodes = [
        helper.make_node("Exp", ["logs"], ["sizes"], name="exp"),
        helper.make_node("Cast", ["sizes"], ["target"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    model = _model(nodes, {"x": (2, 3)}, initializers={"logs": np.log(np.array([2, 3], np.float32))})
    message = (
        r"^node 'reshape' \(Reshape\): the shape input must be a compile-time constant .*; input 'target' is computed "
        r"at run time from constants by node 'exp' \(Exp\), which is compiled, not folded at import time$"
    )
    with pytest.raises(ModelImportError, match=message):
        import_model(model)


def test_an_op_without_a_converter_after_a_declined_fold_is_refused() -> None:
    """The unsupported-op check counts ConstantOfShape of a Pad of constants as foldable, but Pad's edge mode is
    compiled: ConstantOfShape, which has no converter, is then refused, naming its run-time input."""
    nodes = [
        helper.make_node("Pad", ["dims", "pads"], ["shape"], mode="edge"),
        helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill"),
    ]
    model = _model(nodes, {}, initializers={"dims": _ints(2), "pads": _ints(0, 1)})
    with pytest.raises(
        UnsupportedFeatureError, match=r"^node 'fill' \(ConstantOfShape\): has no converter, and inputs 'shape' are"
    ):
        import_model(model)


def test_the_package_does_not_import_onnx_reference() -> None:
    """Compiling a model with a folded Shape chain leaves onnx's reference evaluator unimported."""
    script = """
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from minimlc import InferenceSession
nodes = [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "zero"], ["n"]),
    helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
    helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
    helper.make_node("Reshape", ["x", "target"], ["y"]),
]
constants = {"zero": np.array(0), "axes": np.array([0]), "minus_one": np.array([-1])}
graph = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(array, name) for name, array in constants.items()],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
(y,) = InferenceSession(model).run(None, {"x": np.ones((2, 3, 4), np.float32)})
assert y.shape == (2, 12), y.shape
print("onnx.reference" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
