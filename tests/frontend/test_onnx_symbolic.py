"""The importer's symbolic mode (`import_model(model, symbolic=True)`): `?` types, `minimlc.input_symbols`, symbolic
shape computations rewritten to static graph forms, and clear refusals naming the node, op and symbol."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc.dialects import graph
from minimlc.frontend.onnx import import_model
from minimlc.frontend.onnx_errors import ModelImportError
from minimlc.frontend.onnx_symbolic_dims import Dim, ceil_div, evaluate, floor_div
from minimlc.lowering.abi import input_symbols_of

sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
import dynamic_transformers
import transformer_models
from model_builder import ModelBuilder

DYN = graph.DYNAMIC
batch, sequence = Dim.symbol("batch"), Dim.symbol("sequence")


def ops(imported, name):
    return [op for op in imported.module.walk() if op.name == name]


def main_of(imported):
    return next(op for op in imported.module.walk() if op.name == "func.func")


# --- Dim -------------------------------------------------------------------------------------------------------


def test_dim_arithmetic_is_exact_and_folds_constants():
    assert str(batch * sequence * 12) == "batch*sequence*12"
    assert (batch * sequence * 768) // 768 == batch * sequence
    assert floor_div(batch * sequence * 768, batch * 768) == sequence
    assert (batch * 4 - batch * 4) + 3 == 3
    assert isinstance((batch - batch) + 3, int)
    assert sequence * batch == batch * sequence
    assert hash(sequence * batch) == hash(batch * sequence)
    assert str(sequence + 1) == "sequence + 1"
    assert str(2 - batch) == "-batch + 2"


def test_dim_opaque_quotients_evaluate():
    half = ceil_div(sequence + 1, 2)
    assert str(half) == "ceil((sequence + 1)/2)"
    assert evaluate(half, {"sequence": 4}) == 3
    assert evaluate(floor_div(sequence, 3), {"sequence": 8}) == 2
    assert evaluate(batch * sequence + 2, {"batch": 3, "sequence": 5}) == 17
    assert (sequence * 2 + 2) // 2 == sequence + 1


# --- Models ----------------------------------------------------------------------------------------------------


def test_dynamic_bert_keeps_batch_and_sequence():
    dims = transformer_models.Dims(tokens=64, hidden=32, heads=4, ffn=64)
    imported = import_model(dynamic_transformers.bert(dims, layers=1, vocab=100), symbolic=True)
    main = main_of(imported)
    assert [graph.shape_of(arg) for arg in main.body.block.args] == [(DYN, DYN), (DYN, DYN)]
    assert input_symbols_of(main) == ["batch", "sequence", "batch", "sequence"]
    assert [info.shape for info in imported.inputs] == [("batch", "sequence")] * 2
    assert imported.outputs[0].shape == ("batch", "sequence", 32)
    assert imported.symbolic_dims["last_hidden_state"] == (batch, sequence, 32)
    targets = {tuple(op.shape.get_values()) for op in ops(imported, "graph.reshape") if op.shape is not None}
    assert {(0, 0, 4, 8), (0, 0, 32), (0, 1, 1, -1)} <= targets
    assert graph.shape_of(main.body.block.args[0]) == (DYN, DYN)


def test_shape_gather_concat_reshape_chain_becomes_a_rest_target():
    """x [batch, sequence, 8] reshaped to Concat(Unsqueeze(Shape[0] * Shape[1]), [8]): target [-1, 8]."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["b"], axis=0),
        helper.make_node("Gather", ["shape", "one"], ["s"], axis=0),
        helper.make_node("Mul", ["b", "s"], ["rows"]),
        helper.make_node("Unsqueeze", ["rows", "axes"], ["rows1"]),
        helper.make_node("Concat", ["rows1", "width"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    constants = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([8], np.int64), "width"),
    ]
    model = _model(nodes, [("x", ["batch", "sequence", 8])], "y", constants)
    imported = import_model(model, symbolic=True)
    (reshape,) = ops(imported, "graph.reshape")
    assert list(reshape.shape.get_values()) == [-1, 8]
    assert graph.shape_of(reshape.result) == (DYN, 8)
    assert imported.outputs[0].shape == ("batch*sequence", 8)
    assert imported.symbolic_dims["y"] == (batch * sequence, 8)


