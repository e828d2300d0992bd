"""minimlc as an ONNX backend (`onnx.backend.base`): what onnx's conformance runner and other tools drive.

    import minimlc.runtime.backend as backend
    rep = backend.prepare(model)              # compiles now when every input dimension is static
    (y,) = rep.run([x])                       # a list (in the model's input order), a dict, or one array
    (y,) = backend.run_model(model, [x])
    (y,) = backend.run_node(onnx.helper.make_node("Relu", ["x"], ["y"]), [x])

A model with symbolic input dimensions compiles on its first run, with the shapes of the given inputs, and keeps one
compiled session per input-shape signature. minimlc computes in float32 only: a model whose inputs or outputs are
not float32 tensors raises `NotImplementedError` at `prepare`, as do unsupported operators
(`UnsupportedOpsError`). Arrays are checked against the model's declared dtype (a float64 array given for a float32
input is an error, as in ONNX Runtime); Python and numpy scalars and nested lists are converted to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from minimlc.runtime.session import InferenceSession, InvalidInputError

_SUPPORTED_ELEMENT_TYPES = {onnx.TensorProto.FLOAT: np.dtype(np.float32)}


class MinimlcBackendRep(BackendRep):
    """A prepared model: compiled sessions keyed by the shapes of the inputs they were compiled for."""

    def __init__(self, model: onnx.ModelProto):
        self._model = model
        initializers = {tensor.name for tensor in model.graph.initializer}
        self._inputs = [vi for vi in model.graph.input if vi.name not in initializers]
        self._input_dtypes = [_SUPPORTED_ELEMENT_TYPES[vi.type.tensor_type.elem_type] for vi in self._inputs]
        self._output_names = [vi.name for vi in model.graph.output]
        self._declared_shapes = [_declared_shape(vi) for vi in self._inputs]
        self._sessions: dict[tuple[tuple[int, ...], ...], InferenceSession] = {}
        static_shapes = [shape for shape in self._declared_shapes if shape is not None and None not in shape]
        if len(static_shapes) == len(self._inputs):
            self._session(tuple(static_shapes))  # pyright: ignore[reportArgumentType]

    @property
    def sessions(self) -> dict[tuple[tuple[int, ...], ...], InferenceSession]:
        """The sessions compiled so far, by input-shape signature (read-only use: timing, inspection)."""
        return dict(self._sessions)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run on `inputs` (a list in input order, a name -> array mapping, or one array for a one-input model)."""
        arrays = [
            value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)
            for value, dtype in zip(self._ordered(inputs), self._input_dtypes)
        ]
        for vi, declared, array in zip(self._inputs, self._declared_shapes, arrays):
            if declared is not None and not _matches(declared, array.shape):
                expected = tuple("?" if dim is None else dim for dim in declared)
                raise InvalidInputError(f"input '{vi.name}': expected shape {expected}, got {array.shape}")
        session = self._session(tuple(array.shape for array in arrays))
        outputs = session.run(None, {vi.name: array for vi, array in zip(self._inputs, arrays)})
        return namedtupledict("Outputs", self._output_names)(*outputs)

    def _ordered(self, inputs: Any) -> list[Any]:
        names = [vi.name for vi in self._inputs]
        if isinstance(inputs, Mapping):
            unknown = sorted(set(inputs) - set(names))
            missing = [name for name in names if name not in inputs]
            if unknown or missing:
                raise InvalidInputError(
                    f"inputs must name exactly the model's inputs {names}; unknown: {unknown}, missing: {missing}"
                )
            return [inputs[name] for name in names]
        if isinstance(inputs, (list, tuple)):
            values = list(inputs)
        else:
            values = [inputs]
        if len(values) != len(names):
            raise InvalidInputError(f"the model takes {len(names)} input(s) {names}, got {len(values)}")
        return values

    def _session(self, shapes: tuple[tuple[int, ...], ...]) -> InferenceSession:
        session = self._sessions.get(shapes)
        if session is None:
            input_shapes = {vi.name: shape for vi, shape in zip(self._inputs, shapes)}
            session = InferenceSession(self._model, input_shapes=input_shapes)
            self._sessions[shapes] = session
        return session


