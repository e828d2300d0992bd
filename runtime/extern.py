"""External functions: `register_func(name, fn)` and the binding of `graph.call_extern` calls to them.

A registered function is called destination-passing style, as Relax's `call_dps_packed`: with the call's inputs,
then its outputs, which it fills. Either

- a Python callable, called with numpy views of the buffers (shapes and dtypes of the call): `fn(x, w, out)`, or
  with torch tensors over them (`register_func(name, fn, tensors="torch")`, as the seed's `call_dps_packed` of
  `torch.mm` through DLPack); an
  exception it raises stops nothing at once (native code cannot unwind) but is re-raised by the session's `run`
  once the entry returns, and the external calls after it in that run are skipped; or
- a C function, a ctypes function pointer of type `int32_t f(void **buffers)` (0 on success), called directly by
  the compiled code. It must declare its buffers' shapes and dtypes (`signature=`): native code is never handed
  buffers it could overrun. The first call of a run that returns non-zero is recorded in the run's status word, and
  `run` raises `ExternalFunctionError` naming the function and the value once the entry returns.

Compiled code calls each external call site through a function pointer the runtime binds when the model loads
(`minimlc.lowering.abi.ExternCall`): a call to a name no one registered is refused before anything is compiled,
and a saved model binds its calls again by name when it is loaded (register the functions first).

    minimlc.register_func("env.relu", lambda x, out: np.maximum(x, 0, out=out))
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from minimlc.lowering.abi import BufferTypes, ExternCall

EXTERN_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
"""The native type of an external function: `int32_t f(void **buffers)`."""


class ExternalFunctionError(ValueError):
    """An external call that cannot be bound: no function registered by that name, or buffers that do not match
    the function's declared signature."""


@dataclass(frozen=True)
class RegisteredFunction:
    """A function registered under a name: a Python callable or a C function pointer, and its declared buffers."""

    name: str
    function: Callable[..., Any] | ctypes._CFuncPtr
    signature: BufferTypes | None

    @property
    def is_native(self) -> bool:
        return isinstance(self.function, ctypes._CFuncPtr)


_REGISTRY: dict[str, RegisteredFunction] = {}
_PENDING = threading.local()


def register_func(
    name: str,
    function: Callable[..., Any] | ctypes._CFuncPtr,
    *,
    signature: Iterable[tuple[Sequence[int], Any]] | None = None,
    override: bool = True,
    tensors: str = "numpy",
) -> None:
    """Register `function` as the external function `name` (`graph.call_extern "name"`), replacing an earlier one
    unless `override=False`. `signature` lists the shapes and dtypes of its buffers (inputs, then outputs), checked
    against every call; required for a C function pointer. A Python function gets numpy views of the buffers, or
    with `tensors="torch"` torch tensors sharing their memory (the seed's `torch.mm(x, w, out=out)`; torch is imported
    then). Sessions bind the function when they are compiled or loaded: one registered later does not change them."""
    if not name:
        raise ValueError("register_func: the name is empty")
    if tensors not in ("numpy", "torch"):
        raise ValueError(f"register_func: tensors={tensors!r}; 'numpy' or 'torch'")
    if not override and name in _REGISTRY:
        raise ValueError(f"register_func: '{name}' is already registered")
    declared = None if signature is None else tuple((tuple(shape), np.dtype(dtype)) for shape, dtype in signature)
    if isinstance(function, ctypes._CFuncPtr):
        if declared is None:
            raise ValueError(
                f"register_func: C function '{name}' needs signature=[(shape, dtype), ...] (inputs, then outputs): "
                "native code is only called on buffers whose sizes are checked"
            )
    elif not callable(function):
        raise TypeError(f"register_func: '{name}' must be a Python callable or a ctypes function pointer")
    elif tensors == "torch":
        function = _on_torch_tensors(function)
    _REGISTRY[name] = RegisteredFunction(name, function, declared)


def _on_torch_tensors(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` called with torch tensors over the numpy views it is given (no copies: `torch.from_numpy`)."""
    import torch  # only for a function that asks for torch tensors: the runtime does not need it otherwise

    def call(*arrays: np.ndarray) -> Any:
        return function(*(torch.from_numpy(array) for array in arrays))

    return call


def get_func(name: str) -> RegisteredFunction | None:
    """The function registered as `name`, or None."""
    return _REGISTRY.get(name)


def remove_func(name: str) -> None:
    """Forget the function registered as `name` (sessions already bound keep it)."""
    _REGISTRY.pop(name, None)


def check_calls(calls: Iterable[tuple[str, BufferTypes]]) -> None:
    """Raise `ExternalFunctionError` naming every call to an unregistered name or not matching its signature."""
    problems: list[str] = []
    for name, buffers in calls:
        registered = _REGISTRY.get(name)
        if registered is None:
            problems.append(f"no external function registered as '{name}' (minimlc.register_func)")
        elif registered.signature is not None and registered.signature != buffers:
            problems.append(
                f"external function '{name}' is declared for buffers {_describe(registered.signature)} "
                f"but called with {_describe(buffers)}"
            )
    if problems:
        raise ExternalFunctionError("; ".join(dict.fromkeys(problems)))


def bind_calls(calls: Sequence[ExternCall]) -> tuple[list[int], list[object]]:
    """The function addresses of `calls`, in order, and the objects that must stay alive while they may be called
    (the Python callables' native trampolines)."""
    check_calls((call.callee, call.buffers) for call in calls)
    addresses: list[int] = []
    keep_alive: list[object] = []
    for call in calls:
        registered = _REGISTRY[call.callee]
        if registered.is_native:
            native = registered.function
        else:
            native = EXTERN_FUNCTION(_trampoline(registered.function, call.buffers))
        keep_alive.append(native)
        address = ctypes.cast(native, ctypes.c_void_p).value
        assert address is not None
        addresses.append(address)
    return addresses, keep_alive


def raise_pending_error() -> None:
    """Re-raise the exception a Python external function raised during this thread's last run, if any."""
    error = getattr(_PENDING, "error", None)
    if error is not None:
        _PENDING.error = None
        raise error


def check_status(calls: Sequence[ExternCall], status: np.ndarray) -> None:
    """Raise `ExternalFunctionError` if a run's status word (`abi.EXTERN_STATUS_ATTR`) records a failed call."""
    if status[0]:
        callee = next((call.callee for call in calls if call.slot == status[0] - 1), "?")
        raise ExternalFunctionError(f"external function '{callee}' failed: it returned {int(status[1])}")


def _trampoline(function: Callable[..., Any], buffers: BufferTypes) -> Callable[[Any], int]:
    """A native-callable wrapper that calls `function` on numpy views of the buffers and records its exception."""
    sizes = [(shape, dtype, int(np.prod(shape)) * dtype.itemsize) for shape, dtype in buffers]

    def call(addresses: Any) -> int:
        if getattr(_PENDING, "error", None) is not None:
            return 1  # an earlier call of this run failed: its outputs are garbage, skip the rest
        try:
            views = [
                np.frombuffer((ctypes.c_char * max(nbytes, 1)).from_address(addresses[i]), dtype, int(np.prod(shape)))
                .reshape(shape)
                for i, (shape, dtype, nbytes) in enumerate(sizes)
            ]
            function(*views)
        except BaseException as error:  # noqa: BLE001 - re-raised by the session's run, on this thread
            _PENDING.error = error
            return 1
        return 0

    return call


def _describe(buffers: BufferTypes) -> str:
    return "(" + ", ".join(f"{dtype}{list(shape)}" for shape, dtype in buffers) + ")"
