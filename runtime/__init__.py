"""What a compiled model needs to run, and nothing else: `load(path)` gives the `Session` of a saved model (object
code, weights, thread pool, external functions) without importing xDSL, ONNX or the compiler."""

from typing import Any

__all__ = ["IndexOutOfRangeError", "InvalidInputError", "Session", "load"]


def __getattr__(name: str) -> Any:
    if name in __all__:  # lazily: `minimlc.runtime.jit` alone needs no session
        from minimlc.runtime import session

        return getattr(session, name)
    raise AttributeError(f"module 'minimlc.runtime' has no attribute {name!r}")
