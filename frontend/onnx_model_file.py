"""Reading an ONNX model for import without copying its weights more than once.

`read_model` parses a path, serialized bytes or a `ModelProto`. A path's external data is not loaded into the parsed
model: `ExternalData` memory-maps each data file once (copy-on-write, so nothing the importer does reaches the file)
and gives each tensor stored there as a view of that map, so an initializer stored outside the model costs only the
pages that are read (a 3 GB initializer stays 3 GB at most, never copied). A tensor in a node attribute stored
outside (rare: `convert_attribute=True`) is read into the model parsed from a path, as `onnx.load` does. External data
is found next to the model file, or in the current directory for bytes and a `ModelProto` (as `onnx.numpy_helper`
and ONNX Runtime do).

`check_structure` runs `onnx.checker` over a copy of the model's structure whose large tensors hold no data: the
weights are never serialised again (protobuf cannot serialise past 2 GB, and a copy doubles the memory). In that copy
the main graph's inputs and outputs need not declare a shape (nor outputs a type): the importer computes every shape
itself, and ONNX Runtime runs such models; an input of unknown rank is refused by the importer, naming it.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from onnx import helper, numpy_helper
from onnx.external_data_helper import ExternalDataInfo, load_external_data_for_tensor, uses_external_data

from minimlc.frontend.onnx_errors import ExternalDataError, ModelImportError

ModelSource = Union[onnx.ModelProto, str, os.PathLike[str], bytes, "ReadModel"]
"""What `import_model` takes: a parsed model, a path to an `.onnx` file, a model serialized to bytes, or what
`read_model` read from one of those."""

_TENSOR_HOLDERS = frozenset(
    f"onnx.{name}"
    for name in ("ModelProto", "GraphProto", "NodeProto", "AttributeProto", "FunctionProto", "TrainingInfoProto")
)
"""Messages that may hold a TensorProto, directly or not: `_structure` copies the others whole."""
_HOLDERS = _TENSOR_HOLDERS | {"onnx.TensorProto"}

_HOLDING = frozenset(
    (onnx.AttributeProto.TENSOR, onnx.AttributeProto.TENSORS, onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
)
"""Attribute types that hold tensors: a node without such attributes is copied whole (most nodes, and fast)."""

_CHECKED_ELEMENTS = 4096
"""Tensors up to this many elements are checked with their data; larger ones (the weights) by name and type only."""

_NOT_MAPPED = frozenset(
    getattr(onnx.TensorProto, name)
    for name in ("STRING", "INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2")
    if hasattr(onnx.TensorProto, name)
)
"""Element types whose stored bytes are not the numpy array's (strings, packed sub-byte types): read, not mapped."""


@dataclass
class ReadModel:
    """A parsed model and where its external data lives."""

    proto: onnx.ModelProto
    external: ExternalData


def read_model(model: ModelSource) -> ReadModel:
    """Parse `model` without loading its external data (`ExternalData` maps it when an initializer is read).

    Raises FileNotFoundError when a path does not exist, and `ModelImportError` when it is a directory or does not
    parse (or a tensor in a node attribute stored outside cannot be read: `ExternalDataError`). A model read
    before is returned as it is."""
    if isinstance(model, ReadModel):
        return model
    if isinstance(model, onnx.ModelProto):
        return ReadModel(model, ExternalData(Path.cwd()))
    if not isinstance(model, bytes):
        if Path(model).is_dir():
            raise ModelImportError(f"'{model}' is a directory, not an ONNX model file")
        if not Path(model).is_file():
            raise FileNotFoundError(2, "no such ONNX model file", str(model))
    try:
        if isinstance(model, bytes):
            return ReadModel(onnx.load_model_from_string(model), ExternalData(Path.cwd()))
        proto = onnx.load(model, load_external_data=False)  # pyright: ignore[reportUnknownMemberType]
    except (DecodeError, ValueError) as error:
        source = "the given bytes" if isinstance(model, bytes) else f"'{model}'"
        raise ModelImportError(f"cannot parse an ONNX model from {source}: {error}") from error
    directory = Path(model).parent
    for tensor in _attribute_tensors(proto.graph):
        if uses_external_data(tensor):
            try:
                load_external_data_for_tensor(tensor, str(directory))
            except (OSError, ValueError, onnx.checker.ValidationError) as error:
                message = f"cannot read tensor '{tensor.name}' stored as external data: {error}"
                raise ExternalDataError(message) from None
    return ReadModel(proto, ExternalData(directory))


