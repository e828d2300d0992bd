"""What a compiled model needs to run, and nothing else: `load(path)` gives the `Session` of a saved model (object
code, weights, thread pool, external functions) without importing xDSL, ONNX or the compiler."""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AllocationError": "minimlc.runtime.compiled",
    "IndexOutOfRangeError": "minimlc.runtime.session",
    "InvalidInputError": "minimlc.runtime.session",
    "Session": "minimlc.runtime.session",
    "load": "minimlc.runtime.session",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:  # lazily: `minimlc.runtime.jit` alone needs no session
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'minimlc.runtime' has no attribute {name!r}")
