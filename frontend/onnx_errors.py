"""The ONNX importer's errors: every one a `ModelImportError` (a ValueError the CLI shows as one line)."""

from __future__ import annotations


class ModelImportError(ValueError):
    """The model is malformed or cannot be imported (bad attribute, shape, dtype, ...)."""


class ExternalDataError(ModelImportError):
    """A tensor stored as external data cannot be read: its file is missing, outside the model's folder, or shorter
    than the tensor."""


class UnsupportedFeatureError(ModelImportError, NotImplementedError):
    """A valid model needing what minimlc lacks (e.g. an int64 output computed at run time)."""


class UnsupportedTypeError(UnsupportedFeatureError):
    """A graph input or output, or an output computed at run time, of a type minimlc lacks (e.g. float16, sequence)."""


class UnsupportedOpsError(UnsupportedFeatureError):
    """The model uses unsupported operators; `.ops` lists (op_type, opset, node names)."""

    def __init__(self, ops: list[tuple[str, int | None, list[str]]]):
        self.ops = ops
        kinds = "type" if len(ops) == 1 else "types"
        listing = "; ".join(f"{op} (opset {opset}): {', '.join(names)}" for op, opset, names in ops)
        super().__init__(f"model has {len(ops)} unsupported operator {kinds}: {listing}")
