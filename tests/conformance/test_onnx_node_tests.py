"""onnx's node conformance tests (1,884 one-node models, built in memory) through minimlc's ONNX backend.

Each test runs as onnx's `BackendTest` runs it (`minimlc.tools.conformance`). `expected_failures.txt` lists the
tests minimlc does not pass yet, each with the kind of failure it must fail with: a listed test that fails with that
kind is an xfail, a listed test that passes or fails otherwise fails the run (strict), and an unlisted test that fails
fails the run. Regenerate the list with
`minimlc conformance --light --write-expected-failures tools/conformance_expected_failures.txt`.
"""

from __future__ import annotations

from collections import Counter

import ml_dtypes
import numpy as np
import onnx
import pytest
from expected_failures import (
    EXPECTED_FAILURES,
    EXPECTED_FAILURES_FILE,
    ListedFailure,
    conformance_params,
    run_conformance_test,
)
from onnx import TensorProto, helper

from minimlc.backend import onnx_backend as backend
from minimlc.frontend import onnx as onnx_frontend
from minimlc.frontend.onnx import UnsupportedOpsError
from minimlc.frontend.onnx_ops import NodeContext, Value
from minimlc.tools.conformance import (
    FAILURE_KINDS,
    ConformanceTest,
    FoldedOutputError,
    Outcome,
    OutputMismatch,
    _undefined_casts,
    failure_kind,
    how_it_passed,
    light_model_tests,
    node_tests,
    run_test,
)


@pytest.mark.parametrize("test", conformance_params(node_tests()))
def test_node(test: ConformanceTest) -> None:
    """Passes only if minimlc's outputs match and came from native code, or are constants independent of the inputs'
    values (`conformance.how_it_passed`, which raises `FoldedOutputError` otherwise)."""
    assert run_conformance_test(test.name, test.run) in (Outcome.NATIVE, Outcome.CONSTANT)


def by_name(name: str) -> ConformanceTest:
    (test,) = [test for test in node_tests() if test.name == name]
    return test


@pytest.mark.parametrize(("name", "outcome"), [("test_relu", Outcome.NATIVE), ("test_shape", Outcome.CONSTANT)])
def test_passing_cases_say_how_they_passed(name: str, outcome: Outcome) -> None:
    assert run_test(by_name(name)).outcome is outcome


def test_a_case_folded_from_integer_inputs_is_not_counted_as_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    """test_and2d's bool inputs are data, fed at run time: native. With them bound as constants anyway (the importer
    then folds And at import time), the outputs match but the case fails as folded."""
    result = run_test(by_name("test_and2d"))
    assert (result.outcome, result.kind) == (Outcome.NATIVE, "")
    monkeypatch.setattr(
        backend.backend_shape_inputs, "shape_setting_inputs", lambda graph: {vi.name for vi in graph.input}
    )
    monkeypatch.setattr(backend, "_read_as_data", lambda graph: iter(()))
    result = run_test(by_name("test_and2d"))
    assert (result.outcome, result.kind) == (Outcome.FAILED, "folded")
    assert "inputs bound as constants but read as data: 'x' (And input 0), 'y' (And input 1)" in result.message


class FoldingSession:
    """A session whose only output is a 'constant' that is in fact twice its float input."""

    constant_output_names = ("y",)
    stats = {"kernels": 0}


class FoldingRep:
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        )
    )
    bound_inputs: tuple[str, ...] = ()
    fed_inputs: tuple[str, ...] = ("x",)
    sessions = {(): FoldingSession()}

    def run(self, feeds: list[np.ndarray]) -> list[np.ndarray]:
        return [feeds[0] * 2]


def test_constant_outputs_that_follow_the_float_inputs_are_folded() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(FoldedOutputError, match=r"^constant output 'y' changes with the values of the float inputs$"):
        how_it_passed(FoldingRep(), [([x], [x * 2])])  # type: ignore[arg-type]


def test_expected_failures_name_existing_tests() -> None:
    known = {test.name for test in (*node_tests(), *light_model_tests())}
    assert sorted(set(EXPECTED_FAILURES) - known) == []


