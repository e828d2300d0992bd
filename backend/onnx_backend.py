"""minimlc as an ONNX backend (`onnx.backend.base`): what onnx's conformance runner and other tools drive.

    import minimlc.backend.onnx_backend as backend
    rep = backend.prepare(model)              # compiles now when every input is float32 with static dimensions
    (y,) = rep.run([x])                       # a list (in the model's input order), a dict, or one array
    (y,) = backend.run_model(model, [x])
    (y,) = backend.run_node(onnx.helper.make_node("Relu", ["x"], ["y"]), [x])

minimlc computes on float32, int32, int64 and bool tensors and specialises the operands that set shapes, as TVM's
`bind_params` and ONNX Runtime's constant inputs do. A model with symbolic input dimensions compiles once, at `prepare`,
for every shape (`InferenceSession` with the symbols kept, `docs/design/symbolic_shapes.md`) unless it has bound or
container inputs: then it compiles on its first run, with the shapes of the given inputs. Graph inputs read where the
frontend needs a compile-time constant (`frontend.onnx_operators.CONSTANT_OPERANDS`: Reshape's shape, Slice's starts, a
reduction's axes, ..., and Dropout's float ratio and bool training_mode) are bound when the model runs: their values
become initializers of a copy of the model (read there only: an input also read as data stays a run-time input for those
reads), which is then compiled. Every other input, integer and bool ones included, is data that native code computes
with at run time: nothing computed from it is folded at import time. The prepared model keeps one compiled session per
`Signature` (every input's shape and the bound inputs' values) and reuses it whenever the same signature comes again.
Outputs that are compile-time constants after that (a Shape, a ConstantOfShape, a Dropout mask) come back with their own
dtype (int64, bool, ...); outputs computed by native code have the dtype the model declares.

A sequence input is given as a list of arrays (an optional as an array, a list or None): a session is compiled per
structure of the value (length and element shapes), with the elements as tensor inputs (`backend_containers`);
sequence outputs come back as lists. Inputs of any other type raise `UnsupportedTypeError` (a `NotImplementedError`)
at `prepare`; unsupported operators (`UnsupportedOpsError`) and other unsupported features
(`UnsupportedFeatureError`, e.g. an op computing on float32 only given int64 data) raise when the model compiles:
at `prepare`, or at the first run of a signature. Arrays are checked against the model's declared dtype (a float64
array given for a float32 input is an error, as in ONNX Runtime); Python and numpy scalars and nested lists are
converted to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from minimlc.backend import containers
from minimlc.backend import shape_inputs as backend_shape_inputs
from minimlc.driver.session import InferenceSession
from minimlc.frontend.onnx_errors import UnsupportedTypeError
from minimlc.frontend.onnx_operators import CONSTANT_OPERANDS
from minimlc.frontend.onnx_ops import ELEMENT_TYPES
from minimlc.runtime.session import InvalidInputError

_INPUT_ELEMENT_TYPES = {helper.np_dtype_to_tensor_dtype(dtype): dtype for dtype in ELEMENT_TYPES}
"""The element types of graph inputs: each is fed at run time, or bound where it sets a shape."""


class Signature(NamedTuple):
    """What one compiled session is specialised for."""

    shapes: tuple[tuple[int, ...], ...]
    """Every input's shape, in the model's input order (a sequence's or optional's structure:
    `backend_containers.Structure`)."""
    bound_values: tuple[tuple[int | float | bool, ...], ...] = ()
    """The bound inputs' values (flattened, in input order)."""


