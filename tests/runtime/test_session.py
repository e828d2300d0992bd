"""InferenceSession: the MLP end to end, ONNX Runtime's API surface, and every input-validation error."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedOpsError
from minimlc.runtime import InvalidInputError, load

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from make_mlp import build_mlp

RTOL, ATOL = 1e-5, 1e-6


def reference_in_float64(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """onnx.reference on a float64 copy of the float32 `model`: the exact result to compare float32 outputs with.

    In float32 the reference's own matmul error (OpenBLAS, which blocks differently with its thread count) reaches
    1.7e-6 on the MLP's outputs, beyond the tolerance, while minimlc's stays under 1.4e-6 of the exact value."""
    double = onnx.ModelProto()
    double.CopyFrom(model)
    for tensor in double.graph.initializer:
        tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name))
    for value in (*double.graph.input, *double.graph.output):
        value.type.tensor_type.elem_type = TensorProto.DOUBLE
    (output,) = ReferenceEvaluator(double).run(None, {double.graph.input[0].name: x.astype(np.float64)})
    return output


@pytest.fixture(scope="module")
def mlp() -> onnx.ModelProto:
    return build_mlp(batch=1)


@pytest.fixture(scope="module")
def mlp_session(mlp: onnx.ModelProto) -> InferenceSession:
    return InferenceSession(mlp)


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_mlp_matches_reference(batch: int) -> None:
    model = build_mlp(batch=batch)
    x = np.random.default_rng(batch).standard_normal((batch, 784)).astype(np.float32)
    expected = reference_in_float64(model, x)
    (actual,) = InferenceSession(model).run(None, {"input": x})
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def test_symbolic_batch_is_fixed_by_input_shapes() -> None:
    model = build_mlp(batch="N")
    assert InferenceSession(model).get_inputs()[0].shape == ("N", 784)  # compiled per shape at run time
    session = InferenceSession(model, input_shapes={"input": [5, 784]})
    assert session.get_inputs()[0].shape == (5, 784)
    x = np.ones((5, 784), np.float32)
    expected = reference_in_float64(model, x)
    np.testing.assert_allclose(session.run(None, {"input": x})[0], expected, rtol=RTOL, atol=ATOL)


def test_input_shapes_cannot_change_a_static_batch() -> None:
    message = r"^input 'input' is given shape \[4, 784\], but the model declares \[1, 784\]: only symbolic"
    with pytest.raises(ModelImportError, match=message):
        InferenceSession(build_mlp(batch=1), input_shapes={"input": [4, 784]})


def test_session_from_path_and_bytes(mlp: onnx.ModelProto, tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp, path)
    x = np.zeros((1, 784), np.float32)
    from_path = InferenceSession(str(path)).run(None, {"input": x})[0]
    from_bytes = InferenceSession(mlp.SerializeToString()).run(None, {"input": x})[0]
    np.testing.assert_array_equal(from_path, from_bytes)


def test_signature_like_onnxruntime(mlp_session: InferenceSession) -> None:
    (inp,) = mlp_session.get_inputs()
    (out,) = mlp_session.get_outputs()
    assert (inp.name, inp.shape, inp.dtype, inp.type) == ("input", (1, 784), np.dtype("float32"), "tensor(float)")
    assert (out.name, out.shape, out.dtype) == ("logits", (1, 10), np.dtype("float32"))
    assert mlp_session.compile_seconds > 0


def test_outputs_are_fresh_and_selectable(mlp_session: InferenceSession) -> None:
    x = np.random.default_rng(1).standard_normal((1, 784)).astype(np.float32)
    first = mlp_session.run(["logits"], {"input": x})[0]
    second = mlp_session.run(None, {"input": x})[0]
    assert first is not second
    np.testing.assert_array_equal(first, second)


def test_non_contiguous_input_is_copied(mlp_session: InferenceSession) -> None:
    wide = np.random.default_rng(2).standard_normal((1, 1568)).astype(np.float32)
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    expected = mlp_session.run(None, {"input": np.ascontiguousarray(strided)})[0]
    np.testing.assert_array_equal(mlp_session.run(None, {"input": strided})[0], expected)


@pytest.mark.parametrize(
    ("feeds", "message"),
    [
        ({"input": np.zeros((2, 784), np.float32)}, r"input 'input': expected shape \(1, 784\), got \(2, 784\)"),
        ({"input": np.zeros((784,), np.float32)}, r"input 'input': expected shape \(1, 784\), got \(784,\)"),
        (
            {"input": np.zeros((1, 784), np.float64)},
            r"input 'input': expected dtype float32 \(tensor\(float\)\), got float64",
        ),
        ({"input": np.zeros((1, 784), np.int32)}, r"expected dtype float32 .*got int32"),
        ({}, r"missing input\(s\) 'input'; the model's inputs are: input \[1, 784\] float32"),
        (
            {"input": np.zeros((1, 784), np.float32), "extra": np.zeros(1, np.float32)},
            r"unknown input name\(s\) 'extra'",
        ),
    ],
)
def test_bad_feeds_are_rejected_before_native_code(
    mlp_session: InferenceSession, feeds: dict[str, np.ndarray], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        mlp_session.run(None, feeds)


def test_unknown_output_name(mlp_session: InferenceSession) -> None:
    with pytest.raises(InvalidInputError, match=r"unknown output name\(s\) 'probs'; the model's outputs are: logits"):
        mlp_session.run(["probs"], {"input": np.zeros((1, 784), np.float32)})


def test_unsupported_ops_are_listed_together() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("Bernoulli", ["a"], ["b"], name="coin_1"),
        helper.make_node("Bernoulli", ["b"], ["c"], name="coin_2"),
        helper.make_node("GlobalLpPool", ["c"], ["y"], name="pool_1"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    with pytest.raises(
        UnsupportedOpsError, match=r"Bernoulli \(opset 15\): coin_1, coin_2.*GlobalLpPool \(opset 15\): pool_1"
    ):
        InferenceSession(model)


def test_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07this is not a protobuf\xff\xff")
    with pytest.raises(ModelImportError, match="broken.onnx"):
        InferenceSession(str(path))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises((ModelImportError, FileNotFoundError), match="nowhere.onnx"):
        InferenceSession(str(tmp_path / "nowhere.onnx"))


def test_with_weights_reuses_the_code_with_new_weights(mlp: onnx.ModelProto, mlp_session: InferenceSession) -> None:
    rng = np.random.default_rng(7)
    retrained = onnx.ModelProto()
    retrained.CopyFrom(mlp)
    for tensor in retrained.graph.initializer:
        array = onnx.numpy_helper.to_array(tensor)
        tensor.CopyFrom(onnx.numpy_helper.from_array(rng.standard_normal(array.shape).astype(np.float32), tensor.name))
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in retrained.graph.initializer}
    tuned = mlp_session.with_weights(weights)
    x = rng.standard_normal((1, 784)).astype(np.float32)
    (expected,) = ReferenceEvaluator(retrained).run(None, {"input": x})
    np.testing.assert_allclose(tuned.run(None, {"input": x})[0], expected, rtol=RTOL, atol=1e-5)
    (original,) = ReferenceEvaluator(mlp).run(None, {"input": x})
    np.testing.assert_allclose(mlp_session.run(None, {"input": x})[0], original, rtol=RTOL, atol=ATOL)


def test_with_weights_names_missing_and_mismatched_weights(mlp_session: InferenceSession, mlp: onnx.ModelProto) -> None:
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in mlp.graph.initializer}
    name, first = next(iter(weights.items()))
    with pytest.raises(ValueError, match=f"missing weight '{re.escape(name)}'"):
        mlp_session.with_weights({k: v for k, v in weights.items() if k != name})
    with pytest.raises(ValueError, match=rf"weight '{re.escape(name)}': expected float32\[.*\], got float64"):
        mlp_session.with_weights({**weights, name: first.astype(np.float64)})
    with pytest.raises(ValueError, match=rf"weight '{re.escape(name)}': expected float32\[.*\], got float32\[3\]"):
        mlp_session.with_weights({**weights, name: np.zeros(3, np.float32)})


def add_model(**fields: object) -> onnx.ModelProto:
    """`c = a + b` of two [2] inputs; `fields` are ModelProto fields (producer_name, doc_string, model_version...)."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])],
        "adder",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2]) for name in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])],
        doc_string="adds a and b",
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], **fields)


