"""Numerics of If, Loop, Scan, SequenceMap and the sequence and optional ops (resolved at import time: unrolled,
selected, kept as lists of graph values) against ONNX Runtime at O0 and O3, and their refusals: a run-time
trip count, branches of different shapes under a run-time condition, too many iterations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.backend import containers
from minimlc.backend import onnx_backend as backend
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError, UnsupportedOpsError
from minimlc.frontend.onnx_control import MAX_ITERATIONS
from minimlc.runtime import load
from minimlc.runtime.session import IndexOutOfRangeError

RNG = np.random.default_rng(23)
FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _floats(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    constants: Mapping[str, np.ndarray] | None = None,
    opset: int = 18,
) -> onnx.ModelProto:
    initializers = [onnx.numpy_helper.from_array(array, name) for name, array in (constants or {}).items()]
    graph = helper.make_graph(list(nodes), "control", list(inputs), list(outputs), initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
    for declared, output in zip(model.graph.output, inferred):
        if declared.type.HasField("tensor_type") and not declared.type.tensor_type.HasField("shape"):
            declared.CopyFrom(output)
    return model


def _check(model: onnx.ModelProto, feeds: Mapping[str, Any], *, native: bool = True) -> list[Any]:
    """Run `model` in ONNX Runtime and minimlc (at the test's opt level; sequence inputs flattened as the backend
    flattens them); outputs (and sequence outputs' elements) must match."""
    expected = ort.InferenceSession(model.SerializeToString()).run(None, dict(feeds))
    structures = {
        vi.name: containers.structure(vi.type, feeds[vi.name])
        for vi in model.graph.input
        if containers.is_container(vi)
    }
    flattened = containers.with_flattened_inputs(model, structures) if structures else model
    tensors = {name: value for name, value in feeds.items() if name not in structures}
    for name in structures:
        tensors.update(containers.flattened_feeds(name, feeds[name], optional=False))
    session = InferenceSession(flattened, cache=False)
    actual = session.run(None, tensors)
    assert (session.stats["kernels"] > 0) == native
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        got_items, want_items = (got, want) if isinstance(want, list) else ([got], [want])
        assert isinstance(got, list) == isinstance(want, list) and len(got_items) == len(want_items)
        for got_item, want_item in zip(got_items, want_items):
            assert got_item.dtype == want_item.dtype and got_item.shape == want_item.shape
            np.testing.assert_allclose(got_item, want_item, rtol=1e-5, atol=1e-6)
    return actual


def _tensor(name: str, element: int = FLOAT, shape: Sequence[int] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, element, shape)


def _output(name: str, rank: int, element: int = FLOAT) -> onnx.ValueInfoProto:
    """A graph output of `rank` symbolic dimensions."""
    return helper.make_tensor_value_info(name, element, [f"{name}_{axis}" for axis in range(rank)])


def _if_model(then_shape: Sequence[int] = (2, 3)) -> onnx.ModelProto:
    """y = cond ? x + w : x * x, the branches reading the outer scope."""
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["then_y"])], "then", [], [_tensor("then_y", FLOAT, None)]
    )
    if tuple(then_shape) != (2, 3):
        then_branch = helper.make_graph(
            [helper.make_node("ReduceSum", ["x", "axis"], ["then_y"])], "then", [], [_tensor("then_y")]
        )
    else_branch = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["else_y"])], "else", [], [_tensor("else_y")])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch)
    return _model(
        [node],
        [_tensor("cond", BOOL, []), _tensor("x", FLOAT, [2, 3])],
        [_output("y", 2)],
        {"w": _floats(2, 3), "axis": np.array([0], np.int64)},
    )


@pytest.mark.parametrize("condition", [True, False])
def test_if_with_a_run_time_condition_selects_both_branches(condition: bool) -> None:
    _check(_if_model(), {"cond": np.array(condition), "x": _floats(2, 3)})


@pytest.mark.parametrize("condition", [True, False])
def test_if_with_a_constant_condition_imports_the_taken_branch_only(condition: bool) -> None:
    model = _if_model(then_shape=(1, 3))  # the branches' shapes differ: fine, only one is imported
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array(condition), "cond"))
    del model.graph.input[0]
    _check(model, {"x": _floats(2, 3)})


