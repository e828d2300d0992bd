"""Run-time integer and bool tensors through InferenceSession: token ids through an embedding Gather are computed by
native code (never folded at import time), one session answers for any ids, int and bool outputs come back with
their dtype, and inputs of the wrong dtype or shape are refused before native code runs. Checked against ONNX
Runtime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.runtime import InvalidInputError, load
from minimlc.runtime.session import IndexOutOfRangeError

RNG = np.random.default_rng(17)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "ids", inputs, outputs, [numpy_helper.from_array(array, name) for name, array in weights.items()]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _embedding_model() -> onnx.ModelProto:
    """ids [2, 6] -> Gather from a [40, 8] table -> scale and Tanh: the output depends on the ids' values."""
    table = RNG.standard_normal((40, 8)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["embedded"]),
        helper.make_node("Mul", ["embedded", "scale"], ["scaled"]),
        helper.make_node("Tanh", ["scaled"], ["y"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 8])],
        {"table": table, "scale": np.array(0.5, np.float32)},
    )


def _bert_embeddings(vocab: int = 1000, hidden: int = 256, sequence: int = 128) -> onnx.ModelProto:
    """BERT's embedding front as the exporter writes it: word Gather of the ids, position ids from a constant Range
    sliced to the sequence, position Gather, Add."""
    nodes = [
        helper.make_node("Gather", ["word_embeddings", "input_ids"], ["words"]),
        helper.make_node("Slice", ["position_ids", "zero", "length", "one_axis"], ["positions"]),
        helper.make_node("Gather", ["position_embeddings", "positions"], ["placed"]),
        helper.make_node("Add", ["words", "placed"], ["embeddings"]),
    ]
    weights = {
        "word_embeddings": RNG.standard_normal((vocab, hidden)).astype(np.float32),
        "position_embeddings": RNG.standard_normal((512, hidden)).astype(np.float32),
        "position_ids": np.arange(512, dtype=np.int64).reshape(1, 512),
        "zero": np.array([0], np.int64),
        "length": np.array([sequence], np.int64),
        "one_axis": np.array([1], np.int64),
    }
    return _model(
        nodes,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, sequence])],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, [1, sequence, hidden])],
        weights,
    )


def _expected(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString()).run(None, feeds)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_one_session_computes_the_output_of_any_ids(opt_level: int) -> None:
    model = _embedding_model()
    session = InferenceSession(model, opt_level=opt_level, cache=False)
    assert session.stats["kernels"] > 0
    assert session.get_inputs()[0].dtype == np.int64
    for ids in (np.arange(12, dtype=np.int64).reshape(2, 6), RNG.integers(-40, 40, (2, 6)).astype(np.int64)):
        (actual,) = session.run(None, {"ids": ids})
        (expected,) = _expected(model, {"ids": ids})
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_bert_embedding_front(opt_level: int) -> None:
    model = _bert_embeddings()
    session = InferenceSession(model, opt_level=opt_level, cache=False)
    assert session.stats["kernels"] > 0
    for seed in (1, 2):
        ids = np.random.default_rng(seed).integers(0, 1000, (1, 128)).astype(np.int64)
        (actual,) = session.run(None, {"input_ids": ids})
        (expected,) = _expected(model, {"input_ids": ids})
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_out_of_range_ids_raise() -> None:
    """As ONNX Runtime does: an id past either end of the table is an error naming the Gather and its range."""
    session = InferenceSession(_embedding_model(), cache=False)
    for ids in (np.array([[40] + [0] * 5] * 2, np.int64), np.full((2, 6), -41, np.int64)):
        with pytest.raises(IndexOutOfRangeError, match=r"\(Gather\): indices must lie in \[-40, 40\)"):
            session.run(None, {"ids": ids})


def test_int_and_bool_outputs_keep_their_dtypes_through_save_and_load(tmp_path) -> None:
    nodes = [
        helper.make_node("Add", ["ids", "ids"], ["doubled"]),
        helper.make_node("Greater", ["doubled", "limit"], ["large"]),
        helper.make_node("Cast", ["large"], ["counted"], to=TensorProto.INT32),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [5])],
        [
            helper.make_tensor_value_info("doubled", TensorProto.INT64, [5]),
            helper.make_tensor_value_info("large", TensorProto.BOOL, [5]),
            helper.make_tensor_value_info("counted", TensorProto.INT32, [5]),
        ],
        {"limit": np.array(4, np.int64)},
    )
    ids = np.array([-3, 0, 2, 3, 9], np.int64)
    session = InferenceSession(model, cache=False)
    assert [info.dtype for info in session.get_outputs()] == [np.int64, np.bool_, np.int32]
    path = tmp_path / "ints.mlc"
    session.save(path)
    for runner in (session, load(path)):
        actual = runner.run(None, {"ids": ids})
        for got, want in zip(actual, _expected(model, {"ids": ids})):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_the_compile_cache_keeps_typed_signatures(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_CACHE", "1")
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path))
    model = _embedding_model()
    ids = np.arange(12, dtype=np.int64).reshape(2, 6)
    first = InferenceSession(model, cache=True).run(None, {"ids": ids})
    again = InferenceSession(model, cache=True)
    assert again.stats["cache_hit"] == 1
    assert again.get_inputs()[0].dtype == np.int64
    np.testing.assert_array_equal(again.run(None, {"ids": ids})[0], first[0])


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (np.zeros((2, 6), np.int32), r"input 'ids': expected dtype int64 \(tensor\(int64\)\), got int32"),
        (np.zeros((2, 6), np.float32), r"input 'ids': expected dtype int64 \(tensor\(int64\)\), got float32"),
        (np.zeros((2, 6), np.bool_), r"input 'ids': expected dtype int64 \(tensor\(int64\)\), got bool"),
        (np.zeros((6, 2), np.int64), r"input 'ids': expected shape \(2, 6\), got \(6, 2\)"),
    ],
)
def test_inputs_of_another_dtype_or_shape_are_refused(given: np.ndarray, message: str) -> None:
    session = InferenceSession(_embedding_model(), cache=False)
    with pytest.raises(InvalidInputError, match=message):
        session.run(None, {"ids": given})


def test_bool_input_is_refused_an_int_array() -> None:
    model = _model(
        [helper.make_node("Not", ["mask"], ["y"])],
        [helper.make_tensor_value_info("mask", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [3])],
        {},
    )
    session = InferenceSession(model, cache=False)
    np.testing.assert_array_equal(session.run(None, {"mask": np.array([True, False, True])})[0], [False, True, False])
    with pytest.raises(InvalidInputError, match=r"input 'mask': expected dtype bool \(tensor\(bool\)\), got int64"):
        session.run(None, {"mask": np.array([1, 0, 1])})
