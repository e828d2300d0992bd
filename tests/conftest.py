"""The suite compiles every model anew (a cache hit could hide a compiler bug) and never touches the user's compile
cache: `MINIMLC_CACHE=0`, and a throw-away `MINIMLC_CACHE_DIR` for the tests that turn the cache on. Tests import the
model builders of `examples/` (`model_builder`, `transformer_models`, `quantized_resnet`) by module name. Tests marked
`slow` (8 s or more a case) run first, so that the two xdist workers end together: one started last would leave the
other worker idle until it ends (longest first; `--dist worksteal` evens out the rest)."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["MINIMLC_CACHE"] = "0"
os.environ["MINIMLC_CACHE_DIR"] = tempfile.mkdtemp(prefix="minimlc-test-cache-")
atexit.register(shutil.rmtree, os.environ["MINIMLC_CACHE_DIR"], ignore_errors=True)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
