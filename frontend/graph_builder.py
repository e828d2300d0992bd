"""`GraphBuilder`: build a `graph`-dialect model from Python, as Relax's `BlockBuilder` does, instead of importing
ONNX. The result is an `ImportedModel`, which `InferenceSession.from_imported` compiles like an imported ONNX model.

    bb = GraphBuilder()
    x = bb.input("x", (1, 784))
    h = bb.call_extern("env.linear", [x, bb.weight("w0", w0), bb.weight("b0", b0)], (1, 128))
    h = bb.emit("relu", h)                          # any graph op, by name or class, with its attributes
    y = bb.emit_te(te_function, h)                  # a te-level function (func.func of te.computes) as a kernel
    y = bb.emit_te(lambda A: te.compute(A.shape, lambda i, j: te.max(A[i, j], 0.0), name="relu"), y)  # TVM-style
    bb.output(y, "logits")
    model = bb.finish()                             # ImportedModel: module, weights, inputs, outputs

Weights never enter the IR: `weight` (or a numpy array passed as an operand) adds the array to the weight store and
emits a `graph.weight` handle.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

import minimlc.te as te
from minimlc.dialects import graph
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.onnx_ops import ELEMENT_TYPES, dtype_of, sanitise
from minimlc.frontend.signature import TensorInfo
from minimlc.te import emit as te_emit

_GRAPH_OPS: dict[str, type[IRDLOperation]] = {op.name: op for op in graph.Graph.operations}


class GraphBuildError(ValueError):
    """A graph op the builder cannot make: an unknown op name, wrong operands or attributes, or a verifier error."""


class GraphBuilder:
    """Builds one function `@main` op by op; `finish()` returns it as an `ImportedModel`."""

    def __init__(self) -> None:
        self._block = Block()
        self._inputs: list[TensorInfo] = []
        self._outputs: list[tuple[str, SSAValue]] = []
        self._weights: dict[str, np.ndarray] = {}

    def input(self, name: str, shape: Sequence[int | str], dtype: Any = np.float32) -> SSAValue:
        """A model input of `shape` and `dtype` (float32, int32, int64 or bool); a size given as a name
        (`("batch", 16)`) is a `?` of that symbol (`minimlc.input_symbols`), known at run time."""
        element = _element_type(dtype, f"input '{name}'")
        if any(info.name == name for info in self._inputs):
            raise GraphBuildError(f"input '{name}' is already defined")
        sizes = [graph.DYNAMIC if isinstance(size, str) else size for size in shape]
        value = self._block.insert_arg(TensorType(element, sizes), len(self._block.args))
        value.name_hint = name
        self._inputs.append(TensorInfo(name, tuple(shape), np.dtype(dtype)))
        return value

    def weight(self, name: str, array: np.ndarray) -> SSAValue:
        """A `graph.weight` handle to `array`, stored in the model's weight store under `name`."""
        array = np.ascontiguousarray(array)
        element = _element_type(array.dtype, f"weight '{name}'")
        if name in self._weights and self._weights[name] is not array:
            raise GraphBuildError(f"weight '{name}' is already defined")
        self._weights[name] = array
        handle = self._append(graph.WeightOp(name, array.shape, element)).results[0]
        handle.name_hint = sanitise(name)
        return handle

    def emit(self, op: str | type[IRDLOperation], *operands: Any, **attributes: Any) -> SSAValue:
        """Append a graph op, named (`"relu"`, `"graph.gemm"`) or by class (`graph.GemmOp`), built with its
        constructor's arguments (`emit("gemm", x, w, b, trans_b=True)`, `emit("softmax", x, 1)`); numpy arrays among
        them become weights. Returns its (first) result."""
        op_class = _graph_op(op)
        # Values and arrays are operands; anything else (None for an absent operand, an axis) goes as it is.
        values = [self._value(v) if isinstance(v, SSAValue | np.ndarray) else v for v in operands]
        try:
            created = op_class(*values, **attributes)
        except (TypeError, AssertionError, ValueError) as error:
            message = f"{op_class.name}: cannot build it from these operands and attributes: {error}"
            raise GraphBuildError(message) from error
        return self._append(created).results[0]

    def call_extern(
        self,
        name: str,
        operands: Sequence[Any],
        out_shape: Sequence[int] | Sequence[Sequence[int]],
        out_dtype: Any | Sequence[Any] = np.float32,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """A call to the external function registered as `name` (`minimlc.register_func`), destination-passing:
        it receives the operands, then result buffers of `out_shape`/`out_dtype` (a list of shapes and of dtypes
        for several results), which it fills. Returns the result, or a tuple of them."""
        several = bool(out_shape) and not isinstance(out_shape[0], int)
        shapes = [tuple(s) for s in out_shape] if several else [tuple(out_shape)]  # type: ignore[arg-type]
        dtypes = list(out_dtype) if several and isinstance(out_dtype, list | tuple) else [out_dtype] * len(shapes)
        types = [TensorType(_element_type(d, f"result of '{name}'"), list(s)) for s, d in zip(shapes, dtypes)]
        call = self._append(graph.CallExternOp(name, [self._value(v) for v in operands], types))
        return tuple(call.results) if several else call.results[0]

    def emit_te(
        self, function: func.FuncOp | ModuleOp | Callable[..., Any], *operands: Any
    ) -> SSAValue | tuple[SSAValue, ...]:
        """Use a te-level function (a `func.func` of `te.compute`s over tensor arguments, as `te.create_function`
        makes, or such a function parsed from text; a module holding one) as a kernel on `operands`: its body is
        inlined here, so each compute becomes a kernel of the model. Returns its result, or a tuple of them.

        `function` may also be a Python callable over `minimlc.te` tensors, as in TVM's `bb.emit_te`: it is called
        with one `te.placeholder` per operand (of the operand's shape and dtype, named after its parameters) and
        returns the computed tensor, or a tuple of them; the te function it describes is inlined as above."""
        values = [self._value(operand) for operand in operands]
        if not isinstance(function, func.FuncOp | ModuleOp) and callable(function):
            function = _traced_te_function(function, values)
        function = _single_function(function)
        params = function.body.block.args
        if len(operands) != len(params):
            raise GraphBuildError(
                f"emit_te @{function.sym_name.data}: takes {len(params)} operands, {len(operands)} given"
            )
        for index, (param, value) in enumerate(zip(params, values)):
            if param.type != value.type:
                raise GraphBuildError(
                    f"emit_te @{function.sym_name.data}: operand {index} is {value.type}, "
                    f"the function takes {param.type}"
                )
        mapping: dict[SSAValue, SSAValue] = dict(zip(params, values))
        returned: Sequence[SSAValue] = ()
        for op in function.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned = [mapping.get(v, v) for v in op.arguments]
                break
            if isinstance(op, graph.WeightOp) and op.weight_name.data not in self._weights:
                raise GraphBuildError(
                    f"emit_te @{function.sym_name.data}: reads weight '{op.weight_name.data}', which this builder "
                    "does not hold (add it with GraphBuilder.weight first)"
                )
            clone = op.clone(value_mapper=mapping)
            self._append(clone)
            mapping.update(zip(op.results, clone.results))
        return returned[0] if len(returned) == 1 else tuple(returned)

    def output(self, value: SSAValue, name: str | None = None) -> None:
        """Make `value` a model output, named `name` (default `output<k>`)."""
        name = name or f"output{len(self._outputs)}"
        if any(existing == name for existing, _ in self._outputs):
            raise GraphBuildError(f"output '{name}' is already defined")
        self._outputs.append((name, value))

    def finish(self) -> ImportedModel:
        """The model built so far, verified: `@main(inputs) -> outputs` with its weight store and signature."""
        if not self._outputs:
            raise GraphBuildError("the graph has no output (GraphBuilder.output)")
        values = [value for _, value in self._outputs]
        self._block.add_op(func.ReturnOp(*values))
        types = [value.type for value in values]
        main = func.FuncOp("main", ([arg.type for arg in self._block.args], types), Region(self._block))
        symbols = [size for info in self._inputs for size in info.shape if isinstance(size, str)]
        if symbols:
            main.attributes[graph.INPUT_SYMBOLS_ATTR] = ArrayAttr([StringAttr(symbol) for symbol in symbols])
        module = ModuleOp([main])
        try:
            module.verify()
        except VerifyException as error:
            raise GraphBuildError(f"the built graph does not verify: {error}") from error
        outputs = []
        for (name, value), value_type in zip(self._outputs, types):
            assert isinstance(value_type, TensorType)
            outputs.append(TensorInfo(name, tuple(value_type.get_shape()), dtype_of(value_type.element_type)))
        return ImportedModel(module, dict(self._weights), list(self._inputs), outputs)

    def _value(self, operand: Any) -> SSAValue:
        if isinstance(operand, SSAValue):
            return operand
        if isinstance(operand, np.ndarray):
            return self.weight(f"const{len(self._weights)}", operand)
        raise GraphBuildError(f"operand {operand!r} is neither a value of this graph nor a numpy array")

    def _append(self, op: Operation) -> Operation:
        self._block.add_op(op)
        return op


def _graph_op(op: str | type[IRDLOperation]) -> type[IRDLOperation]:
    if isinstance(op, type):
        if op not in _GRAPH_OPS.values():
            raise GraphBuildError(f"{op.__name__} is not a graph op")
        return op
    found = _GRAPH_OPS.get(op if op.startswith("graph.") else f"graph.{op}")
    if found is None:
        raise GraphBuildError(f"no graph op named '{op}'")
    return found


def _element_type(dtype: Any, what: str) -> Any:
    element = ELEMENT_TYPES.get(np.dtype(dtype))
    if element is None:
        supported = ", ".join(map(str, ELEMENT_TYPES))
        raise GraphBuildError(f"{what}: dtype {np.dtype(dtype)} is not supported (expected one of {supported})")
    return element


def _single_function(function: func.FuncOp | ModuleOp) -> func.FuncOp:
    if isinstance(function, ModuleOp):
        functions = [op for op in function.ops if isinstance(op, func.FuncOp)]
        if len(functions) != 1:
            raise GraphBuildError(f"emit_te: the module holds {len(functions)} functions, expected one")
        function = functions[0]
    if not isinstance(function, func.FuncOp) or not function.body.blocks:
        raise GraphBuildError("emit_te: expected a te-level func.func with a body")
    return function


_TE_DTYPES = {element: dtype for dtype, element in te_emit.ELEMENT_TYPES.items() if dtype != "index"}
_TE_NAMES = "float32, int32, int64 or bool"


def _traced_te_function(compute: Callable[..., Any], values: Sequence[SSAValue]) -> func.FuncOp:
    """The te function `compute` describes: called on one `te.placeholder` per value, it returns the computed
    tensor(s)."""
    name = getattr(compute, "__name__", "")
    name = name if name.isidentifier() and name != "<lambda>" else "te_function"
    names = _placeholder_names(compute, len(values))
    placeholders = []
    for index, (value, placeholder_name) in enumerate(zip(values, names)):
        value_type = value.type
        dtype = _TE_DTYPES.get(value_type.element_type) if isinstance(value_type, TensorType) else None
        if dtype is None:
            raise GraphBuildError(f"emit_te {name}: operand {index} is {value_type}; te tensors hold {_TE_NAMES}")
        placeholders.append(te.placeholder(tuple(value_type.get_shape()), dtype, placeholder_name))
    try:
        returned = compute(*placeholders)
        results = list(returned) if isinstance(returned, tuple | list) else [returned]
        if not results or not all(isinstance(result, te.Tensor) for result in results):
            raise GraphBuildError(f"emit_te {name}: the callable must return a te tensor or a tuple of them")
        return te.create_function([*placeholders, *results], name=name)
    except te.TEError as error:
        raise GraphBuildError(f"emit_te {name}: {error}") from error


def _placeholder_names(compute: Callable[..., Any], count: int) -> list[str]:
    """The callable's positional parameter names (`A`, `B`), or `arg0`, `arg1`, ... where they do not name each
    operand."""
    try:
        parameters = list(inspect.signature(compute).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= count:
        return positional[:count]
    return [f"arg{index}" for index in range(count)]
