"""Models with symbolic dimensions run from one `InferenceSession` without `input_shapes` (issue #46): the session
reports the symbols as ONNX Runtime does and checks each feed against them. A model whose ops all take run-time
dimensions compiles once (`tests/runtime/test_symbolic_compile.py` has the rest of that path); one that does not
(here Hardmax, which builds a `graph.one_hot`) compiles one specialisation per distinct input shapes
(`driver/specializations.py`). Both match ONNX Runtime at every shape."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from dynamic_transformers import bert
from onnx import TensorProto, helper, numpy_helper
from transformer_models import Dims

from minimlc import InferenceSession
from minimlc.driver import specializations
from minimlc.frontend.onnx import import_model
from minimlc.frontend.onnx_errors import ModelImportError, UnsupportedOpsError
from minimlc.runtime.session import IndexOutOfRangeError, InvalidInputError

RTOL, ATOL = 1e-4, 1e-5


FALLBACK_OP = "Hardmax"
"""An op whose import builds an op that takes only static shapes: its models compile per input shapes."""


def projection_model(op: str = "Relu") -> onnx.ModelProto:
    """out = op(x @ w) + m: x [batch, seq, 16], m [batch, seq, 8] share both symbols."""
    weight = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["y"]),
            helper.make_node(op, ["y"], ["z"]),
            helper.make_node("Add", ["z", "m"], ["out"]),
        ],
        "projection",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, ["batch", "seq", 8]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 8])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def projection_feed(batch: int, seq: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((batch, seq, 16)).astype(np.float32),
        "m": rng.standard_normal((batch, seq, 8)).astype(np.float32),
    }


@pytest.fixture(scope="module")
def projection() -> InferenceSession:
    session = InferenceSession(projection_model(FALLBACK_OP), num_threads=1)
    assert "'graph.one_hot' takes only static shapes" in str(session.stats["symbolic_fallback"])
    return session


def test_inputs_and_outputs_report_the_symbols(projection: InferenceSession) -> None:
    oracle = ort.InferenceSession(projection_model(FALLBACK_OP).SerializeToString())
    assert [(i.name, list(i.shape)) for i in projection.get_inputs()] == [
        (i.name, i.shape) for i in oracle.get_inputs()
    ]
    assert [list(o.shape) for o in projection.get_outputs()] == [["batch", "seq", 8]]
    assert projection.get_inputs()[0].type == "tensor(float)"


@pytest.mark.slow
def test_bert_with_dynamic_axes_runs_at_every_shape_from_one_compile() -> None:
    """The dynamo export's form: shapes computed from the inputs' own, position and token type ids cut from buffers
    at the run's length, an attention mask; (1, 32), (2, 77), (4, 77) and (1, 32) again against ONNX Runtime, all
    from the one compile with run-time extents."""
    model = bert(Dims(tokens=96, hidden=32, heads=4, ffn=64), layers=1, vocab=100)
    session = InferenceSession(model, num_threads=1)
    oracle = ort.InferenceSession(model.SerializeToString())
    rng = np.random.default_rng(1)
    for batch, sequence in [(1, 32), (2, 77), (4, 77), (1, 32)]:
        mask = np.ones((batch, sequence), np.int64)
        mask[-1, sequence - 5 :] = 0  # padding at the end of the last row
        feed = {"input_ids": rng.integers(0, 100, (batch, sequence)), "attention_mask": mask}
        (actual,) = session.run(None, feed)
        np.testing.assert_allclose(actual, oracle.run(None, feed)[0], rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1
    assert "symbolic_fallback" not in session.stats


def test_each_distinct_shape_compiles_once(projection: InferenceSession) -> None:
    oracle = ort.InferenceSession(projection_model(FALLBACK_OP).SerializeToString())
    before = projection.stats["compiles"]
    for batch, seq in [(1, 3), (2, 5), (1, 3), (3, 1)]:
        feed = projection_feed(batch, seq)
        np.testing.assert_allclose(projection.run(None, feed)[0], oracle.run(None, feed)[0], rtol=RTOL, atol=ATOL)
    assert projection.stats["compiles"] - before <= 3
    assert {"x": (1, 3, 16), "m": (1, 3, 8)} in projection.compiled_shapes()


@pytest.mark.parametrize(
    ("feed", "message"),
    [
        (
            {"x": np.zeros((1, 3, 16), np.float32), "m": np.zeros((1, 4, 8), np.float32)},
            r"^input 'm' axis 1 is dimension 'seq' = 4, but input 'x' axis 1 gave it 3: inputs that share a "
            r"dimension must agree$",
        ),
        (
            {"x": np.zeros((1, 3, 15), np.float32), "m": np.zeros((1, 3, 8), np.float32)},
            r"^input 'x' axis 2: expected size 16 \[batch, seq, 16\], got 15$",
        ),
        (
            {"x": np.zeros((3, 16), np.float32), "m": np.zeros((1, 3, 8), np.float32)},
            r"^input 'x': expected rank 3 \[batch, seq, 16\], got shape \(3, 16\)$",
        ),
        ({"x": np.zeros((1, 3, 16), np.float32)}, r"missing input\(s\) 'm'"),
    ],
)
def test_feeds_that_contradict_the_symbols_are_refused_before_compiling(
    projection: InferenceSession, feed: dict[str, np.ndarray], message: str
) -> None:
    before = projection.stats["compiles"]
    with pytest.raises(InvalidInputError, match=message):
        projection.run(None, feed)
    assert projection.stats["compiles"] == before


def test_a_wrong_dtype_is_refused_by_name(projection: InferenceSession) -> None:
    feed = {**projection_feed(1, 2), "x": np.zeros((1, 2, 16), np.float64)}
    with pytest.raises(InvalidInputError, match=r"input 'x': expected dtype float32"):
        projection.run(None, feed)


def test_input_shapes_fixing_every_symbol_compiles_once_at_construction() -> None:
    session = InferenceSession(projection_model(), input_shapes={"x": [2, 3, 16], "m": [2, 3, 8]})
    assert session.get_inputs()[0].shape == (2, 3, 16)
    assert session.stats["compiles"] == 1
    with pytest.raises(InvalidInputError, match=r"expected shape \(2, 3, 16\)"):
        session.run(None, projection_feed(1, 3))


def test_unsupported_ops_are_named_at_construction() -> None:
    with pytest.raises(UnsupportedOpsError, match="Bernoulli"):
        InferenceSession(projection_model("Bernoulli"))


def test_save_and_profiling_need_fixed_shapes(projection: InferenceSession, tmp_path) -> None:
    with pytest.raises(ValueError, match=r"symbolic dimensions: .* save a session with fixed shapes"):
        projection.save(tmp_path / "x.mlc")
    assert not (tmp_path / "x.mlc").exists()
    with pytest.raises(ValueError, match="enable_profiling needs fixed input shapes"):
        InferenceSession(projection_model(FALLBACK_OP), enable_profiling=True)


def test_an_input_of_unknown_rank_still_needs_input_shapes() -> None:
    model = projection_model()
    model.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(ModelImportError, match=r"input 'x' has an unknown rank; pass input_shapes"):
        InferenceSession(model)


def test_with_weights_and_with_num_threads_apply_to_every_specialisation(projection: InferenceSession) -> None:
    feed = projection_feed(2, 3)
    weight = numpy_helper.to_array(projection_model().graph.initializer[0])
    store = import_model(projection_model(FALLBACK_OP), {"x": [2, 3, 16], "m": [2, 3, 8]}).weights
    doubled = projection.with_weights({**store, "w": 2 * weight})
    product = feed["x"] @ (2 * weight)
    hardmax = (product == product.max(axis=-1, keepdims=True)).astype(np.float32)
    np.testing.assert_allclose(doubled.run(None, feed)[0], hardmax + feed["m"], rtol=RTOL, atol=ATOL)
    two = projection.with_num_threads(2)
    assert two.num_threads == 2
    np.testing.assert_array_equal(two.run(None, feed)[0], projection.run(None, feed)[0])


def test_least_recently_used_specialisations_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specializations, "LIMIT", 2)
    session = InferenceSession(projection_model(FALLBACK_OP), num_threads=1)
    for seq in (1, 2, 1, 3):
        session.run(None, projection_feed(1, seq))
    assert [shapes["x"][1] for shapes in session.compiled_shapes()] == [1, 3]
    assert session.stats["compiles"] == 3


def test_an_index_into_a_run_time_axis_falls_back_and_still_checks_its_range() -> None:
    """GatherElements' index check compares with a constant extent: along a run-time axis the symbolic import
    refuses the node (by name), and the per-shape compile checks the indices against each shape's extent."""
    graph = helper.make_graph(
        [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1, name="pick")],
        "gather",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n"]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = InferenceSession(model, num_threads=1)
    assert session.stats["symbolic_fallback"] == (
        "the importer refused: node 'pick' (GatherElements): indices into axis 1, whose extent is known only at "
        "run time"
    )
    oracle = ort.InferenceSession(model.SerializeToString())
    for n in (5, 4):
        feed = {"x": np.random.default_rng(n).random((2, n), np.float32), "i": np.array([[0, 3, 2], [1, -1, 3]])}
        np.testing.assert_array_equal(session.run(None, feed)[0], oracle.run(None, feed)[0])
    with pytest.raises(IndexOutOfRangeError, match=r"indices must lie in \[-4, 4\)"):
        session.run(None, {"x": np.zeros((2, 4), np.float32), "i": np.array([[0, 4, 2], [1, 1, 3]])})
