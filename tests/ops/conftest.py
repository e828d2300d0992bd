"""Every op test runs at every optimisation level (O0 op by op ... O3 fused, scheduled, folded)."""

from __future__ import annotations

import functools

import pytest

from minimlc.lowering.pipeline import OPT_LEVELS
from minimlc.runtime import InferenceSession


@pytest.fixture(autouse=True, params=sorted(OPT_LEVELS), ids=lambda level: f"O{level}")
def opt_level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The level this run of the test compiles at: the module's `InferenceSession` is bound to it."""
    at_level = functools.partial(InferenceSession, opt_level=request.param)
    monkeypatch.setattr(request.module, "InferenceSession", at_level)
    return request.param
