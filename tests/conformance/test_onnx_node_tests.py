"""onnx's node conformance tests (1,884 one-node models, built in memory) through minimlc's ONNX backend.

Each test runs as onnx's `BackendTest` runs it (`minimlc.tools.conformance`). `expected_failures.txt` lists the
tests minimlc does not pass yet: a listed test that fails is an xfail, a listed test that passes fails the run
(strict), and an unlisted test that fails fails the run. Regenerate the list with
`minimlc conformance --light --write-expected-failures tests/conformance/expected_failures.txt`.
"""

from __future__ import annotations

from collections import Counter

import pytest
from expected_failures import EXPECTED_FAILURES, EXPECTED_FAILURES_FILE, conformance_params

from minimlc.tools.conformance import ConformanceTest, light_model_tests, node_tests


@pytest.mark.parametrize("test", conformance_params(node_tests()))
def test_node(test: ConformanceTest) -> None:
    test.run()


def test_expected_failures_name_existing_tests() -> None:
    known = {test.name for test in (*node_tests(), *light_model_tests())}
    assert sorted(set(EXPECTED_FAILURES) - known) == []


def test_expected_failures_list_each_test_once() -> None:
    names = [line.split("#")[0].strip() for line in EXPECTED_FAILURES_FILE.read_text().splitlines()]
    assert [name for name, count in Counter(filter(None, names)).items() if count > 1] == []


def test_node_tests_cover_every_op_with_its_function_expansions() -> None:
    tests = node_tests()
    assert len(tests) > 1800
    by_name = {test.name: test for test in tests}
    assert by_name["test_relu"].op == "Relu"
    assert by_name["test_softmax_axis_0_expanded"].op == "Softmax"
