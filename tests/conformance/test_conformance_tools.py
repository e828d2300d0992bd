"""`minimlc.tools.conformance`: outcome classification, the table, the expected-failures file and its update."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest

from minimlc.tools.conformance import (
    ConformanceTest,
    Outcome,
    light_model_feeds,
    read_expected_failures,
    run_test,
    summary_table,
    updated_expected_failures,
)


def raises(error: BaseException):
    def run() -> None:
        raise error

    return run


def warns() -> None:
    warnings.warn("numerically dubious", RuntimeWarning, stacklevel=1)


@pytest.mark.parametrize(
    ("run", "outcome", "message"),
    [
        (lambda: None, Outcome.PASSED, ""),
        (raises(NotImplementedError("no Foo yet\ndetails")), Outcome.UNSUPPORTED, "no Foo yet"),
        (raises(AssertionError("\nNot equal to tolerance")), Outcome.FAILED, "AssertionError: Not equal to tolerance"),
        (raises(ValueError("bad attribute")), Outcome.FAILED, "ValueError: bad attribute"),
        (warns, Outcome.FAILED, "RuntimeWarning: numerically dubious"),
    ],
)
def test_run_test_classifies_outcomes(run, outcome: Outcome, message: str) -> None:
    result = run_test(ConformanceTest("test_x", "Foo", run))
    assert (result.outcome, result.message) == (outcome, message)
    assert result.seconds >= 0


def test_summary_table_counts_by_op() -> None:
    tests = {
        "a": ConformanceTest("test_a", "Relu", lambda: None),
        "b": ConformanceTest("test_b", "Relu", raises(AssertionError("x"))),
        "c": ConformanceTest("test_c", "Cast", raises(NotImplementedError("y"))),
    }
    table = summary_table(run_test(test) for test in tests.values()).splitlines()
    assert table[0].split() == ["op", "passed", "failed", "unsupported"]
    assert [line.split() for line in table[2:4]] == [["Cast", "0", "0", "1"], ["Relu", "1", "1", "0"]]
    assert table[-1].split() == ["total", "1", "1", "1"]


def test_expected_failures_update(tmp_path: Path) -> None:
    listing = tmp_path / "expected.txt"
    listing.write_text(
        "# header\n\n# Relu\ntest_relu_a\ntest_relu_b  # failed: old reason\n"
        "# Cast\ntest_cast  # failed: still failing\ntest_gone\n"
    )
    assert read_expected_failures(listing) == {
        "test_relu_a": "",
        "test_relu_b": "failed: old reason",
        "test_cast": "failed: still failing",
        "test_gone": "",
    }
    relu_a = ConformanceTest("test_relu_a", "Relu", lambda: None)
    relu_b = ConformanceTest("test_relu_b", "Relu", raises(AssertionError("\nMismatched elements: 1 / 4")))
    relu_c = ConformanceTest("test_relu_c", "Relu", raises(NotImplementedError("float64")))
    cast = ConformanceTest("test_cast", "Cast")
    light = ConformanceTest("light_x", "light_models", raises(RuntimeError("boom")))
    results = [run_test(test) for test in (relu_a, relu_b, relu_c, light)]
    text = updated_expected_failures(listing, results, [relu_a, relu_b, relu_c, cast, light])
    assert text.startswith("# Conformance tests minimlc is expected to fail")
    body = text[text.index("\n\n") :]
    assert body == (
        "\n\n# Cast\ntest_cast  # failed: still failing\n"
        "\n# Relu\ntest_relu_b  # failed: AssertionError: Mismatched elements: 1 / 4\ntest_relu_c\n"
        "\n# light_models\nlight_x  # failed: RuntimeError: boom\n"
    )


def test_light_model_feeds_are_onnx_runners_dummy_data() -> None:
    model = onnx.helper.make_model(
        onnx.helper.make_graph(
            [onnx.helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])],
        )
    )
    (x,) = light_model_feeds(model)
    np.testing.assert_array_equal(x, (np.arange(6).reshape(2, 3) / 6).astype(np.float32))