def test_if_with_a_run_time_condition_and_branches_of_different_shapes_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"node .*\(If\): output 'y' has shape \(1, 3\) .* or \(2, 3\)"):
        InferenceSession(_if_model(then_shape=(1, 3)))


def _loop_model(
    trip_count: int | None, condition: str = "cond_in", scan: bool = True, rows: int = 6
) -> onnx.ModelProto:
    """y_i = y_{i-1} * 0.5 + x[i] (x of `rows` rows); scan output y_i + w; stops early when `condition` is
    `sum(y) < 3`."""
    nodes = [
        helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
        helper.make_node("Mul", ["y_in", "half"], ["decayed"]),
        helper.make_node("Add", ["decayed", "row"], ["y_out"]),
        helper.make_node("Add", ["y_out", "w"], ["scanned"]),
        helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
        helper.make_node("Less", ["total", "three"], ["small"]),
        helper.make_node("Identity", [condition], ["cond_out"]),
    ]
    outputs = [_tensor("cond_out", BOOL, []), _tensor("y_out", FLOAT, [3])] + ([_tensor("scanned")] if scan else [])
    body = helper.make_graph(
        nodes, "body", [_tensor("i", INT64, []), _tensor("cond_in", BOOL, []), _tensor("y_in", FLOAT, [3])], outputs
    )
    constants = {"half": np.array(0.5, np.float32), "three": np.array(3.0, np.float32), "w": _floats(3)}
    inputs = [_tensor("x", FLOAT, [rows, 3]), _tensor("y0", FLOAT, [3])]
    if trip_count is None:
        inputs.append(_tensor("M", INT64, []))
    else:
        constants["M"] = np.array(trip_count, np.int64)
    constants["cond"] = np.array(True)
    loop = helper.make_node("Loop", ["M", "cond", "y0"], ["y", *(["z"] if scan else [])], body=body)
    return _model([loop], inputs, [_output("y", 1)] + ([_output("z", 2)] if scan else []), constants)


@pytest.mark.parametrize("trip_count", [1, 4, 6])
def test_loop_with_a_constant_trip_count_is_unrolled(trip_count: int) -> None:
    _check(_loop_model(trip_count), {"x": _floats(6, 3), "y0": _floats(3)})


@pytest.mark.parametrize("scale", [0.1, 3.0])
def test_loop_with_a_run_time_condition_keeps_its_values_once_false(scale: float) -> None:
    model = _loop_model(6, condition="small", scan=False)
    _check(model, {"x": _floats(6, 3) * scale + scale, "y0": _floats(3)})


def _gather_if_model() -> onnx.ModelProto:
    """y = cond ? short[idx] : long[idx]: an index valid for one branch may be out of range for the other."""
    branches = [
        helper.make_graph(
            [helper.make_node("Gather", [table, "idx"], [f"{table}_y"])], table, [], [_tensor(f"{table}_y")]
        )
        for table in ("short", "long")
    ]
    node = helper.make_node("If", ["cond"], ["y"], then_branch=branches[0], else_branch=branches[1])
    inputs = [_tensor("cond", BOOL, []), _tensor("idx", INT64, [2])]
    return _model([node], inputs, [_output("y", 1)], {"short": _floats(3), "long": _floats(8)})


@pytest.mark.parametrize(("condition", "indices"), [(False, [5, -8]), (True, [2, -3]), (False, [7, 0])])
def test_an_index_out_of_range_only_in_the_untaken_branch_does_not_raise(condition: bool, indices: list[int]) -> None:
    _check(_gather_if_model(), {"cond": np.array(condition), "idx": np.array(indices, np.int64)})


def test_an_index_out_of_range_in_the_taken_branch_raises() -> None:
    session = InferenceSession(_gather_if_model(), cache=False)
    with pytest.raises(IndexOutOfRangeError, match=r"\(Gather\): indices must lie in \[-3, 3\)"):
        session.run(None, {"cond": np.array(True), "idx": np.array([5, 0], np.int64)})
    with pytest.raises(IndexOutOfRangeError, match=r"\(Gather\): indices must lie in \[-8, 8\)"):
        session.run(None, {"cond": np.array(False), "idx": np.array([8, 0], np.int64)})


