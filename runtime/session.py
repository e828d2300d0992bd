"""`Session`: a compiled model bound to its weights, run with ONNX Runtime's Python API; `load` reads a saved one.

    from minimlc.runtime import load
    session = load("mlp.mlc")              # written by InferenceSession(...).save("mlp.mlc")
    (logits,) = session.run(None, {"input": x})

Loading imports neither xDSL nor ONNX: `minimlc.InferenceSession` (`driver/session.py`) is this class plus the
compiler. Every input is checked (name, dtype, shape) before native code runs, so compiled kernels never see a buffer
of the wrong size; non-contiguous arrays are copied. A model compiled with run-time extents serves every shape its
symbols and bounds allow (`runtime/extents.py`). Outputs are fresh arrays each call: native code computes the
float32 ones (and int64 index outputs such as MaxPool's Indices), and outputs that are compile-time constants are
copies of their values, with their own dtype; an output of a data-dependent extent (NonZero, Compress, Unique) is cut
to the count native code returned (`lowering/abi.py`; `get_outputs` gives its upper bound). `run` is safe to call
from several threads: each call builds its own argument array and intermediate buffers. Parallel loops run on the
thread pool that every session of `num_threads` threads (default one per core) in the process shares
(`threadpool.shared_pool`: one pool's threads however many sessions are alive); a `run` that finds the pool busy
with another thread's call (of this session or another) runs its parallel loops on its own thread.
`with_num_threads(n)` gives a second session over the same compiled module, on the pool of `n` threads (the compiled
code does not depend on the thread count).
`get_providers()` is ONNX Runtime's CPU provider and `get_modelmeta()` the ONNX model's metadata (saved with the
session).

`save(path)` writes the session to one file (`minimlc.runtime.artifact`: object code, weights, signature) that
`load(path)` turns back into a session in a fraction of a second.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import trim_to_count
from minimlc.lowering.target import baseline_target
from minimlc.runtime import artifact
from minimlc.runtime.compiled import CompiledModel, rebind_weights
from minimlc.runtime.extern import check_status, raise_pending_error
from minimlc.runtime.threadpool import ThreadPool, resolve_num_threads, shared_pool

if TYPE_CHECKING:
    from minimlc.runtime.extents import DynamicEntry
    from minimlc.runtime.profiler import ProfiledCall, Profiler

_STAT_KEYS = (
    "kernels",
    "kernel_functions",
    "arena_bytes",
    "intermediate_bytes",
    "weight_bytes",
    "compile_seconds",
    "lower_seconds",
    "codegen_seconds",
    "load_seconds",
    "codegen_partitions",
    "lower_to_scf_seconds",
    "translate_seconds",
    "optimize_seconds",
    "machine_code_seconds",
    "cache_hit",
)


class InvalidInputError(ValueError):
    """A feed does not match the model's inputs (unknown or missing name, wrong dtype or shape)."""


class IndexOutOfRangeError(InvalidInputError):
    """A run-time index (of a Gather, GatherElements, GatherND, ScatterElements or ScatterND) lies outside its axis;
    the message names the node and the range (`frontend/onnx_index_checks.py`)."""


NO_MODEL_VERSION = 2**63 - 1
"""The `version` ONNX Runtime reports for a model that sets none."""


@dataclasses.dataclass(frozen=True)
class ModelMetadata:
    """The ONNX model's metadata, with the fields of ONNX Runtime's `ModelMetadata` (`get_modelmeta`)."""

    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    """The model's doc string."""
    graph_description: str = ""
    """The graph's doc string."""
    version: int = NO_MODEL_VERSION
    """The model version."""
    custom_metadata_map: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    """The model's `metadata_props`."""


