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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from minimlc.lowering.abi import extern_calls_in
from minimlc.lowering.target import target_from_name
from minimlc.runtime.extern import check_calls
from minimlc.runtime.session import NO_MODEL_VERSION, ModelMetadata, Session
from minimlc.runtime.threadpool import resolve_num_threads

if TYPE_CHECKING:
    import onnx

    from minimlc.frontend.onnx import ImportedModel
    from minimlc.frontend.onnx_model_file import ModelSource
    from minimlc.lowering.pipeline import ExtraPasses, Pipeline


class InferenceSession(Session):
    """Compile an ONNX model (path, bytes or `onnx.ModelProto`) and run it like `onnxruntime.InferenceSession`."""

    def __init__(
        self,
        model: onnx.ModelProto | str | os.PathLike[str] | bytes,
        sess_options: None = None,
        providers: Sequence[str | tuple[str, Mapping[str, Any]]] | None = None,
        *,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        opt_level: int = 3,
        num_threads: int | None = None,
        target: str = "host",
        extra_passes: ExtraPasses | None = None,
        cache: bool = True,
        tuning_db: str | os.PathLike[str] | None = None,
        enable_profiling: bool = False,
        profiling_clock: str = "wall",
    ):
        """Import and compile `model`; `input_shapes` fixes symbolic dimensions (e.g. the batch size).

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
        """
        from minimlc.frontend.onnx import import_model
        from minimlc.lowering.pipeline import build_pipeline, opt_level_pipeline
        from minimlc.lowering.strategy.tuning_db import TuningDatabase
        from minimlc.runtime.profiler import PROFILING_CLOCKS, check_profiling_clock

        _check_ort_arguments(sess_options, providers)
        opt_level_pipeline(opt_level)  # reject a bad level, target, pass list or database before importing
        target_from_name(target)
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
        imported = import_model(model, input_shapes)
        self._compile(imported, opt_level, num_threads, target, pipeline, cache)
        self._metadata = _model_metadata(model)
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
    ) -> InferenceSession:
        """A session over a graph-level module and weight store built without ONNX (e.g. parsed from `.mlir`)."""
        from minimlc.lowering.pipeline import build_pipeline

        session = cls.__new__(cls)
        pipeline = build_pipeline(opt_level, extra_passes=extra_passes) if extra_passes else None
        session._compile(imported, opt_level, num_threads, target, pipeline, cache=False)
        return session

    def _compile(
        self,
        imported: ImportedModel,
        opt_level: int,
        num_threads: int | None,
        target: str,
        pipeline: Pipeline | None,
        cache: bool,
    ) -> None:
        from minimlc.driver.cache import compile_cached

        signature = (imported.inputs, imported.outputs, imported.constant_outputs, imported.trimmed_outputs)
        self._set_signature(*signature, imported.index_checks)
        self._set_sequence_outputs(imported.sequence_outputs, imported.output_names)
        check_calls(extern_calls_in(imported.module))  # unregistered external functions, before any work
        # A model whose outputs are all constants needs no native code.
        compiled = imported.computed_outputs
        model = (
            compile_cached(imported, pipeline, opt_level=opt_level, target=target, cache=cache) if compiled else None
        )
        self._bind(model, opt_level, num_threads)

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


def _model_metadata(model: ModelSource) -> ModelMetadata:
    """The metadata of an ONNX model (parsed again from a path or bytes, without its external data)."""
    import onnx

    if isinstance(model, bytes):
        model = onnx.load_model_from_string(model)
    elif not isinstance(model, onnx.ModelProto):
        model = onnx.load(model, load_external_data=False)  # pyright: ignore[reportUnknownMemberType]
    return ModelMetadata(
        producer_name=model.producer_name,
        graph_name=model.graph.name,
        domain=model.domain,
        description=model.doc_string,
        graph_description=model.graph.doc_string,
        version=model.model_version if model.HasField("model_version") else NO_MODEL_VERSION,
        custom_metadata_map={prop.key: prop.value for prop in model.metadata_props},
    )
