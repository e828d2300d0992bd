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
from minimlc.frontend.onnx_symbolic_reshape import Step, reshape_spec, reshape_steps
from minimlc.lowering.abi import input_symbols_of

sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
import dynamic_decoders
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


# --- Dynamo export forms ------------------------------------------------------------------------------------------


def test_reshape_steps_move_symbolic_sizes_only_past_size_1_axes():
    steps = reshape_steps((sequence, sequence), (1, 1, sequence, sequence))
    assert [(step.shape, step.perm) for step in steps] == [
        ((sequence, sequence, 1, 1, 1), None),
        ((1, 1, sequence, sequence, 1), (2, 3, 0, 1, 4)),
        ((1, 1, sequence, sequence), None),
    ]
    heads = reshape_steps((batch * 4, sequence, sequence), (batch, 4, sequence, sequence))
    assert heads[-1].shape == (batch, 4, sequence, sequence)
    assert reshape_spec(heads[-2].shape, heads[-1].shape) == [-1, 4, 0, 0]
    assert reshape_steps((batch, sequence, 8), (batch * sequence, 8)) == [Step((batch * sequence, 8))]
    assert reshape_steps((batch * sequence, 8), (batch, sequence, 8)) is None


def test_unsqueeze_of_a_square_mask_is_reshape_transpose_reshape():
    nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["y"])]
    model = _model(nodes, [("x", ["sequence", "sequence"])], "y", [numpy_helper.from_array(np.array([0, 1]), "axes")])
    imported = import_model(model, symbolic=True)
    assert [list(op.shape.get_values()) for op in ops(imported, "graph.reshape")] == [[0, 0, 1, 1, 1], [1, 1, 0, 0]]
    assert [list(op.perm.get_values()) for op in ops(imported, "graph.transpose")] == [[2, 3, 0, 1, 4]]
    assert imported.symbolic_dims["y"] == (1, 1, sequence, sequence)


def test_expand_to_abs_of_a_batch_and_minus_ones_broadcasts_to_the_batch():
    """torchlib's expand(batch, -1, -1): Expand to Abs(Concat(Shape(x)[0:1], [-1, -1]))."""
    nodes = [
        helper.make_node("Shape", ["x"], ["batch"], start=0, end=1),
        helper.make_node("Concat", ["batch", "keep"], ["sizes"], axis=0),
        helper.make_node("Abs", ["sizes"], ["shape"]),
        helper.make_node("Expand", ["token", "shape"], ["tokens"]),
        helper.make_node("Concat", ["tokens", "x"], ["y"], axis=1),
    ]
    constants = [
        numpy_helper.from_array(np.array([-1, -1], np.int64), "keep"),
        numpy_helper.from_array(np.ones((1, 1, 8), np.float32), "token"),
    ]
    imported = import_model(_model(nodes, [("x", ["batch", 4, 8])], "y", constants), symbolic=True)
    assert imported.symbolic_dims["y"] == (batch, 5, 8)


def test_conv1d_view_addmm_view_runs_the_product_on_the_unflattened_value():
    """GPT-2's Conv1D: Reshape to [-1, 8], Gemm, Reshape to Concat(Shape(x)[:-1], [16]) -> one graph.matmul of x
    [batch, sequence, 8] and the bias added, no split of batch*sequence."""
    nodes = [
        helper.make_node("Reshape", ["x", "flat"], ["rows"]),
        helper.make_node("Gemm", ["rows", "w", "bias"], ["product"]),
        helper.make_node("Shape", ["x"], ["lead"], start=0, end=-1),
        helper.make_node("Concat", ["lead", "width"], ["size_out"], axis=0),
        helper.make_node("Reshape", ["product", "size_out"], ["y"]),
    ]
    constants = [
        numpy_helper.from_array(np.array([-1, 8], np.int64), "flat"),
        numpy_helper.from_array(np.ones((8, 16), np.float32), "w"),
        numpy_helper.from_array(np.ones(16, np.float32), "bias"),
        numpy_helper.from_array(np.array([16], np.int64), "width"),
    ]
    imported = import_model(_model(nodes, [("x", ["batch", "sequence", 8])], "y", constants), symbolic=True)
    (matmul,) = ops(imported, "graph.matmul")
    assert graph.shape_of(matmul.result) == (DYN, DYN, 16)
    assert not ops(imported, "graph.gemm")
    assert imported.symbolic_dims["y"] == (batch, sequence, 16)


def test_gathernd_of_a_per_row_position_is_a_take_at_run_time_strides():
    """CLIP's pooling: hidden[arange(batch), ids.argmax(-1)] as GatherND of [batch, sequence, 8]."""
    imported = import_model(dynamic_decoders.clip_text(transformer_models.Dims(16, 8, 2, 16), 1, 20), symbolic=True)
    assert imported.symbolic_dims["pooler_output"] == (batch, 8)
    assert not ops(imported, "graph.gather_nd")
    assert any(graph.shape_of(op.result) == (DYN, 8) for op in ops(imported, "graph.take"))


# --- Refusals --------------------------------------------------------------------------------------------------


def test_constant_reshape_of_a_symbolic_batch_is_refused_naming_node_and_symbol():
    dims = transformer_models.Dims(tokens=8, hidden=16, heads=2, ffn=32)
    model = transformer_models.bert(dims, layers=1, vocab=20)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    expected = r"node '<unnamed node #6>' \(Reshape\).*symbols 'batch'.*reshapes \['batch', '8', '16'\]"
    with pytest.raises(ModelImportError, match=expected):
        import_model(model, symbolic=True)


def test_two_symbolic_sizes_off_their_axes_are_refused():
    """[batch*sequence, 8] -> [batch, sequence, 8]: two symbolic sizes the input lacks, and only one may be the rest
    (a Relu between the reshapes: the flattened value's origin is not known)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "start", "end"], ["lead"]),
        helper.make_node("Concat", ["lead", "width"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "flat"], ["flat_rows"]),
        helper.make_node("Relu", ["flat_rows"], ["rows"]),
        helper.make_node("Reshape", ["rows", "target"], ["y"], name="unflatten"),
    ]
    constants = [
        numpy_helper.from_array(np.array([0], np.int64), "start"),
        numpy_helper.from_array(np.array([2], np.int64), "end"),
        numpy_helper.from_array(np.array([8], np.int64), "width"),
        numpy_helper.from_array(np.array([-1, 8], np.int64), "flat"),
    ]
    model = _model(nodes, [("x", ["batch", "sequence", 8])], "y", constants)
    expected = r"node 'unflatten' \(Reshape\).*symbols 'batch', 'sequence'.*more than one symbolic size"
    with pytest.raises(ModelImportError, match=expected):
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
