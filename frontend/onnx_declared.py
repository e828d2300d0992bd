"""The inputs and outputs an ONNX graph declares, symbolic dimensions kept: what a session of a model with symbolic
dimensions reports before any shape is known (`get_inputs`, as ONNX Runtime does) and checks its feeds against.

    declared_inputs(graph, {})   # [TensorInfo('input_ids', ('batch', 'sequence'), int64), ...]

A dimension is its size (int), its `dim_param` (str), or None where the model gives neither. `input_shapes` fixes
inputs whole, as `import_model` takes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper

from minimlc.frontend.onnx_errors import ModelImportError
from minimlc.frontend.signature import TensorInfo

Dimension = int | str | None


def declared_inputs(graph: onnx.GraphProto, input_shapes: Mapping[str, Sequence[int]]) -> list[TensorInfo]:
    """The graph's run-time inputs (initializers listed as inputs are weights, not inputs); `ModelImportError` for
    an input of unknown rank that `input_shapes` does not give."""
    weights = {tensor.name for tensor in graph.initializer} | {
        sparse.values.name for sparse in graph.sparse_initializer
    }
    inputs = []
    for info in graph.input:
        if info.name in weights:
            continue
        if info.name in input_shapes:
            shape: tuple[Dimension, ...] = tuple(int(size) for size in input_shapes[info.name])
        elif info.type.tensor_type.HasField("shape"):
            shape = _dimensions(info)
        else:
            raise ModelImportError(
                f"input '{info.name}' has an unknown rank; pass input_shapes={{'{info.name}': [...]}}"
            )
        inputs.append(TensorInfo(info.name, shape, _dtype(info)))  # type: ignore[arg-type]
    return inputs


def declared_outputs(graph: onnx.GraphProto) -> list[TensorInfo]:
    """The graph's outputs with the dimensions it declares (an output of unknown rank: shape ())."""
    return [TensorInfo(info.name, _dimensions(info), _dtype(info)) for info in graph.output]  # type: ignore[arg-type]


def _dimensions(info: onnx.ValueInfoProto) -> tuple[Dimension, ...]:
    return tuple(
        dim.dim_value if dim.HasField("dim_value") else dim.dim_param if dim.HasField("dim_param") else None
        for dim in info.type.tensor_type.shape.dim
    )


def _dtype(info: onnx.ValueInfoProto) -> np.dtype:
    """The element type's numpy dtype (float32 where the model declares none; compiling checks the rest)."""
    element = info.type.tensor_type.elem_type
    if element == onnx.TensorProto.UNDEFINED:
        return np.dtype(np.float32)
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(element))
    except KeyError:  # an element type numpy lacks: compiling refuses it by name
        return np.dtype(np.float32)
