"""The checked-in expected-failures list as pytest marks, shared by the conformance test modules.

A listed test is a strict xfail that accepts only `ListedFailure`, which `run_conformance_test` raises when the test
fails with the kind of failure its entry declares: a listed test that passes, or fails in another way (a refusal that
became a wrong answer or a crash), fails the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from minimlc.tools.cli_conformance import CHECKED_IN_LIST
from minimlc.tools.conformance import ConformanceTest, Outcome, failure_kind, read_expected_failures

EXPECTED_FAILURES_FILE = CHECKED_IN_LIST
EXPECTED_FAILURES = read_expected_failures(EXPECTED_FAILURES_FILE)


class ListedFailure(Exception):
    """A listed test failed with the kind of failure its entry declares."""


def conformance_params(tests: Iterable[ConformanceTest]) -> list[object]:
    """The tests as pytest params named like onnx's tests; listed ones are strict xfails."""
    return [
        pytest.param(test, id=test.name, marks=[_xfail(test.name)] if test.name in EXPECTED_FAILURES else [])
        for test in tests
    ]


def run_conformance_test(name: str, run: Callable[[], Outcome]) -> Outcome:
    """Run a conformance test and return how it passed; if it is listed and fails with its declared kind, raise
    `ListedFailure`."""
    expected = EXPECTED_FAILURES.get(name)
    try:
        return run()
    except Exception as error:
        if expected is not None and failure_kind(error) == expected.kind:
            raise ListedFailure(f"{name} failed as listed ({expected.kind})") from error
        raise


def _xfail(name: str) -> pytest.MarkDecorator:
    kind, comment = EXPECTED_FAILURES[name]
    reason = f"listed in tools/conformance_expected_failures.txt as {kind}" + (f" ({comment})" if comment else "")
    return pytest.mark.xfail(strict=True, raises=ListedFailure, reason=reason)
