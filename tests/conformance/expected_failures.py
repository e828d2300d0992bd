"""The checked-in expected-failures list as pytest marks, shared by the conformance test modules."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from minimlc.tools.conformance import ConformanceTest, read_expected_failures

EXPECTED_FAILURES_FILE = Path(__file__).with_name("expected_failures.txt")
EXPECTED_FAILURES = read_expected_failures(EXPECTED_FAILURES_FILE)


def conformance_params(tests: Iterable[ConformanceTest]) -> list[object]:
    """The tests as pytest params named like onnx's tests; listed ones are strict xfails."""
    return [
        pytest.param(
            test, id=test.name, marks=[_xfail(EXPECTED_FAILURES[test.name])] if test.name in EXPECTED_FAILURES else []
        )
        for test in tests
    ]


def _xfail(comment: str) -> pytest.MarkDecorator:
    reason = "listed in tests/conformance/expected_failures.txt" + (f" ({comment})" if comment else "")
    return pytest.mark.xfail(strict=True, reason=reason)