def check_structure(proto: onnx.ModelProto) -> None:
    """Run `onnx.checker` over `proto`'s structure, its tensors emptied and its main graph's inputs and outputs free
    to declare no shape; raise `ModelImportError` if it is invalid."""
    skeleton = _structure(proto)
    assert isinstance(skeleton, onnx.ModelProto)
    for info in [*skeleton.graph.input, *skeleton.graph.output]:
        if info.type.WhichOneof("value") in (None, "tensor_type") and not info.type.tensor_type.HasField("shape"):
            info.type.tensor_type.elem_type = info.type.tensor_type.elem_type  # present, even if UNDEFINED
            info.type.tensor_type.shape.SetInParent()  # the importer computes shapes
    try:
        onnx.checker.check_model(skeleton)  # pyright: ignore[reportUnknownMemberType]
    except (onnx.checker.ValidationError, ValueError) as error:
        raise ModelImportError(f"invalid ONNX model: {error}") from error


@dataclass
class ExternalData:
    """The external data files of one model, each memory-mapped once (copy-on-write) when a tensor is first read."""

    directory: Path
    """Where the model's data files are (the model file's folder)."""
    _maps: dict[Path, np.ndarray] = field(default_factory=dict[Path, np.ndarray], init=False, repr=False)

    def array(self, tensor: onnx.TensorProto) -> np.ndarray:
        """The array of an initializer: a view of its data file's map if it is stored outside, else its own copy."""
        if not uses_external_data(tensor):
            return numpy_helper.to_array(tensor)
        try:
            info = ExternalDataInfo(tensor)
        except ValueError as error:
            raise ExternalDataError(f"initializer '{tensor.name}': {error}") from None
        path = self._path(tensor.name, info.location)
        if tensor.data_type in _NOT_MAPPED or sys.byteorder == "big":
            return numpy_helper.to_array(tensor, str(self.directory))
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type))
        size = math.prod(tensor.dims) * dtype.itemsize
        data = self._map(path)
        offset = info.offset or 0
        length = len(data) - offset if info.length is None else info.length
        if offset + length > len(data) or length != size:
            raise ExternalDataError(
                f"initializer '{tensor.name}' ({size} bytes) is stored in '{path}' at offset {offset}, length "
                f"{length}, but the file has {len(data)} bytes"
            )
        view = data[offset : offset + size]
        if view.ctypes.data % dtype.itemsize:  # native code reads whole elements: copy a misaligned tensor
            view = view.copy()
        return view.view(dtype).reshape(tuple(tensor.dims))

    def _path(self, name: str, location: str) -> Path:
        """The data file `location` names, which must be a file under `directory`."""
        relative = Path(location)
        if not location or relative.is_absolute() or ".." in relative.parts:
            raise ExternalDataError(
                f"initializer '{name}' is stored in external data file '{location}', which is not a path inside "
                f"the model's folder '{self.directory}'"
            )
        path = self.directory / relative
        if not path.is_file():
            state = "is not a file" if path.exists() else "does not exist"
            raise ExternalDataError(f"external data file '{path}' of initializer '{name}' {state}")
        return path

    def _map(self, path: Path) -> np.ndarray:
        """The bytes of `path`, mapped copy-on-write (an empty array for an empty file, which cannot be mapped)."""
        if path not in self._maps:
            empty = path.stat().st_size == 0
            mapped = np.zeros(0, np.uint8) if empty else np.memmap(path, dtype=np.uint8, mode="c")
            self._maps[path] = np.asarray(mapped)
        return self._maps[path]


def _attribute_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every tensor held in a node attribute of `graph` or of its subgraphs."""
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            for subgraph in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                yield from _attribute_tensors(subgraph)


def _structure(message: Message) -> Message:
    """A copy of `message` whose large tensors (and those stored outside) are empty placeholders of their name and
    element type (dims [0]: the checker counts the bytes of the data a tensor holds)."""
    if isinstance(message, onnx.TensorProto):
        if uses_external_data(message) or math.prod(message.dims) > _CHECKED_ELEMENTS:
            return onnx.TensorProto(name=message.name, data_type=message.data_type, dims=[0])
    copy = type(message)()
    plain_node = isinstance(message, onnx.NodeProto) and all(a.type not in _HOLDING for a in message.attribute)
    if plain_node or message.DESCRIPTOR.full_name not in _TENSOR_HOLDERS:
        copy.CopyFrom(message)
        return copy
    for descriptor, value in message.ListFields():
        target = getattr(copy, descriptor.name)
        holder = descriptor.type == FieldDescriptor.TYPE_MESSAGE and descriptor.message_type.full_name in _HOLDERS
        if _repeated(descriptor):
            target.extend((_structure(item) for item in value) if holder else value)
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            target.CopyFrom(_structure(value) if holder else value)
        else:
            setattr(copy, descriptor.name, value)
    return copy


def _repeated(descriptor: FieldDescriptor) -> bool:
    """Whether a field is repeated (`is_repeated` from protobuf 5.x, `label` before)."""
    repeated = getattr(descriptor, "is_repeated", None)
    return repeated if repeated is not None else descriptor.label == FieldDescriptor.LABEL_REPEATED
