"""minimlc's Python front door: `minimlc.build`, and the `te` and `schedule` packages.

    from minimlc import te
    from minimlc.schedule import Schedule
    f = minimlc.build(te.create_function([A, B, C]))   # or minimlc.build(Schedule(...))

Only this file lives here: the rooms are `dialects/`, `frontend/`, `lowering/`, `runtime/` (`minimlc.te` is
`runtime/te/`, `minimlc.schedule` is `runtime/schedule/`, `build` is `minimlc.runtime.build`) and `tools/`.
"""

from typing import Any

__all__ = ["build", "schedule", "te"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import minimlc.runtime.jit` still loads neither xDSL nor the compiler.
    if name == "build":
        from minimlc.runtime.build import build

        return build
    if name in ("te", "schedule"):
        import importlib

        return importlib.import_module(f"minimlc.{name}")
    raise AttributeError(f"module 'minimlc' has no attribute {name!r}")