def test_iterations_past_a_run_time_exit_do_not_raise() -> None:
    """x has 4 rows and the loop may run 6 iterations, so iteration 4 would read x[4]: with large x the loop stops
    after the first (sum(y) >= 3) and must not raise; with zeros it reaches iteration 4 and raises, as ONNX Runtime
    fails there."""
    model = _loop_model(6, condition="small", scan=False, rows=4)
    _check(model, {"x": np.full((4, 3), 5.0, np.float32), "y0": _floats(3)})
    session = InferenceSession(model, cache=False)
    with pytest.raises(IndexOutOfRangeError, match=r"the loop reaches iteration 4, where .*\(Gather\): indices \[4\]"):
        session.run(None, {"x": np.zeros((4, 3), np.float32), "y0": np.zeros(3, np.float32)})
    with pytest.raises(Exception):  # ONNX Runtime fails in that iteration too
        ort.InferenceSession(model.SerializeToString()).run(
            None, {"x": np.zeros((4, 3), np.float32), "y0": np.zeros(3, np.float32)}
        )


def test_loop_with_a_run_time_trip_count_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"\(Loop\): the trip count M is computed at run time"):
        InferenceSession(_loop_model(None))


def test_loop_with_too_many_iterations_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError, match=rf"\(Loop\): {MAX_ITERATIONS + 1} iterations: at most"):
        InferenceSession(_loop_model(MAX_ITERATIONS + 1))


def test_loop_with_a_run_time_condition_and_scan_outputs_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"\(Loop\): .* scan outputs have a data-dependent extent"):
        InferenceSession(_loop_model(6, condition="small"))


def _scan_body() -> onnx.GraphProto:
    """state += x_t * w; outputs the state and x_t - state."""
    nodes = [
        helper.make_node("Mul", ["x_t", "w"], ["scaled"]),
        helper.make_node("Add", ["s_in", "scaled"], ["s_out"]),
        helper.make_node("Sub", ["x_t", "s_out"], ["diff"]),
    ]
    inputs = [_tensor("s_in", FLOAT, [4]), _tensor("x_t", FLOAT, [4])]
    return helper.make_graph(nodes, "body", inputs, [_tensor("s_out"), _tensor("diff")])


@pytest.mark.parametrize(
    ("input_axis", "input_direction", "output_axis", "output_direction"),
    [(0, 0, 0, 0), (1, 1, 1, 0), (-1, 0, -1, 1), (0, 1, 1, 1)],
)
def test_scan(input_axis: int, input_direction: int, output_axis: int, output_direction: int) -> None:
    x_shape = [5, 4] if input_axis == 0 else [4, 5]
    scan = helper.make_node(
        "Scan",
        ["s0", "x"],
        ["s", "z"],
        body=_scan_body(),
        num_scan_inputs=1,
        scan_input_axes=[input_axis],
        scan_input_directions=[input_direction],
        scan_output_axes=[output_axis],
        scan_output_directions=[output_direction],
    )
    inputs = [_tensor("s0", FLOAT, [4]), _tensor("x", FLOAT, x_shape)]
    model = _model([scan], inputs, [_output("s", 1), _output("z", 2)], {"w": _floats(4)})
    _check(model, {"s0": _floats(4), "x": _floats(*x_shape)})


def test_scan_of_opset_8_runs_per_batch_element() -> None:
    scan = helper.make_node("Scan", ["", "s0", "x"], ["s", "z"], body=_scan_body(), num_scan_inputs=1, directions=[1])
    inputs = [_tensor("s0", FLOAT, [2, 4]), _tensor("x", FLOAT, [2, 5, 4])]
    model = _model([scan], inputs, [_output("s", 2), _output("z", 3)], {"w": _floats(4)}, opset=8)
    _check(model, {"s0": _floats(2, 4), "x": _floats(2, 5, 4)})


def _sequence(name: str, element: int = FLOAT) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(element, None)))


def test_sequence_ops_rearrange_native_tensors() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
        helper.make_node("SequenceInsert", ["parts", "v", "front"], ["inserted"]),
        helper.make_node("SequenceErase", ["inserted", "second"], ["erased"]),
        helper.make_node("SequenceAt", ["erased", "last"], ["picked"]),
        helper.make_node("Relu", ["picked"], ["relu"]),
        helper.make_node("ConcatFromSequence", ["erased"], ["joined"], axis=1),
        helper.make_node("SequenceLength", ["erased"], ["length"]),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
    ]
    constants = {
        "sizes": np.array([2, 1, 3], np.int64),
        "front": np.array(0, np.int64),
        "second": np.array(1, np.int64),
        "last": np.array(-1, np.int64),
    }
    outputs = [_output("relu", 2), _output("joined", 2), _output("length", 0, INT64), _output("stacked", 2)]
    outputs.append(_sequence("erased"))
    model = _model(nodes, [_tensor("x", FLOAT, [3, 6]), _tensor("v", FLOAT, [3, 2])], outputs, constants)
    _check(model, {"x": _floats(3, 6), "v": _floats(3, 2)})