@pytest.mark.parametrize(
    "providers",
    [
        ["CPUExecutionProvider"],
        [("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})],
        "CPUExecutionProvider",
        [],
    ],
)
def test_onnxruntime_session_arguments_are_accepted(providers: list | str) -> None:
    assert InferenceSession(add_model(), None, providers).get_providers() == ["CPUExecutionProvider"]
    assert InferenceSession(add_model(), sess_options=None, providers=providers).get_providers() == [
        "CPUExecutionProvider"
    ]


@pytest.mark.parametrize("provider", ["CUDAExecutionProvider", ("TensorrtExecutionProvider", {})])
def test_other_providers_are_refused_by_name(provider: str | tuple) -> None:
    """Without the CPU provider, refused; beside it (ORT code's usual fallback list), ignored with a warning."""
    name = provider[0] if isinstance(provider, tuple) else provider
    with pytest.raises(ValueError, match=f"'{name}' is not supported: minimlc runs on the CPU"):
        InferenceSession(add_model(), providers=[provider])
    with pytest.warns(UserWarning, match=f"minimlc runs on the CPU: execution provider\\(s\\) '{name}' ignored"):
        session = InferenceSession(add_model(), providers=[provider, "CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_onnxruntime_session_options_are_refused() -> None:
    with pytest.raises(TypeError, match=r"takes no onnxruntime\.SessionOptions"):
        InferenceSession(add_model(), object())


@pytest.mark.parametrize(
    "fields",
    [
        {"producer_name": "exporter", "domain": "org.example", "doc_string": "a model", "model_version": 7},
        {},  # no version: ONNX Runtime's INT64_MAX
    ],
)
def test_modelmeta_like_onnxruntime_and_saved(fields: dict, tmp_path: Path) -> None:
    import onnxruntime

    model = add_model(**fields)
    helper.set_model_props(model, {"license": "MIT", "author": "me"})
    expected = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    path = tmp_path / "adder.onnx"
    onnx.save(model, path)
    session = InferenceSession(str(path))
    session.save(tmp_path / "adder.mlc")
    names = ("producer_name", "graph_name", "domain", "description", "graph_description", "version")
    want = expected.get_modelmeta()
    for copy in (session, session.with_num_threads(1), load(tmp_path / "adder.mlc")):
        meta = copy.get_modelmeta()
        assert [getattr(meta, name) for name in names] == [getattr(want, name) for name in names]
        assert meta.custom_metadata_map == want.custom_metadata_map == {"license": "MIT", "author": "me"}


@pytest.mark.parametrize("feed", [list, tuple])
def test_feed_that_is_not_a_dict_says_to_pass_one(feed: type) -> None:
    session = InferenceSession(add_model())
    x = np.ones(2, np.float32)
    with pytest.raises(TypeError, match=rf"input_feed must be a dict {{name: array}}.*not a {feed.__name__}.*: a, b"):
        session.run(None, feed([x, x]))
    np.testing.assert_array_equal(session.run(None, {"a": x, "b": x})[0], 2 * x)