class MinimlcBackendRep(BackendRep):
    """A prepared model: compiled sessions keyed by the `Signature` of the inputs they were compiled for."""

    def __init__(self, model: onnx.ModelProto):
        self._model = model
        initializers = {tensor.name for tensor in model.graph.initializer}
        self._inputs = [vi for vi in model.graph.input if vi.name not in initializers]
        element_types = [containers.element_type(vi.type) for vi in self._inputs]
        self._containers = [containers.is_container(vi) for vi in self._inputs]
        constant_operands = backend_shape_inputs.shape_setting_inputs(model.graph)
        read_as_data = set(_read_as_data(model.graph))
        self._bound = [vi.name in constant_operands for vi in self._inputs]
        self._fed = [vi.name in read_as_data or vi.name not in constant_operands for vi in self._inputs]
        self._input_dtypes = [_INPUT_ELEMENT_TYPES[element] for element in element_types]
        self._output_names = [vi.name for vi in model.graph.output]
        self._declared_shapes = [_declared_shape(vi) for vi in self._inputs]
        self._sessions: dict[Signature, InferenceSession] = {}
        static_shapes = [shape for shape in self._declared_shapes if shape is not None and None not in shape]
        self._every_shape: InferenceSession | None = None
        """The one session of a model with symbolic dimensions, no bound and no container inputs."""
        if len(static_shapes) == len(self._inputs) and not any(self._bound):
            self._session(Signature(tuple(static_shapes)), {})  # pyright: ignore[reportArgumentType]
        elif not any(self._bound) and not any(self._containers):
            self._every_shape = InferenceSession(model)

    @property
    def model(self) -> onnx.ModelProto:
        """The model as prepared (bound inputs still graph inputs)."""
        return self._model

    @property
    def bound_inputs(self) -> list[str]:
        """The inputs bound as constants when the model runs, in input order."""
        return [vi.name for vi, is_bound in zip(self._inputs, self._bound) if is_bound]

    @property
    def fed_inputs(self) -> list[str]:
        """The inputs fed at run time (every input not bound, and bound ones also read as data), in input order."""
        return [vi.name for vi, is_fed in zip(self._inputs, self._fed) if is_fed]

    @property
    def sessions(self) -> dict[Signature, InferenceSession]:
        """The sessions compiled so far, by signature (read-only use: timing, inspection); none where one session
        serves every shape (`every_shape_session`)."""
        return dict(self._sessions)

    @property
    def every_shape_session(self) -> InferenceSession | None:
        """The one session of a model with symbolic dimensions (no bound or container inputs), compiled at `prepare`."""
        return self._every_shape

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run on `inputs` (a list in input order, a name -> array mapping, or one array for a one-input model)."""
        arrays = [
            self._container(vi, value, dtype)
            if is_container
            else value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)
            for vi, is_container, value, dtype in zip(
                self._inputs, self._containers, self._ordered(inputs), self._input_dtypes
            )
        ]
        for vi, declared, array in zip(self._inputs, self._declared_shapes, arrays):
            if declared is not None and not _matches(declared, array.shape):
                expected = tuple("?" if dim is None else dim for dim in declared)
                raise InvalidInputError(f"input '{vi.name}': expected shape {expected}, got {array.shape}")
        bound: dict[str, np.ndarray] = {}
        feeds: dict[str, np.ndarray] = {}
        for vi, dtype, is_bound, is_fed, array in zip(
            self._inputs, self._input_dtypes, self._bound, self._fed, arrays
        ):
            if is_fed and containers.is_container(vi):
                feeds.update(containers.flattened_feeds(vi.name, array, vi.type.HasField("optional_type")))
            elif is_fed:
                feeds[vi.name] = array  # the session checks its dtype
            if is_bound and array.dtype != dtype:
                raise InvalidInputError(
                    f"input '{vi.name}': expected dtype {dtype}, got {array.dtype}; convert it with .astype(np.{dtype})"
                )
            if is_bound:
                bound[vi.name] = array
        shapes = [
            containers.structure(vi.type, array) if is_container else array.shape
            for vi, is_container, array in zip(self._inputs, self._containers, arrays)
        ]
        signature = Signature(tuple(shapes), tuple(tuple(array.ravel().tolist()) for array in bound.values()))
        session = self._every_shape or self._session(signature, bound)
        outputs = session.run(None, feeds)
        return namedtupledict("Outputs", self._output_names)(*outputs)

    @staticmethod
    def _container(vi: onnx.ValueInfoProto, value: Any, dtype: np.dtype) -> Any:
        try:
            return containers.checked_value(vi.type, value, dtype, f"input '{vi.name}'")
        except ValueError as error:
            raise InvalidInputError(str(error)) from error

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

    def _session(self, signature: Signature, bound: Mapping[str, np.ndarray]) -> InferenceSession:
        """The session compiled for `signature`, compiling it (with the `bound` inputs as initializers) if new."""
        session = self._sessions.get(signature)
        if session is None:
            fed = {vi.name for vi, is_fed in zip(self._inputs, self._fed) if is_fed}
            model = _with_initializers(self._model, bound, fed)
            input_shapes = {vi.name: shape for vi, shape in zip(self._inputs, signature.shapes) if vi.name in fed}
            structures = {vi.name: input_shapes.pop(vi.name) for vi in self._inputs if containers.is_container(vi)}
            for name, structure in structures.items():
                input_shapes.update(containers.flattened_shapes(name, structure))
            if structures:
                model = containers.with_flattened_inputs(model, structures)
            session = InferenceSession(model, input_shapes=input_shapes)
            self._sessions[signature] = session
        return session


def _with_initializers(
    model: onnx.ModelProto, values: Mapping[str, np.ndarray], fed: set[str]
) -> onnx.ModelProto:
    """`model`, or a copy of it in which the named inputs are initializers holding `values` where they set shapes
    (`CONSTANT_OPERANDS`); an input also in `fed` (read as data too) stays a run-time input, and its shape-setting
    reads take a bound copy of its value (`<name>.bound`), as do copies of the nodes computing a constant operand from
    it (`backend_shape_inputs`)."""
    if not values:
        return model
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    renamed = {name: f"{name}.bound" for name in values if name in fed}
    backend_shape_inputs.with_bound_operands(bound.graph, renamed)
    bound.graph.initializer.extend(
        numpy_helper.from_array(array, renamed.get(name, name)) for name, array in values.items()
    )
    return bound


class MinimlcBackend(Backend):
    """The ONNX backend API over minimlc's compiler (CPU only, float32/int32/int64/bool tensors, shape-setting inputs
    bound)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether the device is supported, every graph input a float32, int32, int64 or bool tensor, every output a
        tensor (whether its ops support its types only compiling tells)."""
        return cls.supports_device(device) and _unsupported_types(model) is None

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> MinimlcBackendRep:
        """Check the model, and compile it now if every input is float32 with static dimensions.

        Raises `NotImplementedError` for a device other than CPU; its subclasses `UnsupportedTypeError` for graph
        inputs other than float32, int32, int64 or bool tensors and non-tensor outputs and, when compiling now,
        `UnsupportedOpsError` for unsupported operators and `UnsupportedFeatureError` for other unsupported features;
        `ModelImportError` for any other import problem.
        """
        if not cls.supports_device(device):
            raise NotImplementedError(f"minimlc runs on the CPU only, not on '{device}'")
        problem = _unsupported_types(model)
        if problem is not None:
            raise UnsupportedTypeError(problem)
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
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        if not vi.type.HasField("tensor_type") and not containers.is_container(vi):
            return f"graph input '{vi.name}' is a {vi.type.WhichOneof('value')}; minimlc supports tensors only"
        element = containers.element_type(vi.type)
        if element not in _INPUT_ELEMENT_TYPES:
            name = onnx.TensorProto.DataType.Name(element)
            return (
                f"graph input '{vi.name}' has element type {name}; minimlc supports "
                f"{', '.join(map(str, _INPUT_ELEMENT_TYPES.values()))} inputs"
            )
    for vi in model.graph.output:
        if not vi.type.HasField("tensor_type") and not containers.is_container(vi):
            return f"graph output '{vi.name}' is a {vi.type.WhichOneof('value')}; minimlc supports tensors only"
        if containers.element_type(vi.type) == onnx.TensorProto.STRING:
            return f"graph output '{vi.name}' holds strings; minimlc supports numbers only"
    return None


def _read_as_data(graph: onnx.GraphProto) -> Iterator[str]:
    """The names of the values read outside `CONSTANT_OPERANDS`: node inputs, values a node's subgraphs use, graph
    outputs."""
    for node in graph.node:
        constant = CONSTANT_OPERANDS.get(node.op_type, ()) if node.domain in ("", "ai.onnx") else ()
        yield from (name for position, name in enumerate(node.input) if name and position not in constant)
        for attribute in node.attribute:
            for subgraph in (*attribute.graphs, *([attribute.g] if attribute.HasField("g") else [])):
                yield from _read_as_data(subgraph)
    yield from (vi.name for vi in graph.output)


is_compatible = MinimlcBackend.is_compatible
prepare = MinimlcBackend.prepare
run_model = MinimlcBackend.run_model
run = MinimlcBackend.run_model
run_node = MinimlcBackend.run_node
supports_device = MinimlcBackend.supports_device
