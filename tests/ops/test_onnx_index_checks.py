"""Run-time indices out of range raise `IndexOutOfRangeError` naming the node and the range, as ONNX Runtime raises,
for Gather, GatherElements, GatherND, ScatterElements and ScatterND (`frontend/onnx_index_checks.py`); indices in
range (negative ones too) give ONNX Runtime's answer; saved models keep the check. Every opt level (conftest)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, import_model
from minimlc.runtime import load
from minimlc.runtime.session import IndexOutOfRangeError

ORT_ERRORS = ort.capi.onnxruntime_pybind11_state
RNG = np.random.default_rng(5)
DATA = RNG.standard_normal((3, 4)).astype(np.float32)


def _model(
    op: str, indices_shape: list[int], out_shape: list[int], indices_type: int = TensorProto.INT64, **attributes: object
) -> onnx.ModelProto:
    inputs = ["data", "indices"] + (["updates"] if op.startswith("Scatter") else [])
    values = [
        helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 4]),
        helper.make_tensor_value_info("indices", indices_type, indices_shape),
    ]
    if op.startswith("Scatter"):
        update_shape = indices_shape if op == "ScatterElements" else [*indices_shape[:-1], *[3, 4][indices_shape[-1] :]]
        values.append(helper.make_tensor_value_info("updates", TensorProto.FLOAT, update_shape))
    node = helper.make_node(op, inputs, ["y"], name=f"my_{op.lower()}", **attributes)
    graph = helper.make_graph([node], op, values, [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


CASES = {
    # op, indices shape, output shape, attributes, good indices, bad indices, the range in the message
    "Gather": ("Gather", [2], [2, 4], {"axis": 0}, [[-3, 2]], [[0, 3]], "[-3, 3)"),
    "Gather_axis1": ("Gather", [2, 2], [3, 2, 2], {"axis": 1}, [[[-4, 3], [0, 1]]], [[[0, -5], [1, 2]]], "[-4, 4)"),
    "GatherElements": (
        "GatherElements",
        [3, 2],
        [3, 2],
        {"axis": 1},
        [[[0, -1], [3, 2], [-4, 1]]],
        [[[0, 4], [1, 2], [0, 0]]],
        "[-4, 4)",
    ),
    "GatherND": ("GatherND", [2, 2], [2], {}, [[[2, 3], [-3, -4]]], [[[1, 1], [3, 0]]], "[-3, 3), [-4, 4)"),
    "ScatterElements": (
        "ScatterElements",
        [2, 2],
        [3, 4],
        {"axis": 0},
        [[[0, -1], [2, 1]]],
        [[[0, 1], [-4, 1]]],
        "[-3, 3)",
    ),
    "ScatterND": ("ScatterND", [2, 1], [3, 4], {}, [[[2], [-3]]], [[[1], [7]]], "[-3, 3)"),
}


def _feeds(op: str, indices: object, shape: list[int], dtype: type) -> dict[str, np.ndarray]:
    feeds = {"data": DATA, "indices": np.array(indices, dtype).reshape(shape)}
    if op == "ScatterElements":
        feeds["updates"] = RNG.standard_normal(shape).astype(np.float32)
    elif op == "ScatterND":
        feeds["updates"] = RNG.standard_normal((*shape[:-1], *DATA.shape[shape[-1] :])).astype(np.float32)
    return feeds


@pytest.mark.parametrize(
    ("case", "dtype"),
    [
        (case, dtype)
        for case in sorted(CASES)
        for dtype in (np.int64, np.int32)
        if dtype is np.int64 or "ND" not in case
    ],
    ids=lambda value: value if isinstance(value, str) else np.dtype(value).name,
)
def test_indices_in_range_match_onnxruntime_and_out_of_range_raise(case: str, dtype: type) -> None:
    op, shape, out_shape, attributes, good, bad, bounds = CASES[case]
    indices_type = TensorProto.INT64 if dtype is np.int64 else TensorProto.INT32
    model = _model(op, shape, out_shape, indices_type, **attributes)
    session = InferenceSession(model, cache=False)
    for indices in good:
        feeds = _feeds(op, indices, shape, dtype)
        (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
        (actual,) = session.run(None, feeds)
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)
    for indices in bad:
        feeds = _feeds(op, indices, shape, dtype)
        with pytest.raises((ORT_ERRORS.InvalidArgument, ORT_ERRORS.Fail)):
            ort.InferenceSession(model.SerializeToString()).run(None, feeds)
        with pytest.raises(IndexOutOfRangeError, match=rf"'my_{op.lower()}' \({op}\): indices must lie in ") as error:
            session.run(None, feeds)
        assert bounds in str(error.value)


def test_a_saved_model_keeps_the_check(tmp_path) -> None:
    op, shape, out_shape, attributes, good, bad, _ = CASES["Gather"]
    session = InferenceSession(_model(op, shape, out_shape, **attributes), cache=False)
    session.save(tmp_path / "gather.mlc")
    loaded = load(tmp_path / "gather.mlc")
    feeds = _feeds(op, good[0], shape, np.int64)
    np.testing.assert_array_equal(loaded.run(None, feeds)[0], session.run(None, feeds)[0])
    with pytest.raises(IndexOutOfRangeError, match=r"'my_gather' \(Gather\): indices must lie in \[-3, 3\)"):
        loaded.run(None, _feeds(op, bad[0], shape, np.int64))


def test_constant_indices_out_of_range_are_refused_at_import() -> None:
    model = _model("GatherElements", [3, 2], [3, 2], axis=1)
    model.graph.initializer.append(helper.make_tensor("indices", TensorProto.INT64, [3, 2], [0, 1, 2, 3, 4, 0]))
    with pytest.raises(ModelImportError, match=r"indices must lie in \[-4, 4\) \(axis 1 of extent 4\), got \[4\]"):
        import_model(model)


def test_each_run_time_check_is_one_returned_count() -> None:
    imported = import_model(_model("GatherND", [2, 2], [2]))
    assert imported.index_checks == [
        "node 'my_gathernd' (GatherND): indices must lie in [-3, 3), [-4, 4) (axes 0 to 1 of data [3, 4])"
    ]
    assert imported.computed_outputs[-1].name == "index_check0"