class MinimlcBackend(Backend):
    """The ONNX backend API over minimlc's compiler (CPU only, float32 only)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether the device is supported and every graph input and output is a float32 tensor."""
        return cls.supports_device(device) and _unsupported_types(model) is None

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> MinimlcBackendRep:
        """Check the model, and compile it now unless an input has a symbolic or unknown dimension.

        Raises `NotImplementedError` for a device other than CPU, non-float32 graph inputs or outputs, and
        unsupported operators (`UnsupportedOpsError`); `ModelImportError` for any other import problem.
        """
        if not cls.supports_device(device):
            raise NotImplementedError(f"minimlc runs on the CPU only, not on '{device}'")
        problem = _unsupported_types(model)
        if problem is not None:
            raise NotImplementedError(problem)
        return MinimlcBackendRep(model)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[np.ndarray, ...]:
        """Prepare `model` and run it once on `inputs`."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[np.ndarray, ...]:
        """Run one node on `inputs` (a list matching `node.input`'s non-empty names, or a name -> array mapping).

        The node is wrapped in a one-node model at `kwargs["opset_version"]` (default: onnx's newest opset).
        """
        super().run_node(node, inputs, device, outputs_info, **kwargs)
        names = [name for name in node.input if name]
        feeds = inputs if isinstance(inputs, Mapping) else dict(zip(names, inputs, strict=True))
        arrays = {name: np.asarray(value) for name, value in feeds.items()}
        input_infos = [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
            for name, array in arrays.items()
        ]
        opset = int(kwargs.get("opset_version", onnx.defs.onnx_opset_version()))
        model = helper.make_model(
            helper.make_graph([node], f"run_node_{node.op_type}", input_infos, []),
            opset_imports=[helper.make_opsetid("", opset)],
        )
        inferred = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model).graph.value_info}
        model.graph.output.extend(
            inferred.get(name) or helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
            for name in node.output
            if name
        )
        return cls.prepare(model, device).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Only the CPU."""
        try:
            return Device(device).type == DeviceType.CPU
        except AttributeError:
            return False


def _declared_shape(vi: onnx.ValueInfoProto) -> tuple[int | None, ...] | None:
    """The input's declared shape, None for a symbolic or unknown dimension; None if the rank is unknown."""
    tensor = vi.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return tuple(dim.dim_value if dim.HasField("dim_value") else None for dim in tensor.shape.dim)


def _matches(declared: tuple[int | None, ...], shape: tuple[int, ...]) -> bool:
    return len(declared) == len(shape) and all(d is None or d == s for d, s in zip(declared, shape))


def _unsupported_types(model: onnx.ModelProto) -> str | None:
    initializers = {tensor.name for tensor in model.graph.initializer}
    for kind, values in (("input", model.graph.input), ("output", model.graph.output)):
        for vi in values:
            if kind == "input" and vi.name in initializers:
                continue
            if not vi.type.HasField("tensor_type"):
                which = vi.type.WhichOneof("value")
                return f"graph {kind} '{vi.name}' is a {which}; minimlc supports float32 tensors only"
            element = vi.type.tensor_type.elem_type
            if element not in _SUPPORTED_ELEMENT_TYPES:
                name = onnx.TensorProto.DataType.Name(element)
                return f"graph {kind} '{vi.name}' has element type {name}; minimlc supports float32 (FLOAT) only"
    return None


is_compatible = MinimlcBackend.is_compatible
prepare = MinimlcBackend.prepare
run_model = MinimlcBackend.run_model
run = MinimlcBackend.run_model
run_node = MinimlcBackend.run_node
supports_device = MinimlcBackend.supports_device
