"""minimlc's Python front door: what a user builds and registers, re-exported from the rooms that hold it.

    import minimlc
    minimlc.register_func("env.relu", lambda x, out: np.maximum(x, 0, out=out))
    bb = minimlc.GraphBuilder()

Only this file lives here: the rooms are `dialects/`, `frontend/`, `lowering/`, `runtime/` and `tools/`. Names
load lazily, so that `import minimlc.runtime.jit` still loads neither xDSL nor the compiler.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "GraphBuilder": "minimlc.frontend.graph_builder",
    "register_func": "minimlc.runtime.extern",
    "partition_for_target": "minimlc.runtime.byoc",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'minimlc' has no attribute {name!r}")