def test_unknown_dims_get_fresh_names_and_input_shapes_fix_some():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [None, "n", 4])], "y")
    imported = import_model(model, symbolic=True)
    assert input_symbols_of(main_of(imported)) == ["unk0", "n"]
    fixed = import_model(model, {"x": [2, None, 4]}, symbolic=True)
    assert input_symbols_of(main_of(fixed)) == ["n"]
    assert fixed.inputs[0].shape == (2, "n", 4)
    with pytest.raises(ModelImportError, match="given size 5 at axis 2"):
        import_model(model, {"x": [2, None, 5]}, symbolic=True)


def test_conv_net_with_symbolic_batch():
    b = ModelBuilder(seed=1)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 3, 8, "conv", strides=[2, 2]), 8, "bn")], "relu")
    model = b.model(["N", 3, 16, 16], y, ["N", 8, 8, 8])
    imported = import_model(model, symbolic=True)
    assert input_symbols_of(main_of(imported)) == ["N"]
    assert imported.outputs[0].shape == ("N", 8, 8, 8)
    assert graph.shape_of(ops(imported, "graph.conv")[0].result) == (DYN, 8, 8, 8)


def test_static_import_is_unchanged_by_the_symbolic_path():
    dims = transformer_models.Dims(tokens=8, hidden=16, heads=2, ffn=32)
    model = transformer_models.bert(dims, layers=1, vocab=20)
    assert str(import_model(model).module) == str(import_model(model, symbolic=True).module)


# --- Refusals --------------------------------------------------------------------------------------------------


def test_constant_reshape_of_a_symbolic_batch_is_refused_naming_node_and_symbol():
    dims = transformer_models.Dims(tokens=8, hidden=16, heads=2, ffn=32)
    model = transformer_models.bert(dims, layers=1, vocab=20)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    expected = r"node '<unnamed node #6>' \(Reshape\).*symbols 'batch'.*reshapes \['batch', '8', '16'\]"
    with pytest.raises(ModelImportError, match=expected):
        import_model(model, symbolic=True)


def test_two_symbolic_sizes_off_their_axes_are_refused():
    """[batch*sequence, 8] -> [batch, sequence, 8]: neither copies its axis, and only one may be the rest."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "start", "end"], ["lead"]),
        helper.make_node("Concat", ["lead", "width"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "flat"], ["rows"]),
        helper.make_node("Reshape", ["rows", "target"], ["y"], name="unflatten"),
    ]
    constants = [
        numpy_helper.from_array(np.array([0], np.int64), "start"),
        numpy_helper.from_array(np.array([2], np.int64), "end"),
        numpy_helper.from_array(np.array([8], np.int64), "width"),
        numpy_helper.from_array(np.array([-1, 8], np.int64), "flat"),
    ]
    model = _model(nodes, [("x", ["batch", "sequence", 8])], "y", constants)
    with pytest.raises(ModelImportError, match=r"node 'unflatten' \(Reshape\).*symbols 'batch', 'sequence'"):
        import_model(model, symbolic=True)


def test_shape_values_into_an_unsupported_op_are_refused():
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Cast", ["shape"], ["sizes"], to=TensorProto.FLOAT, name="to_float"),
    ]
    model = _model(nodes, [("x", ["batch", 4])], "sizes", output_type=TensorProto.FLOAT)
    with pytest.raises(ModelImportError, match=r"node 'to_float' \(Cast\).*'batch'"):
        import_model(model, symbolic=True)


def _model(nodes, inputs, output, initializers=(), output_type=TensorProto.FLOAT) -> onnx.ModelProto:
    graph_proto = helper.make_graph(
        nodes,
        "symbolic",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs],
        [helper.make_tensor_value_info(output, output_type, None)],
        list(initializers),
    )
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 18)])
