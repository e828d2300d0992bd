"""`InferenceSession`: compile an ONNX model (or a graph-level module) and run it with ONNX Runtime's Python API.

    from minimlc import InferenceSession
    session = InferenceSession("examples/mlp.onnx")
    (logits,) = session.run(None, {"input": x})
    session.save("mlp.mlc")          # minimlc.runtime.load("mlp.mlc") runs it without the compiler

Compiling is this room's work (import, the opt level's pipeline, codegen through the compile cache); everything a
session does once compiled (checking feeds, running, saving, profiling) is the runtime's `Session`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from minimlc.lowering.abi import extern_calls_in
from minimlc.lowering.target import target_from_name
from minimlc.runtime.extents import checked_bounds
from minimlc.runtime.extern import check_calls
from minimlc.runtime.session import NO_MODEL_VERSION, ModelMetadata, Session
from minimlc.runtime.threadpool import resolve_num_threads

if TYPE_CHECKING:
    import numpy as np
    import onnx

    from minimlc.driver.specializations import Specializations
    from minimlc.frontend.onnx import ImportedModel
    from minimlc.frontend.onnx_model_file import ReadModel
    from minimlc.frontend.signature import TensorInfo
    from minimlc.lowering.pipeline import ExtraPasses, Pipeline
    from minimlc.runtime.extents import InputBounds


class InferenceSession(Session):
    """Compile an ONNX model (path, bytes or `onnx.ModelProto`) and run it like `onnxruntime.InferenceSession`."""

    def __init__(
        self,
        model: onnx.ModelProto | str | os.PathLike[str] | bytes,
        sess_options: None = None,
        providers: Sequence[str | tuple[str, Mapping[str, Any]]] | None = None,
        *,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        input_bounds: InputBounds | None = None,
        opt_level: int = 3,
        num_threads: int | None = None,
        target: str = "host",
        extra_passes: ExtraPasses | None = None,
        cache: bool = True,
        tuning_db: str | os.PathLike[str] | None = None,
        enable_profiling: bool = False,
        profiling_clock: str = "wall",
        precision: str = "fp32",
        calibration: str | os.PathLike[str] | Sequence[Mapping[str, np.ndarray]] | None = None,
    ):
        """Import and compile `model`; `input_shapes` fixes symbolic dimensions (e.g. the batch size).

        A model whose inputs keep symbolic dimensions is compiled once, with run-time extents, to serve every shape
        (`driver/symbolic.py`); `input_bounds` (`{symbol: largest}` or `{symbol: (smallest, largest)}`) limits the
        sizes a run may give each symbol. Where its ops do not all compile with run-time extents, it is compiled
        per distinct input shapes at the first run with them instead (`stats["symbolic_fallback"]` says why).

        `sess_options` (None) and `providers` are ONNX Runtime's, accepted so that code written for it runs:
        `providers` may name only `CPUExecutionProvider` (alone or with an options dict), which minimlc runs on.

        `opt_level` (0-3, see `minimlc.lowering.pipeline.OPT_LEVELS`) chooses the optimisation pipeline. `num_threads`
        (a positive int, or None for one per core) is the number of threads parallel loops run on, the calling thread
        included; the pool starts only if the model has a parallel loop. `target` is the CPU to compile for: `host`
        or an LLVM CPU name (`x86-64-v3`, `skylake-avx512`, `znver4`, ...) whose features this host has.
        `extra_passes` inserts passes (minimlc's or a plugin's) into the opt level's pipeline, by the stage they run
        after (`graph`, `te`, `loop`, `schedule`, `scf`, `llvm`; see `minimlc.lowering.pipeline.build_pipeline`):
        `extra_passes={"graph": ["toy-relu-to-clip"]}`. `cache` looks the compiled code up in (and adds it to)
        the compile cache, which `MINIMLC_CACHE=0` turns off (`minimlc.driver.cache`). `tuning_db` applies the
        fastest schedule of each kernel in that tuning database (`minimlc tune`; the default schedule elsewhere).
        `enable_profiling` times every kernel call of every run (`self.profiler`, `end_profiling()`; compiled
        without the cache), by `profiling_clock`: `wall`, or `cpu` (the calling thread's CPU time; one thread only).
        `precision` `fp32` (the default) compiles the model as it is; `int8` first quantizes a float model to int8
        QDQ (`minimlc.quantize_static`, `driver/calibration.py`) with activation ranges from running it on
        `calibration` (feeds `[{input: array}, ...]`, or a folder or .npz of them): required, there is no dynamic
        fallback. The quantizer's description lands in the model metadata (`minimlc.quantization`). `bf16` runs the
        inner products of float32 MatMul, Gemm and Conv in bfloat16 on the target's bfloat16 dot product
        (`graph-bf16-products` after the graph stage), refused where the target has none.
        """
        from minimlc.driver.calibration import bf16_passes, check_precision, quantized_for_session
        from minimlc.driver.specializations import Specializations, has_free_dimensions
        from minimlc.driver.symbolic import NeedsFixedShapes, log_fallback, symbols_of
        from minimlc.frontend.onnx import check_model, import_model
        from minimlc.frontend.onnx_declared import declared_inputs, declared_outputs
        from minimlc.frontend.onnx_model_file import read_model
        from minimlc.lowering.pipeline import build_pipeline, opt_level_pipeline
        from minimlc.lowering.strategy.tuning_db import TuningDatabase
        from minimlc.runtime.profiler import PROFILING_CLOCKS, check_profiling_clock

        _check_ort_arguments(sess_options, providers)
        check_precision(precision, calibration)
        opt_level_pipeline(opt_level)  # reject a bad level, target, pass list or database before importing
        target_from_name(target)
        if precision == "bf16":
            extra_passes = bf16_passes(target, extra_passes)
        if tuning_db is not None:
            TuningDatabase(tuning_db)
        if enable_profiling:
            check_profiling_clock(profiling_clock, resolve_num_threads(num_threads))
            cache = False
        profiling = PROFILING_CLOCKS[profiling_clock] if enable_profiling else None
        edited = extra_passes or tuning_db is not None or profiling is not None  # else the opt level's own pipeline
        pipeline = (
            build_pipeline(opt_level, extra_passes=extra_passes, tuning_db=tuning_db, profiling=profiling)
            if edited
            else None
        )
        read = read_model(quantized_for_session(model, calibration) if precision == "int8" else model)
        self._metadata = _model_metadata(read.proto)
        inputs = declared_inputs(read.proto.graph, input_shapes or {})
        self._input_bounds = checked_bounds(input_bounds, symbols_of(inputs))
        if has_free_dimensions(inputs):
            check_model(read)  # the model's errors now, not at its first run
            clock = profiling_clock if enable_profiling else None
            compile_options = (opt_level, num_threads, target, pipeline, cache, clock)
            refusal = self._compile_symbolic(read, inputs, input_shapes, *compile_options)
            if refusal is None:
                return
            # Compiled per input shapes, at the first run with them.
            if enable_profiling:
                raise NeedsFixedShapes(
                    "enable_profiling needs fixed input shapes: pass input_shapes={name: shape, ...} (the model "
                    f"does not compile with run-time dimensions: {refusal})"
                )
            log_fallback(refusal)
            self._symbolic_fallback = refusal

            def compile_for(shapes: dict[str, tuple[int, ...]]) -> Session:
                specialized = InferenceSession.__new__(InferenceSession)
                specialized._compile(
                    import_model(read, {**(input_shapes or {}), **shapes}),
                    opt_level,
                    num_threads,
                    target,
                    pipeline,
                    cache,
                )
                specialized._metadata = self._metadata
                return specialized

            specializations = Specializations(inputs, compile_for, self._input_bounds)
            self._specialize(specializations, declared_outputs(read.proto.graph), opt_level, num_threads)
            return
        imported = import_model(read, input_shapes)
        self._compile(imported, opt_level, num_threads, target, pipeline, cache, profiled=enable_profiling)
        if enable_profiling and self._model is not None:
            self._start_profiling(imported, profiling_clock)

    @classmethod
    def from_imported(
        cls,
        imported: ImportedModel,
        *,
        opt_level: int = 3,
        num_threads: int | None = None,
        target: str = "host",
        extra_passes: ExtraPasses | None = None,
        input_bounds: InputBounds | None = None,
        cache: bool = False,
    ) -> InferenceSession:
        """A session over a graph-level module and weight store built without ONNX (e.g. parsed from `.mlir`);
        `input_bounds` limits the symbols of its entry's `minimlc.input_symbols` (over the model's own
        `imported.input_bounds`, symbol by symbol); `cache` looks the code up in (and adds it to) the compile cache,
        as the constructor does."""
        from minimlc.lowering.abi import entry_function, input_symbols_of
        from minimlc.lowering.pipeline import build_pipeline

        session = cls.__new__(cls)
        bounds = {**imported.input_bounds, **(input_bounds or {})}
        session._input_bounds = checked_bounds(bounds, input_symbols_of(entry_function(imported.module)))
        pipeline = build_pipeline(opt_level, extra_passes=extra_passes) if extra_passes else None
        session._compile(imported, opt_level, num_threads, target, pipeline, cache)
        return session

    def _compile_symbolic(
        self,
        read: ReadModel,
        inputs: Sequence[TensorInfo],
        input_shapes: Mapping[str, Sequence[int]] | None,
        opt_level: int,
        num_threads: int | None,
        target: str,
        pipeline: Pipeline | None,
        cache: bool,
        profiling_clock: str | None,
    ) -> str | None:
        """Compile `read` once with its symbolic dimensions as run-time extents (`inputs`, as declared, are what
        `get_inputs` reports), profiled by `profiling_clock` if given; None when done, else why the importer or a
        pass refused (`driver/symbolic.py`)."""
        from minimlc.driver.symbolic import COMPILE_REFUSALS, import_symbolic, reported_outputs
        from minimlc.frontend.onnx_declared import declared_outputs
        from minimlc.frontend.onnx_errors import ModelImportError

        try:
            imported = import_symbolic(read, input_shapes)
        except ModelImportError as error:
            return f"the importer refused: {error}"
        check_calls(extern_calls_in(imported.module))  # the user's error, whatever the shapes: not a refusal
        outputs = reported_outputs(imported.outputs, declared_outputs(read.proto.graph))
        try:
            self._compile(imported, opt_level, num_threads, target, pipeline, cache, profiling_clock is not None)
        except COMPILE_REFUSALS as error:
            return f"{type(error).__name__}: {error}"
        if self._model is not None and self._model.extents is not None:  # else the code takes static shapes
            signature = (imported.constant_outputs, imported.trimmed_outputs, imported.index_checks)
            self._set_signature(inputs, outputs, *signature)
            self._set_sequence_outputs(imported.sequence_outputs, imported.output_names)
        if profiling_clock is not None and self._model is not None:
            self._start_profiling(imported, profiling_clock)
        return None

    def _compile(
        self,
        imported: ImportedModel,
        opt_level: int,
        num_threads: int | None,
        target: str,
        pipeline: Pipeline | None,
        cache: bool,
        profiled: bool = False,
    ) -> None:
        """Compile `imported` and bind its code. The compile runs in a forked child (`compile_model`'s `isolated`),
        except where the module is `profiled`: the profiler reads the kernels from the lowered module."""
        from minimlc.driver.cache import compile_cached

        signature = (imported.inputs, imported.outputs, imported.constant_outputs, imported.trimmed_outputs)
        self._set_signature(*signature, imported.index_checks)
        self._set_sequence_outputs(imported.sequence_outputs, imported.output_names)
        check_calls(extern_calls_in(imported.module))  # unregistered external functions, before any work
        # A model whose outputs are all constants needs no native code.
        compiled = imported.computed_outputs
        model = (
            compile_cached(imported, pipeline, opt_level=opt_level, target=target, cache=cache, isolated=not profiled)
            if compiled
            else None
        )
        self._bind(model, opt_level, num_threads)

    # A model with symbolic dimensions: a session per input shapes (`driver/specializations.py`).

    _specializations: Specializations | None = None
    _symbolic_fallback: str | None = None
    """Why a model with symbolic dimensions is compiled per input shapes (None: it compiled once, or has none)."""

    def _specialize(
        self, specializations: Specializations, outputs: Sequence[TensorInfo], opt_level: int, num_threads: int | None
    ) -> None:
        """Become the session over `specializations`, declaring their inputs and `outputs` (symbols kept)."""
        self._set_signature(specializations.inputs, outputs, {})
        self._bind(None, opt_level, num_threads)
        self._specializations = specializations

    def run(
        self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any], run_options: object = None
    ) -> list[Any]:
        if self._specializations is None:
            return super().run(output_names, input_feed, run_options)
        self._check_input_names(input_feed)
        shapes = self._specializations.shapes_of(input_feed)
        return self._specializations.session_for(shapes).run(output_names, input_feed, run_options)

    run.__doc__ = Session.run.__doc__

    def compiled_shapes(self) -> list[dict[str, tuple[int, ...]]]:
        """The input shapes compiled for: the declared ones, or for a model with symbolic dimensions those of the
        specialisations bound now (least recently used first)."""
        if self._specializations is None:
            return [{info.name: info.shape for info in self._inputs}]
        return self._specializations.compiled_shapes()

    @property
    def stats(self) -> dict[str, int | float | str]:
        """`Session.stats` plus `compiles`, the models compiled (or read from the compile cache) for this session:
        1 (a model with symbolic dimensions compiled with run-time extents serves every shape), or, where such a
        model could not compile so, one per distinct input shapes run so far (the other statistics are then those of
        the last run's specialisation) and `symbolic_fallback`, why."""
        if self._specializations is None:
            return {**Session.stats.fget(self), "compiles": int(self._model is not None)}  # type: ignore[attr-defined]
        latest = self._specializations.latest
        stats = Session.stats.fget(self) if latest is None else latest.stats  # type: ignore[attr-defined]
        fallback = {} if self._symbolic_fallback is None else {"symbolic_fallback": self._symbolic_fallback}
        return {**stats, "compiles": self._specializations.compiles, **fallback}

    @property
    def llvm_ir(self) -> str:
        latest = self._specializations.latest if self._specializations is not None else None
        return latest.llvm_ir if latest is not None else Session.llvm_ir.fget(self)  # type: ignore[attr-defined]

    def save(self, path: str | os.PathLike[str]) -> None:
        if self._specializations is not None:
            raise ValueError(
                "this session's model has symbolic dimensions: it is compiled per input shapes, and a saved model "
                "holds one compiled model; save a session with fixed shapes: InferenceSession(model, "
                "input_shapes={name: shape, ...})"
            )
        super().save(path)

    save.__doc__ = Session.save.__doc__

    def with_weights(self, weights: Mapping[str, np.ndarray]) -> Session:
        if self._specializations is None:
            return super().with_weights(weights)
        return self._adapted(lambda session: session.with_weights(weights), self.num_threads)

    with_weights.__doc__ = Session.with_weights.__doc__

    def with_num_threads(self, num_threads: int | None) -> Session:
        if self._specializations is None:
            return super().with_num_threads(num_threads)
        return self._adapted(lambda session: session.with_num_threads(num_threads), num_threads)

    with_num_threads.__doc__ = Session.with_num_threads.__doc__

    def _adapted(self, adapt: Callable[[Session], Session], num_threads: int | None) -> InferenceSession:
        """A session over this one's model whose specialisations are this one's, each passed through `adapt`."""
        from minimlc.driver.specializations import Specializations

        specializations = self._specializations
        assert specializations is not None
        session = InferenceSession.__new__(InferenceSession)
        session._metadata = self._metadata
        session._input_bounds = self._input_bounds
        session._symbolic_fallback = self._symbolic_fallback
        adapted = Specializations(
            specializations.inputs, lambda shapes: adapt(specializations.compile(shapes)), specializations.bounds
        )
        session._specialize(adapted, self._outputs, self.opt_level, num_threads)
        return session

    def _start_profiling(self, imported: ImportedModel, clock: str) -> None:
        from minimlc.driver.profiling import profiled_calls

        self._attach_profiler(profiled_calls(imported.module), clock)  # the compile lowered the module in place


def _check_ort_arguments(sess_options: object, providers: Sequence[Any] | None) -> None:
    """Refuse ONNX Runtime session options. Providers: as ONNX Runtime falls back to the CPU where a listed provider
    is not available, others beside `CPUExecutionProvider` are ignored with a warning; a list without it is refused."""
    if sess_options is not None:
        raise TypeError(
            "minimlc.InferenceSession takes no onnxruntime.SessionOptions: pass sess_options=None and give minimlc's "
            "own options as keywords (opt_level, num_threads, enable_profiling, ...)"
        )
    listed = [providers] if isinstance(providers, str) else providers or ()
    names = [provider[0] if isinstance(provider, tuple) else provider for provider in listed]
    others = [name for name in names if name != "CPUExecutionProvider"]
    if others and len(others) == len(names):
        raise ValueError(
            f"execution provider {others[0]!r} is not supported: minimlc runs on the CPU "
            "(providers=['CPUExecutionProvider'])"
        )
    if others:
        warnings.warn(
            f"minimlc runs on the CPU: execution provider(s) {', '.join(map(repr, others))} ignored",
            UserWarning,
            stacklevel=3,
        )


def _model_metadata(model: onnx.ModelProto) -> ModelMetadata:
    """The metadata of an ONNX model, with the fields of ONNX Runtime's."""
    return ModelMetadata(
        producer_name=model.producer_name,
        graph_name=model.graph.name,
        domain=model.domain,
        description=model.doc_string,
        graph_description=model.graph.doc_string,
        version=model.model_version if model.HasField("model_version") else NO_MODEL_VERSION,
        custom_metadata_map={prop.key: prop.value for prop in model.metadata_props},
    )
