"""Every op test runs at O3 (fused, scheduled, folded) and a spread of its cases at O0 (op by op, loops as te-to-loop
builds them): the first case of each test function and every `O0_EVERY`-th after it (`MINIMLC_TEST_ALL_O0=1` runs
them all). O0 and O3 share the importer, `graph-to-te` and `te-to-loop`, where the cases differ (dtypes, shapes,
attributes); O0 checks the unscheduled, unfused loops of each op, which a few shapes cover. The levels between add
passes that O3 also runs (O1 memory planning, O2 fusion and schedules without load-time constants):
`tests/runtime/test_opt_levels.py` takes models through every level, and a module of op tests that sets `OPT_LEVELS`
(as `test_onnx_ops.py`, the core ops, does: all four) runs every case at those levels instead.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from pathlib import Path

import pytest

from minimlc import InferenceSession

PIPELINE_ENDS = (0, 3)

O0_EVERY = 4
"""One case in this many of a test function runs at O0 (all of them at O3): 2,159 O0 cases took 620 s of a loaded
run's 7,400 test-seconds."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize each test over its module's `OPT_LEVELS` (default `PIPELINE_ENDS`) through `opt_level`."""
    levels = getattr(metafunc.module, "OPT_LEVELS", PIPELINE_ENDS)
    metafunc.parametrize("opt_level", sorted(levels), indirect=True, ids=lambda level: f"O{level}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the O0 cases of modules on `PIPELINE_ENDS` but one in `O0_EVERY` of each function (in collection
    order, so every xdist worker deselects the same)."""
    if os.environ.get("MINIMLC_TEST_ALL_O0"):
        return
    here, seen, dropped = Path(__file__).parent, Counter[str](), []
    for item in items:
        if not _sampled_at_o0(item, here):
            continue
        function = f"{item.path}::{item.originalname}"
        if seen[function] % O0_EVERY:
            dropped.append(item)
        seen[function] += 1
    if dropped:
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]
        config.hook.pytest_deselected(items=dropped)


def _sampled_at_o0(item: pytest.Item, here: Path) -> bool:
    """Whether `item` is an O0 case of an op-test module that runs at the pipeline's ends only."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or callspec.params.get("opt_level") != 0 or here not in item.path.parents:
        return False
    return getattr(item.module, "OPT_LEVELS", PIPELINE_ENDS) == PIPELINE_ENDS


@pytest.fixture(autouse=True)
def opt_level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The level this run of the test compiles at: the module's `InferenceSession` is bound to it."""
    at_level = functools.partial(InferenceSession, opt_level=request.param)
    monkeypatch.setattr(request.module, "InferenceSession", at_level)
    return request.param
