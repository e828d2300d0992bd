"""Every op test runs at both ends of the pipeline: O0 (op by op, loops as te-to-loop builds them) and O3 (fused,
scheduled, folded). The levels between add passes that O3 also runs (O1 memory planning, O2 fusion and schedules
without load-time constants): `tests/runtime/test_opt_levels.py` takes models through every level, and a module of
op tests that sets `OPT_LEVELS` (as `test_onnx_ops.py`, the core ops, does: all four) runs at those levels instead.
"""

from __future__ import annotations

import functools

import pytest

from minimlc import InferenceSession

PIPELINE_ENDS = (0, 3)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize each test over its module's `OPT_LEVELS` (default `PIPELINE_ENDS`) through `opt_level`."""
    levels = getattr(metafunc.module, "OPT_LEVELS", PIPELINE_ENDS)
    metafunc.parametrize("opt_level", sorted(levels), indirect=True, ids=lambda level: f"O{level}")


@pytest.fixture(autouse=True)
def opt_level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The level this run of the test compiles at: the module's `InferenceSession` is bound to it."""
    at_level = functools.partial(InferenceSession, opt_level=request.param)
    monkeypatch.setattr(request.module, "InferenceSession", at_level)
    return request.param
