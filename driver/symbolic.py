"""One compile for every shape: a model whose inputs keep symbolic dimensions, compiled with run-time extents
(`docs/design/symbolic_shapes.md`).

    session = InferenceSession("mlp.onnx")           # input: ['batch', 784]; imported with `?`, compiled once
    session.run(None, {"input": x_1x784})            # the same code at batch 1 ...
    session.run(None, {"input": x_8x784})            # ... and 8; session.stats["compiles"] == 1

The importer's symbolic mode keeps each `?`; the pipeline lowers them to run-time extents; the runtime fills the
extents from the feeds (`runtime/extents.py`). Where the importer or a pass cannot take a model's run-time dimensions
it refuses with a clear error (`COMPILE_REFUSALS`), and the session compiles one specialisation per distinct input
shapes instead (`driver/specializations.py`), saying why in `stats["symbolic_fallback"]`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence

from xdsl.utils.exceptions import DiagnosticException, VerifyException

from minimlc.frontend.onnx import ImportedModel, import_model
from minimlc.frontend.onnx_model_file import ReadModel
from minimlc.frontend.signature import TensorInfo

COMPILE_REFUSALS = (DiagnosticException, VerifyException, ValueError)
"""What a pass raises for an op it cannot lower with run-time dimensions: a diagnostic naming the op, or the
`ValueError` of a static-only query (`loop.ForOp.trip_count` of a dynamic loop)."""


class NeedsFixedShapes(ValueError):
    """An option that needs the model compiled once (profiling) given for a model that compiles per input shapes."""


_logged: set[str] = set()


def log_fallback(refusal: str) -> None:
    """Log, once per process for each `refusal`, that a model is compiled per input shapes and why (a warning of the
    `minimlc` logger)."""
    if refusal not in _logged:
        _logged.add(refusal)
        logging.getLogger("minimlc").warning("the model is compiled once per distinct input shapes: %s", refusal)


def import_symbolic(read: ReadModel, input_shapes: Mapping[str, Sequence[int]] | None) -> ImportedModel:
    """`read` imported with its symbolic dimensions kept as `?` (those `input_shapes` does not fix);
    `ModelImportError` where the importer cannot keep them."""
    return import_model(read, input_shapes, symbolic=True)


def symbols_of(inputs: Sequence[TensorInfo]) -> Iterator[str]:
    """The symbols (named dimensions) of declared `inputs`, in input order then axis order."""
    return (size for info in inputs for size in info.shape if isinstance(size, str))


def reported_outputs(imported: Sequence[TensorInfo], declared: Sequence[TensorInfo]) -> list[TensorInfo]:
    """The outputs a session reports (`get_outputs`): each imported output, as the graph declares it where it
    declares one of the same name and rank (symbols kept, as ONNX Runtime reports them)."""
    by_name = {info.name: info for info in declared}
    return [
        by_name[info.name] if info.name in by_name and len(by_name[info.name].shape) == len(info.shape) else info
        for info in imported
    ]
