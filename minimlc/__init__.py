"""minimlc's Python front door: what a user builds and registers, re-exported from the rooms that hold it.

    import minimlc
    from minimlc import te
    from minimlc.schedule import Schedule
    f = minimlc.build(te.create_function([A, B, C]))   # or minimlc.build(Schedule(...))
    minimlc.register_func("env.relu", lambda x, out: np.maximum(x, 0, out=out))
    bb = minimlc.GraphBuilder()

Only this file lives here: the rooms are `dialects/`, `frontend/`, `lowering/`, `runtime/` (`minimlc.te` is
`runtime/te/`, `minimlc.schedule` is `runtime/schedule/`) and `tools/`. Names load lazily, so that
`import minimlc.runtime.jit` still loads neither xDSL nor the compiler.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "GraphBuilder": "minimlc.frontend.graph_builder",
    "build": "minimlc.runtime.build",
    "partition_for_target": "minimlc.runtime.byoc",
    "register_func": "minimlc.runtime.extern",
}
"""Public name -> the module that defines it."""

_PACKAGES = ("schedule", "te")
"""Subpackages importable as attributes (`minimlc.te`)."""

__all__ = sorted([*_EXPORTS, *_PACKAGES])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    if name in _PACKAGES:
        return import_module(f"minimlc.{name}")
    raise AttributeError(f"module 'minimlc' has no attribute {name!r}")