def test_expected_failures_list_each_test_once() -> None:
    entries = [line.split("#")[0].split() for line in EXPECTED_FAILURES_FILE.read_text().splitlines()]
    names = [entry[0] for entry in entries if entry]
    assert [name for name, count in Counter(names).items() if count > 1] == []


def test_expected_failures_declare_a_known_kind_or_an_exception_class() -> None:
    kinds = {entry.kind for entry in EXPECTED_FAILURES.values()}
    assert [kind for kind in kinds if kind not in FAILURE_KINDS and not kind[:1].isupper()] == []


def test_node_tests_cover_every_op_with_its_function_expansions() -> None:
    tests = node_tests()
    assert len(tests) > 1800
    by_name = {test.name: test for test in tests}
    assert by_name["test_relu"].op == "Relu"
    assert by_name["test_softmax_axis_0_expanded"].op == "Softmax"


def decoder_as_identity(ctx: NodeContext, encoded_stream: Value, *, pixel_format: str = "RGB") -> Value:
    """A wrong ImageDecoder: the encoded bytes as they are."""
    return onnx_frontend.CONVERTERS["Identity"](ctx, encoded_stream)


def decoder_that_crashes(ctx: NodeContext, encoded_stream: Value, *, pixel_format: str = "RGB") -> Value:
    raise RuntimeError("converter bug")


def listed_test(name: str) -> tuple[ConformanceTest, pytest.Mark]:
    (param,) = [param for param in conformance_params(node_tests()) if param.id == name]  # type: ignore[attr-defined]
    (mark,) = param.marks
    return param.values[0], mark


def test_listed_test_fails_with_its_declared_kind() -> None:
    test, mark = listed_test("test_image_decoder_decode_png_rgb")
    assert EXPECTED_FAILURES[test.name].kind == "unsupported-op"
    assert (mark.name, mark.kwargs["strict"], mark.kwargs["raises"]) == ("xfail", True, ListedFailure)
    with pytest.raises(ListedFailure) as caught:
        run_conformance_test(test.name, test.run)
    assert isinstance(caught.value.__cause__, UnsupportedOpsError)


@pytest.mark.parametrize(
    ("converter", "error"), [(decoder_as_identity, OutputMismatch), (decoder_that_crashes, RuntimeError)]
)
def test_listed_test_that_regresses_to_a_wrong_answer_or_a_crash_fails(
    monkeypatch: pytest.MonkeyPatch, converter: object, error: type[Exception]
) -> None:
    """With ImageDecoder 'supported' (on its uint8 bytes) by a wrong converter, test_image_decoder_decode_png_rgb no
    longer raises what its strict xfail accepts (`ListedFailure`): pytest reports a failure, not an xfail."""
    monkeypatch.setitem(onnx_frontend.CONVERTERS, "ImageDecoder", converter)
    monkeypatch.setattr(onnx_frontend, "TYPED_OPS", onnx_frontend.TYPED_OPS | {"ImageDecoder"})
    test, _mark = listed_test("test_image_decoder_decode_png_rgb")
    with pytest.raises(error) as caught:
        run_conformance_test(test.name, test.run)
    assert not isinstance(caught.value, ListedFailure)
    assert failure_kind(caught.value) != "unsupported-op"


def _cast_model(to: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=to)],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", to, [5])],
    )
    return helper.make_model(graph)


def test_casts_are_compared_where_onnx_defines_them() -> None:
    """A float cast to an integer type is compared with onnx's expected output only where the value truncates into
    the target's range (ONNX leaves the rest undefined, and numpy's answer there varies by CPU); other casts whole."""
    x = np.array([-9.0, -8.5, 7.9, 8.0, np.nan], np.float32)
    int4 = np.zeros(5, ml_dtypes.int4)
    undefined = _undefined_casts(_cast_model(TensorProto.INT4), [x], [int4])
    np.testing.assert_array_equal(undefined, [True, False, False, True, True])
    assert _undefined_casts(_cast_model(TensorProto.FLOAT16), [x], [x.astype(np.float16)]) is None
    assert _undefined_casts(_cast_model(TensorProto.INT4), [int4], [int4]) is None