class Session:
    """A compiled model bound to its weights and a thread pool, run like `onnxruntime.InferenceSession`: what
    `load` returns, and what `minimlc.InferenceSession` adds the compiler to."""

    _metadata = ModelMetadata()
    """What `get_modelmeta` returns a copy of (empty for a model built without ONNX)."""
    _input_bounds: Mapping[str, tuple[int, int]] = {}
    """Per symbol, the sizes a run may give it (`input_bounds`; `runtime/extents.py`); set before `_bind`."""
    _dynamic: DynamicEntry | None = None
    """How `run` calls a model compiled with run-time extents (None: a static one)."""

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this session to `path` (object code, weights, signature, target, versions) for `load`."""
        meta: dict[str, Any] = {"kind": "model", "opt_level": self.opt_level}
        blobs: dict[str, np.ndarray] = {}
        if self._model is not None:
            meta.update(artifact.code_meta(self._model, self.opt_level))
            blobs.update(artifact.code_blobs(self._model))
            blobs.update({f"weight:{name}": value for name, value in self._model.weights.items()})
        else:
            meta["target"] = artifact.target_meta(baseline_target())  # no code: any CPU of this architecture
        meta["outputs"] = [artifact.tensor_meta(info) for info in self._outputs]
        meta["model_inputs"] = [artifact.tensor_meta(info) for info in self._inputs]
        meta["constant_outputs"] = list(self._constant_outputs)
        if self.profiler is not None:  # a profiled build: `load` gives it its profiler back
            meta["profile"] = [dataclasses.asdict(call) for call in self.profiler.calls]
            meta["profile_clock"] = self.profiler.clock
        meta["trimmed_outputs"] = self._trimmed_outputs
        meta["sequence_outputs"] = [self._sequence_outputs, self._output_names]
        meta["index_checks"] = self._index_checks
        meta["model_metadata"] = dataclasses.asdict(self._metadata)
        if self._input_bounds:
            meta["input_bounds"] = self._input_bounds
        blobs.update({f"constant:{name}": value for name, value in self._constant_outputs.items()})
        artifact.write_file(path, meta, blobs)

    def with_weights(self, weights: Mapping[str, np.ndarray]) -> Session:
        """A session running this session's native code on other weights (same names, shapes, float32), e.g. a
        fine-tuned copy of the model: no recompile, only the load-time packing reruns.

            tuned = session.with_weights(import_model("tuned.onnx").weights)

        Raises ValueError if an output is a compile-time constant (folded from the original weights).
        """
        if self._constant_outputs or self._model is None:
            raise ValueError(
                f"outputs {sorted(self._constant_outputs)} were folded to constants at import time: "
                "they would not follow new weights; compile the new model instead"
            )
        session = self._unbound_copy()
        session._bind(rebind_weights(self._model, weights), self.opt_level, self.num_threads)
        return session

    def with_num_threads(self, num_threads: int | None) -> Session:
        """A session over this session's compiled module (no recompilation) on the shared pool of `num_threads`."""
        session = self._unbound_copy()
        session._bind(self._model, self.opt_level, num_threads)
        return session

    def _unbound_copy(self) -> Session:
        """A new session with this one's signature and metadata, for `_bind` to bind to a compiled model."""
        session = type(self).__new__(type(self))
        session._set_signature(
            self._inputs, self._outputs, self._constant_outputs, self._trimmed_outputs, self._index_checks
        )
        session._set_sequence_outputs(self._sequence_outputs, self._output_names)
        session._metadata = self._metadata
        session._input_bounds = self._input_bounds
        return session

    def _set_signature(
        self,
        inputs: Sequence[TensorInfo],
        outputs: Sequence[TensorInfo],
        constant_outputs: Mapping[str, np.ndarray],
        trimmed_outputs: Mapping[str, int] | None = None,
        index_checks: Sequence[str] = (),
    ) -> None:
        self._inputs = list(inputs)
        self._outputs = list(outputs)
        self._constant_outputs = dict(constant_outputs)
        self._trimmed_outputs = dict(trimmed_outputs or {})
        """Outputs of a data-dependent extent -> the axis cut to the count native code returns (`lowering/abi.py`)."""
        self._index_checks = list(index_checks)
        """The messages of the run-time index checks, whose counts @main returns last (`ImportedModel.index_checks`)."""
        self._input_index = {info.name: index for index, info in enumerate(self._inputs)}
        self._output_index = {info.name: index for index, info in enumerate(self._outputs)}
        self._set_sequence_outputs({}, [])

    def _set_sequence_outputs(self, sequence_outputs: Mapping[str, int | None], output_names: Sequence[str]) -> None:
        """Graph outputs that are sequences (`ImportedModel.sequence_outputs`): `run` returns each as a list of its
        elements (`name[i]` in `get_outputs`), an empty optional as None."""
        self._sequence_outputs = dict(sequence_outputs)
        self._output_names = list(output_names)

    def _bind(self, model: CompiledModel | None, opt_level: int, num_threads: int | None) -> None:
        self.num_threads = resolve_num_threads(num_threads)
        self.opt_level = opt_level
        self._model = model
        self._pool: ThreadPool | None = None
        self.profiler: Profiler | None = None
        """Kernel times of every run (`minimlc.runtime.profiler`), with `enable_profiling=True`; else None."""
        if self._model is None:
            return
        self._output_types = [(info.shape, info.dtype) for info in self._model.outputs]
        io_slots = np.zeros(len(self._model.inputs) + len(self._model.outputs), dtype=np.uintp)
        self._dynamic = None
        if self._model.extents is not None:  # the extents' slot follows the outputs; filled per run
            from minimlc.runtime.extents import DynamicEntry

            self._dynamic = DynamicEntry(self._model, self._input_bounds)
            io_slots = np.append(io_slots, np.uintp(0))
        self._args_template = np.concatenate((io_slots, self._model.weight_addresses))
        """The entry's argument array with the weights' (and the pool's) addresses filled in; copied per call."""
        if self._model.pool_slot is not None:
            self._pool = shared_pool(self.num_threads)
            self._task_baseline = self._pool.task_counts()
            self._args_template = np.insert(self._args_template, self._model.pool_slot, self._pool.address)
        for call, address in zip(self._model.extern_calls, self._model.extern_addresses):
            self._args_template = np.insert(self._args_template, call.slot, address)
        if self._model.extern_status_slot is not None:  # filled per run
            self._args_template = np.insert(self._args_template, self._model.extern_status_slot, 0)

    def _attach_profiler(self, calls: list[ProfiledCall], clock: str) -> None:
        """Read the clock buffer of a build compiled with `loop-profile-calls` reading `clock`, whose kernel calls
        are `calls`."""
        from minimlc.runtime.profiler import Profiler, check_profiling_clock

        assert self._model is not None
        check_profiling_clock(clock, self.num_threads)
        (buffer,) = [b for b in self._model.precomputed if b.dtype == np.int8 and b.nbytes == 32 * len(calls)][-1:]
        self.profiler = Profiler(calls, buffer, clock)
        self._profile_lock = threading.Lock()

    def end_profiling(self, path: str | os.PathLike[str] | None = None) -> str:
        """Write the profiled runs as a Chrome trace to `path` (default `minimlc_profile_<date>_<time>.json`, as
        ONNX Runtime names its trace) and return the path. Needs `enable_profiling=True`."""
        if self.profiler is None:
            raise ValueError("this session was not created with enable_profiling=True")
        return self.profiler.write_trace(path or time.strftime("minimlc_profile_%Y-%m-%d_%H-%M-%S.json"))

    def task_counts(self) -> list[int]:
        """Parallel-loop tasks each thread of the session's pool ran since the session started (the pool's
        `task_counts` then and now): in its runs, and in those of the sessions sharing the pool (of the same thread
        count) that ran meanwhile; [] without a pool (a model with no parallel loop). Read it while no run is on."""
        if self._pool is None:
            return []
        return [now - before for now, before in zip(self._pool.task_counts(), self._task_baseline)]

    def get_inputs(self) -> list[TensorInfo]:
        """The model's inputs: name, shape, dtype (and ONNX Runtime's `type` string)."""
        return list(self._inputs)

    def get_providers(self) -> list[str]:
        """ONNX Runtime's execution providers this session runs on: minimlc's native code runs on the CPU."""
        return ["CPUExecutionProvider"]

    def get_modelmeta(self) -> ModelMetadata:
        """The ONNX model's metadata (producer, graph name, doc strings, version, `metadata_props`)."""
        return dataclasses.replace(self._metadata, custom_metadata_map=dict(self._metadata.custom_metadata_map))

    @property
    def constant_output_names(self) -> list[str]:
        """The outputs that are compile-time constants (not computed by native code), in output order."""
        return [info.name for info in self._outputs if info.name in self._constant_outputs]

    def get_outputs(self) -> list[TensorInfo]:
        """The model's outputs: name, shape, dtype (float32 unless int64 indices or a compile-time constant)."""
        return list(self._outputs)

    @property
    def compile_seconds(self) -> float:
        """Wall time spent lowering, translating and JIT-compiling the model (0 without native code)."""
        return 0.0 if self._model is None else self._model.compile_seconds

    @property
    def stats(self) -> dict[str, int | float]:
        """What the session built, in a new dict.

        `kernels` (kernel calls per run), `kernel_functions` (distinct compiled kernels they call), `arena_bytes`
        (the one buffer every run's intermediates share, allocated per run), `intermediate_bytes` (their summed
        sizes; both 0 at O0, which allocates each intermediate on its own; with run-time extents both count only
        the intermediates of static sizes, the rest of the arena being sized per run), `weight_bytes` (weights bound),
        `compile_seconds` and its stages: `lower_seconds` (graph to `scf`, one process), `codegen_seconds` (`scf` to
        object code, `codegen_partitions` processes at once; the seconds all of them spent in each step are
        `lower_to_scf_seconds`, `translate_seconds`, `optimize_seconds`, `machine_code_seconds`), `load_seconds`
        (loading the code and the load-time precomputation). All 0 when every output is a compile-time constant
        (nothing compiled).
        """
        if self._model is None:
            return dict.fromkeys(_STAT_KEYS, 0)
        return dict(self._model.stats)

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR handed to the JIT (before LLVM's own optimisation; empty without native code)."""
        return "" if self._model is None else self._model.llvm_ir

    def run(
        self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any], run_options: object = None
    ) -> list[Any]:
        """Run the model on `input_feed` (a dict name -> array, as ONNX Runtime takes it); returns the named outputs
        (all when None), in order: arrays, and lists of arrays for sequence outputs."""
        if not self._sequence_outputs:
            return self._run_tensors(output_names, input_feed)
        unknown = [name for name in output_names or () if name not in self._output_names]
        if unknown:
            raise InvalidInputError(f"unknown output name(s) {unknown}; the model's outputs are: {self._output_names}")
        tensors = dict(zip(self._output_index, self._run_tensors(None, input_feed)))
        grouped = {
            name: [tensors[f"{name}[{i}]"] for i in range(length)] if length is not None else None
            for name, length in self._sequence_outputs.items()
        }
        return [grouped[name] if name in grouped else tensors[name] for name in output_names or self._output_names]

    def _run_tensors(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any]) -> list[np.ndarray]:
        """`run` returning the tensors of `get_outputs` (each element of a sequence output on its own)."""
        wanted = self._output_positions(output_names)
        inputs = self._checked_inputs(input_feed)
        outputs: list[np.ndarray] = []
        if self._model is not None:
            output_types, args = self._output_types, self._args_template.copy()
            if self._dynamic is not None:
                extents, output_types = self._dynamic.prepared(inputs)
                args[self._dynamic.slot] = _address(extents)
            outputs = [np.empty(shape, dtype=dtype) for shape, dtype in output_types]
            for slot, array in enumerate((*inputs, *outputs)):
                args[slot] = _address(array)
            status = None
            if self._model.extern_status_slot is not None:
                status = np.zeros(2, np.int32)
                args[self._model.extern_status_slot] = _address(status)
            if self.profiler is None:
                self._model.entry(_address(args))
            else:
                with self._profile_lock:  # one clock buffer per session: profiled runs take turns
                    start = time.monotonic_ns()
                    self._model.entry(_address(args))
                    self.profiler.record_run(start, time.monotonic_ns())
            if status is not None:
                raise_pending_error()  # a Python external function's exception, on this thread
                check_status(self._model.extern_calls, status)
            if self._index_checks:
                outputs = self._checked_indices(outputs)
            if self._trimmed_outputs:
                outputs = self._trimmed(outputs)
        if self._constant_outputs:
            computed = iter(outputs)
            outputs = [
                self._constant_outputs[info.name].copy() if info.name in self._constant_outputs else next(computed)
                for info in self._outputs
            ]
        return [outputs[position] for position in wanted]

    def _checked_indices(self, results: list[np.ndarray]) -> list[np.ndarray]:
        """@main's results without the index checks' counts (the trailing ones); raises `IndexOutOfRangeError` for the
        first check that found indices out of range."""
        results, counts = results[: -len(self._index_checks)], results[-len(self._index_checks) :]
        for message, count in zip(self._index_checks, counts):
            if found := int(count.reshape(())):
                raise IndexOutOfRangeError(f"{message}: {found} out of range")
        return results

    def _trimmed(self, results: list[np.ndarray]) -> list[np.ndarray]:
        """@main's computed outputs, each data-dependent one cut to its count (the trailing results)."""
        outputs, counts = results[: -len(self._trimmed_outputs)], results[-len(self._trimmed_outputs) :]
        computed = [info.name for info in self._outputs if info.name not in self._constant_outputs]
        for (name, axis), count in zip(self._trimmed_outputs.items(), counts):
            position = computed.index(name)
            outputs[position] = trim_to_count(outputs[position], axis, count)
        return outputs

    def _output_positions(self, output_names: Sequence[str] | None) -> list[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        unknown = [name for name in output_names if name not in self._output_index]
        if unknown:
            raise InvalidInputError(
                f"unknown output name(s) {', '.join(map(repr, unknown))}; "
                f"the model's outputs are: {', '.join(self._output_index)}"
            )
        return [self._output_index[name] for name in output_names]

    def _checked_inputs(self, input_feed: Mapping[str, Any]) -> list[np.ndarray]:
        """The feeds in input order, contiguous, checked: names and dtypes, and shapes (a model compiled with
        run-time extents checks them against its symbols when it computes the extents)."""
        self._check_input_names(input_feed)
        if self._dynamic is not None:
            return [_checked_array(info, input_feed[info.name], shape=False) for info in self._dynamic.inputs]
        return [_checked_array(info, input_feed[info.name]) for info in self._inputs]

    def _check_input_names(self, input_feed: Mapping[str, Any]) -> None:
        """Refuse a feed that is not a dict, or does not name every input once and nothing else."""
        if not isinstance(input_feed, Mapping):
            raise TypeError(
                f"input_feed must be a dict {{name: array}} (as ONNX Runtime takes it), not a "
                f"{type(input_feed).__name__}; the model's inputs are: {', '.join(self._input_index)}"
            )
        unknown = [name for name in input_feed if name not in self._input_index]
        missing = [info.name for info in self._inputs if info.name not in input_feed]
        if unknown or missing:
            problems = []
            if unknown:
                problems.append(f"unknown input name(s) {', '.join(map(repr, unknown))}")
            if missing:
                problems.append(f"missing input(s) {', '.join(map(repr, missing))}")
            expected = ", ".join(f"{info.name} {list(info.shape)} {info.dtype}" for info in self._inputs)
            raise InvalidInputError(f"{'; '.join(problems)}; the model's inputs are: {expected}")


def load(path: str | os.PathLike[str], *, num_threads: int | None = None) -> Session:
    """The session `InferenceSession.save` wrote to `path`, with a pool of `num_threads`; loads neither xDSL nor ONNX.

    Raises `ArtifactError` (a ValueError) if the file is not a minimlc model, is truncated or corrupt, was written by
    another minimlc or llvmlite version, or holds code this host's CPU cannot run.
    """
    start = time.perf_counter()
    meta, blobs = artifact.read_file(path)
    if meta.get("kind") != "model":
        raise artifact.ArtifactError(f"'{path}' is a compile-cache entry, not a saved model")
    model = None
    if "code_0" in blobs:
        weights = {name: blobs[f"weight:{name}"] for name in meta["entry"]["weights"]}
        model = artifact.bind_code(meta, blobs, weights)
        model.stats["load_seconds"] = time.perf_counter() - start
    session = Session.__new__(Session)
    session._set_signature(
        [artifact.tensor_from_meta(info) for info in meta["model_inputs"]],
        [artifact.tensor_from_meta(info) for info in meta["outputs"]],
        {name: np.array(blobs[f"constant:{name}"]) for name in meta["constant_outputs"]},
        meta.get("trimmed_outputs", {}),
        meta.get("index_checks", []),
    )
    session._set_sequence_outputs(*meta.get("sequence_outputs", ({}, [])))
    session._metadata = ModelMetadata(**meta.get("model_metadata", {}))
    session._input_bounds = {symbol: (lo, hi) for symbol, (lo, hi) in meta.get("input_bounds", {}).items()}
    session._bind(model, meta["opt_level"], num_threads)
    if model is not None and "profile" in meta:
        from minimlc.runtime.profiler import ProfiledCall

        calls = [ProfiledCall.from_json(call) for call in meta["profile"]]
        session._attach_profiler(calls, meta.get("profile_clock", "wall"))
    return session


def _address(array: np.ndarray) -> int:
    # ctypes' buffer protocol is several times cheaper than `array.ctypes.data`; it needs a writable, non-empty buffer.
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):
        return array.ctypes.data


def _checked_array(info: TensorInfo, value: Any, shape: bool = True) -> np.ndarray:
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype != info.dtype:
        raise InvalidInputError(
            f"input '{info.name}': expected dtype {info.dtype} ({info.type}), got {array.dtype}; "
            f"convert it with .astype(np.{info.dtype})"
        )
    if shape and array.shape != info.shape:
        raise InvalidInputError(f"input '{info.name}': expected shape {info.shape}, got {array.shape}")
    if not array.flags.c_contiguous or not array.flags.aligned:
        array = np.ascontiguousarray(array)
    return array