def test_sequence_inputs_and_sequence_map() -> None:
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["sum", "w"], ["out"])],
        "body",
        [_tensor("a", FLOAT, None), _tensor("b", FLOAT, None)],
        [_tensor("out", FLOAT, None)],
    )
    node = helper.make_node("SequenceMap", ["xs", "ys"], ["zs"], body=body)
    model = _model([node], [_sequence("xs"), _sequence("ys")], [_sequence("zs")], {"w": np.float32(2.0).reshape(())})
    shapes = [(2, 3), (4,), (1, 5)]
    _check(model, {"xs": [_floats(*s) for s in shapes], "ys": [_floats(*s) for s in shapes]})


@pytest.mark.parametrize("present", [True, False])
def test_optionals(present: bool) -> None:
    """y = has(maybe) ? -get(maybe) : relu(x), maybe holding v or nothing."""
    then_branch = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["maybe"], ["value"]), helper.make_node("Neg", ["value"], ["then_y"])],
        "then",
        [],
        [_tensor("then_y")],
    )
    else_branch = helper.make_graph([helper.make_node("Relu", ["x"], ["else_y"])], "else", [], [_tensor("else_y")])
    optional = (
        helper.make_node("Optional", ["v"], ["maybe"])
        if present
        else helper.make_node("Optional", [], ["maybe"], type=helper.make_tensor_type_proto(FLOAT, [4]))
    )
    nodes = [
        optional,
        helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
        helper.make_node("If", ["has"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    inputs = [_tensor("x", FLOAT, [4]), _tensor("v", FLOAT, [4])]
    _check(_model(nodes, inputs, [_output("y", 1), _output("has", 0, BOOL)]), {"x": _floats(4), "v": _floats(4)})


def test_unsupported_ops_inside_subgraphs_are_listed_before_importing() -> None:
    body = helper.make_graph(
        [
            helper.make_node("Frobnicate", ["y_in"], ["y_out"], domain="com.example"),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        "body",
        [_tensor("i", INT64, []), _tensor("c_in", BOOL, []), _tensor("y_in", FLOAT, [3])],
        [_tensor("c_out", BOOL, []), _tensor("y_out", FLOAT, [3])],
    )
    loop = helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)
    graph = helper.make_graph(
        [loop], "g", [_tensor("y0", FLOAT, [3])], [_output("y", 1)], [onnx.numpy_helper.from_array(np.int64(2), "M")]
    )
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("com.example", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=8)
    with pytest.raises(UnsupportedOpsError, match=r"com.example.Frobnicate \(opset 1\)"):
        InferenceSession(model)


def test_a_sequence_given_to_a_tensor_op_is_refused() -> None:
    nodes = [helper.make_node("SequenceConstruct", ["x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "g", [_tensor("x", FLOAT, [3])], [_output("y", 1)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)  # invalid: no inference
    with pytest.raises(ModelImportError, match=r"\(Relu\): input 's' is a sequence or an optional, not a tensor"):
        InferenceSession(model)


def test_a_saved_session_returns_its_sequence_outputs_as_lists(tmp_path: Path) -> None:
    nodes = [helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0)]
    model = _model(nodes, [_tensor("x", FLOAT, [2, 3])], [_sequence("parts")])
    session = InferenceSession(model, cache=False)
    assert [info.name for info in session.get_outputs()] == ["parts[0]", "parts[1]"]
    session.save(tmp_path / "split.mlc")
    x = _floats(2, 3)
    for loaded in (session, load(tmp_path / "split.mlc")):
        (parts,) = loaded.run(None, {"x": x})
        assert isinstance(parts, list) and len(parts) == 2
        np.testing.assert_array_equal(parts[1], x[1:])


def _range_model() -> onnx.ModelProto:
    """Range's function body: M = ceil((limit - start) / delta) iterations of y_i = start + i * delta."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Add", ["previous", "delta"], ["current"]),
            helper.make_node("Identity", ["previous"], ["value"]),
        ],
        "body",
        [_tensor("i", INT64, []), _tensor("c_in", BOOL, []), _tensor("previous", FLOAT, [])],
        [_tensor("c_out", BOOL, []), _tensor("current", FLOAT, []), _tensor("value", FLOAT, [])],
    )
    nodes = [
        helper.make_node("Sub", ["limit", "start"], ["extent"]),
        helper.make_node("Div", ["extent", "delta"], ["steps"]),
        helper.make_node("Ceil", ["steps"], ["rounded"]),
        helper.make_node("Cast", ["rounded"], ["M"], to=INT64),
        helper.make_node("Loop", ["M", "", "start"], ["last", "y"], body=body),
    ]
    inputs = [_tensor(name, FLOAT, []) for name in ("start", "limit", "delta")]
    return _model(nodes, inputs, [_output("y", 1)])


@pytest.mark.parametrize(("start", "limit", "delta"), [(1.0, 5.0, 0.5), (10.0, 2.0, -3.0)])
def test_the_backend_binds_the_inputs_a_trip_count_is_computed_from(start: float, limit: float, delta: float) -> None:
    rep = backend.prepare(_range_model())
    assert rep.bound_inputs == rep.fed_inputs == ["start", "limit", "delta"]
    feeds = [np.array(value, np.float32) for value in (start, limit, delta)]
    (y,) = rep.run(feeds)
    np.testing.assert_allclose(y, np.arange(start, limit, delta, dtype=np.float32))
    assert all(session.stats["kernels"] > 0 for session in rep.sessions.values())


def test_a_trip_count_from_a_shape_binds_nothing() -> None:
    model = _range_model()
    shape = [helper.make_node("Shape", ["x"], ["dims"]), helper.make_node("ReduceSum", ["dims"], ["M"], keepdims=0)]
    nodes = [*shape, model.graph.node[-1]]
    inputs = [_tensor("x", FLOAT, [2, 3]), _tensor("start", FLOAT, []), _tensor("delta", FLOAT, [])]
    rep = backend.prepare(_model(nodes, inputs, [_output("y", 1)]))
    assert rep.bound_inputs == []


def test_a_loop_of_no_iteration_returns_its_initial_values() -> None:
    _check(_loop_model(0, scan=False), {"x": _floats(6, 3), "y0": _floats(3)})


def test_a_loop_of_no_iteration_with_scan_outputs_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"\(Loop\): the loop runs no iteration"):
        InferenceSession(_loop_model(0))


def test_an_empty_sequence_filled_and_joined() -> None:
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=FLOAT),
        helper.make_node("SequenceInsert", ["empty", "x"], ["one"]),
        helper.make_node("SequenceInsert", ["one", "y", "front"], ["two"]),
        helper.make_node("ConcatFromSequence", ["two"], ["joined"], axis=0),
        helper.make_node("SequenceLength", ["two"], ["length"]),
    ]
    inputs = [_tensor("x", FLOAT, [2, 3]), _tensor("y", FLOAT, [1, 3])]
    outputs = [_output("joined", 2), _output("length", 0, INT64)]
    _check(_model(nodes, inputs, outputs, {"front": np.array(0, np.int64)}), {"x": _floats(2, 3), "y": _floats(1, 3)})


def test_an_op_without_converter_folds_on_the_iteration_number() -> None:
    """Range has no converter: on the iteration number, a compile-time constant, it folds."""
    body = helper.make_graph(
        [
            helper.make_node("Range", ["zero", "i", "one"], ["steps"]),
            helper.make_node("Cast", ["steps"], ["floats"], to=FLOAT),
            helper.make_node("ReduceSum", ["floats"], ["total"], keepdims=0),
            helper.make_node("Add", ["y_in", "total"], ["y_out"]),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        "body",
        [_tensor("i", INT64, []), _tensor("c_in", BOOL, []), _tensor("y_in", FLOAT, [3])],
        [_tensor("c_out", BOOL, []), _tensor("y_out", FLOAT, [3])],
    )
    loop = helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)
    constants = {"M": np.array(4, np.int64), "zero": np.array(0, np.int64), "one": np.array(1, np.int64)}
    _check(_model([loop], [_tensor("y0", FLOAT, [3])], [_output("y", 1)], constants), {"y0": _floats(3)})
