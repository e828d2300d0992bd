"""`minimlc.build`: compile a te function (`te.create_function`) or a scheduled one (`minimlc.schedule.Schedule`) to
a native function called on numpy arrays in destination-passing style, as TVM's `tvm.build` returns:

    f = minimlc.build(te.create_function([A, B, C], name="matmul"))
    f(a, b, c)              # writes c; every argument's shape and dtype is checked before native code runs

A te function goes through the opt level's whole pipeline (te-inline, default-schedule, ...); a `Schedule` keeps the
loops its trace made: it continues after `default-schedule` (kernel fusion, memory planning, outlining, code
generation). The native entry is the compiler's usual `main_packed` (`minimlc.lowering.abi`); the function has no
weights, so its argument array is the inputs, the outputs and, if a loop is parallel, the thread pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import ENTRY_FUNCTION, buffer_dtype
from minimlc.lowering.pipeline import PassItem, build_pipeline, opt_level_pipeline
from minimlc.runtime.compiled import CompiledModel
from minimlc.runtime.threadpool import ThreadPool, shared_pool

if TYPE_CHECKING:
    from minimlc.schedule import Schedule


class ArgumentError(ValueError):
    """An argument of a built function has the wrong count, shape, dtype or layout (checked before native code)."""


class BuiltFunction:
    """A compiled function called destination-passing style: `f(*inputs, *outputs)` writes the outputs."""

    def __init__(self, name: str, compiled: CompiledModel, num_threads: int | None = None):
        self.name = name
        self.compiled = compiled
        self.inputs = list(compiled.inputs)
        self.outputs = list(compiled.outputs)
        slots = np.zeros(len(self.inputs) + len(self.outputs), dtype=np.uintp)
        self._args_template = np.concatenate((slots, compiled.weight_addresses))
        self._pool: ThreadPool | None = None
        if compiled.pool_slot is not None:
            self._pool = shared_pool(num_threads)  # the sessions' pool of that many threads
            self._args_template = np.insert(self._args_template, compiled.pool_slot, self._pool.address)

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR the function was compiled from."""
        return self.compiled.llvm_ir

    def __call__(self, *arrays: Any) -> None:
        expected = len(self.inputs) + len(self.outputs)
        if len(arrays) != expected:
            names = ", ".join(info.name for info in (*self.inputs, *self.outputs))
            raise ArgumentError(f"{self.name} takes {expected} arrays ({names}), got {len(arrays)}")
        checked = [self._input(info, value, n) for n, (info, value) in enumerate(zip(self.inputs, arrays))]
        outputs = arrays[len(self.inputs) :]
        for n, (info, value) in enumerate(zip(self.outputs, outputs), start=len(self.inputs)):
            output = self._output(info, value, n)
            if any(np.may_share_memory(output, other) for other in checked):
                # kernels take their buffers `noalias`: an output overlapping an argument would give wrong results
                raise ArgumentError(f"{self._describe(info, n, 'output')}: overlaps another argument")
            checked.append(output)
        args = self._args_template.copy()
        for slot, array in enumerate(checked):
            args[slot] = array.ctypes.data
        self.compiled.entry(args.ctypes.data)

    def _describe(self, info: TensorInfo, position: int, role: str) -> str:
        return f"{self.name}: argument {position} '{info.name}' ({role})"

    def _check(self, info: TensorInfo, array: np.ndarray, position: int, role: str) -> None:
        where = self._describe(info, position, role)
        if array.dtype != info.dtype:
            raise ArgumentError(f"{where}: expected dtype {info.dtype}, got {array.dtype}")
        if array.shape != info.shape:
            raise ArgumentError(f"{where}: expected shape {info.shape}, got {array.shape}")

    def _input(self, info: TensorInfo, value: Any, position: int) -> np.ndarray:
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        self._check(info, array, position, "input")
        return array if array.flags.c_contiguous and array.flags.aligned else np.ascontiguousarray(array)

    def _output(self, info: TensorInfo, value: Any, position: int) -> np.ndarray:
        if not isinstance(value, np.ndarray):
            where, kind = self._describe(info, position, "output"), type(value).__name__
            raise ArgumentError(f"{where}: expected a numpy array to write, got {kind}")
        self._check(info, value, position, "output")
        if not (value.flags.c_contiguous and value.flags.aligned and value.flags.writeable):
            raise ArgumentError(
                f"{self._describe(info, position, 'output')}: must be a writable, C-contiguous array "
                "(pass np.empty(shape, dtype) and copy afterwards)"
            )
        return value


def build(
    function: func.FuncOp | Schedule,
    target: str | None = None,
    opt_level: int = 3,
    *,
    num_threads: int | None = None,
) -> BuiltFunction:
    """Compile `function` (a te `func.FuncOp` from `te.create_function`, or a `Schedule`) for `target` (an LLVM CPU
    name; None: the host) at `opt_level` (0-3) and return it as a destination-passing callable on numpy arrays.
    `num_threads` sizes the thread pool parallel loops run on (default one per core): the one sessions of that many
    threads share (`runtime.threadpool.shared_pool`)."""
    from minimlc.schedule import Schedule

    opt_level_pipeline(opt_level)
    if isinstance(function, Schedule):
        module, name, pipeline = function.mod.clone(), function.name, scheduled_passes(opt_level)
    elif isinstance(function, func.FuncOp):
        module, name, pipeline = ModuleOp([function.clone()]), function.sym_name.data, build_pipeline(opt_level)
    else:
        raise TypeError(f"minimlc.build takes a te function (te.create_function) or a Schedule, got {function!r}")
    entry = _entry(module, name)
    entry.sym_name = StringAttr(ENTRY_FUNCTION)
    inputs, outputs = _signature(function if isinstance(function, func.FuncOp) else function.te_function)
    imported = ImportedModel(module, {}, inputs, outputs)
    compiled = compile_model(imported, pipeline, opt_level=opt_level, target=target or "host")
    return BuiltFunction(name, compiled, num_threads)


def scheduled_passes(opt_level: int) -> tuple[PassItem, ...]:
    """The passes of `opt_level` that follow the schedules: a `Schedule`'s loops go through them as they are."""
    passes = build_pipeline(opt_level)
    names = [item.name for item in passes]
    if "default-schedule" in names:
        return passes[names.index("default-schedule") + 1 :]
    return build_pipeline(opt_level, start_after="loop")


def _entry(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise ValueError(f"no function named '{name}' in the module")


def _signature(function: func.FuncOp) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """Inputs named after the te function's parameters, outputs after the values it returns."""
    inputs = [_info(arg.name_hint or f"arg{n}", arg.type) for n, arg in enumerate(function.body.block.args)]
    returned = function.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    outputs = [_info(value.name_hint or f"out{n}", value.type) for n, value in enumerate(returned.arguments)]
    return inputs, outputs


def _info(name: str, type_: Any) -> TensorInfo:
    assert isinstance(type_, TensorType)
    return TensorInfo(name, tuple(type_.get_shape()), buffer_dtype(type_.element_type))
