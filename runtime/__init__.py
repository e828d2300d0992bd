"""Compile ONNX models to native code and run them: `from minimlc.runtime import InferenceSession`; run a saved one
with `minimlc.runtime.load(path)`."""

from typing import Any

__all__ = ["IndexOutOfRangeError", "InferenceSession", "InvalidInputError", "load"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `minimlc.runtime.jit` can be used without importing the ONNX frontend or xDSL.
    if name in __all__:
        from minimlc.runtime import session

        return getattr(session, name)
    raise AttributeError(f"module 'minimlc.runtime' has no attribute {name!r}")
