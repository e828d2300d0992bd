"""Sequence and optional graph inputs for the ONNX backend (`backend/onnx_backend.py`): flattened into tensor inputs.

minimlc compiles a model for the structure of the values given: a sequence input `s` given as a list of N arrays
becomes N tensor inputs `s[0]` .. `s[N-1]` and a `SequenceConstruct` node at the front of the graph that rebuilds
`s` (an empty list a `SequenceEmpty`); an optional input is an `Optional` node over its tensor or sequence, or an
empty `Optional` for None. The importer then keeps the sequence as a list of graph values
(`frontend/onnx_sequence.py`): every element is still a run-time buffer.

    s: seq(float) given [a (2x3), b (4,)] -> inputs s[0]: float[2,3], s[1]: float[4]; s = SequenceConstruct(s[0], s[1])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import helper

Structure = tuple[Any, ...]
"""A container value's structure, hashable: ("tensor", shape), ("sequence", (shapes...)) or ("optional", inner or
None)."""


def is_container(vi: onnx.ValueInfoProto) -> bool:
    """Whether a graph input or output is a sequence or an optional."""
    return vi.type.WhichOneof("value") in ("sequence_type", "optional_type")


def element_type(type_proto: onnx.TypeProto) -> int:
    """The element type of the tensors a (possibly nested) tensor, sequence or optional type holds."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return element_type(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return element_type(type_proto.optional_type.elem_type)
    if kind == "tensor_type":
        return type_proto.tensor_type.elem_type
    return onnx.TensorProto.UNDEFINED


def checked_value(type_proto: onnx.TypeProto, value: Any, dtype: np.dtype, what: str) -> Any:
    """`value` as the arrays, lists and Nones of `type_proto`, each array of `dtype`."""
    kind = type_proto.WhichOneof("value")
    if kind == "optional_type":
        return None if value is None else checked_value(type_proto.optional_type.elem_type, value, dtype, what)
    if kind == "sequence_type":
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{what} is a sequence: give a list of arrays, got {type(value).__name__}")
        return [checked_value(type_proto.sequence_type.elem_type, item, dtype, what) for item in value]
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)
    if array.dtype != dtype:
        raise ValueError(f"{what}: expected dtype {dtype}, got {array.dtype}")
    return array


def structure(type_proto: onnx.TypeProto, value: Any) -> Structure:
    """The structure of a checked value of `type_proto` (what a compiled session is specialised for)."""
    kind = type_proto.WhichOneof("value")
    if kind == "optional_type":
        return ("optional", None if value is None else structure(type_proto.optional_type.elem_type, value))
    if kind == "sequence_type":
        return ("sequence", tuple(item.shape for item in value))
    return ("tensor", value.shape)


def flattened_feeds(name: str, value: Any, optional: bool) -> dict[str, np.ndarray]:
    """The tensor inputs a checked container value is fed as (`name[i]` for a sequence's elements, `name.element`
    for an optional's tensor, nothing for an empty optional)."""
    if value is None:
        return {}
    if isinstance(value, list):
        return {f"{name}[{i}]": item for i, item in enumerate(value)}
    return {f"{name}.element" if optional else name: value}


def flattened_shapes(name: str, shape: Structure, output: str | None = None) -> dict[str, tuple[int, ...]]:
    """The shapes of the tensor inputs `flattened_feeds` gives for a value of structure `shape`."""
    kind, content = shape
    if kind == "optional":
        return {} if content is None else flattened_shapes(name, content, f"{name}.element")
    if kind == "sequence":
        return {f"{name}[{i}]": item for i, item in enumerate(content)}
    return {output or name: content}


def with_flattened_inputs(model: onnx.ModelProto, structures: Mapping[str, Structure]) -> onnx.ModelProto:
    """A copy of `model` whose container inputs (name -> structure) are tensor inputs and front nodes."""
    flattened = onnx.ModelProto()
    flattened.CopyFrom(model)
    graph = flattened.graph
    inputs = list(graph.input)
    front: list[onnx.NodeProto] = []
    del graph.input[:]
    for vi in inputs:
        if vi.name not in structures:
            graph.input.append(vi)
            continue
        element = element_type(vi.type)
        tensors, nodes = _rebuilt(vi.name, vi.name, vi.type, structures[vi.name], element)
        graph.input.extend(helper.make_tensor_value_info(name, element, shape) for name, shape in tensors)
        front += nodes
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(front + nodes)
    return flattened


def _rebuilt(
    name: str, output: str, type_proto: onnx.TypeProto, shape: Structure, element: int
) -> tuple[list[tuple[str, tuple[int, ...]]], list[onnx.NodeProto]]:
    """The tensor inputs and the nodes that build `output` (of `type_proto`, structure `shape`) from them."""
    kind, content = shape
    if kind == "optional":
        if content is None:
            return [], [helper.make_node("Optional", [], [output], type=type_proto.optional_type.elem_type)]
        inner = f"{name}.element"
        tensors, nodes = _rebuilt(name, inner, type_proto.optional_type.elem_type, content, element)
        return tensors, [*nodes, helper.make_node("Optional", [inner], [output])]
    if kind == "sequence":
        names = [f"{name}[{i}]" for i in range(len(content))]
        if not names:
            return [], [helper.make_node("SequenceEmpty", [], [output], dtype=element)]
        return list(zip(names, content)), [helper.make_node("SequenceConstruct", names, [output])]
    return [(output, content)], []
