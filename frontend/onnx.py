"""Import an ONNX model into the `graph` dialect: `import_model(model) -> ImportedModel`.

The model becomes `func.func @main(inputs...) -> (outputs...)` in a `builtin.module`, with every
shape static and computed here (value_info is not trusted). Initializers, Constant outputs, shapes,
and the outputs of the nodes of the fold set whose inputs are all constants (evaluated at import time by
minimlc's exact evaluators, `onnx_fold`) are compile-time constants: the ones used as data operands become
`graph.weight` handles into the returned weight store, the others (such as Reshape's shape) are consumed at import
time. A node fed, directly or not, by a graph input's values is never folded, nor is a node outside the fold set
(MatMul, Exp, ... on constants): it is converted.
A graph output that is a compile-time constant (a Shape, a ConstantOfShape, a folded
chain) is not computed by native code: it is returned in `ImportedModel.constant_outputs`, with
its own element type (int64, bool, ...); @main takes the inputs and returns the other outputs, each
of a type of `onnx_ops.ELEMENT_TYPES`. Ops outside `TYPED_OPS` compute on float32 only and refuse other
inputs; float16 and bfloat16 are computed in float32 (`onnx_half`). The converters, one per ONNX op type, live
in `onnx_ops` (core) and one `onnx_<family>` module per op family, gathered in `onnx_operators` (ops of
other domains by `converter_key`); `onnx_control` (If, Loop, Scan: subgraphs imported per branch or iteration by
`run_subgraph`, which also imports FlexAttention's score_mod and prob_mod) and `onnx_sequence` (sequences and
optionals, kept as lists of graph values; a sequence output is returned element by element,
`ImportedModel.sequence_outputs`). Outputs of a data-dependent extent (NonZero, ...) are trimmed by the runtime
(`ImportedModel.trimmed_outputs`, `lowering/abi.py`). `onnx_model_file` reads the model (external data
memory-mapped) and checks its structure; `onnx_errors` holds the errors, all `ModelImportError`s.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from minimlc.dialects import graph
from minimlc.dialects.graph import INPUT_SYMBOLS_ATTR, shape_of
from minimlc.frontend import onnx_control, onnx_fold, onnx_half, onnx_operators, onnx_qdq_fusion, onnx_sequence
from minimlc.frontend.onnx_control import ControlContext
from minimlc.frontend.onnx_errors import (
    ExternalDataError,
    ModelImportError,
    UnsupportedFeatureError,
    UnsupportedOpsError,
    ops_after,
    verify_built,
    verify_imported,
)
from minimlc.frontend.onnx_model_file import ExternalData, ModelSource, ReadModel, check_structure, read_model
from minimlc.frontend.onnx_operators import CONVERTERS, TYPED_OPS, converter_key, node_label, unsupported_nodes
from minimlc.frontend.onnx_ops import (
    ELEMENT_TYPES,
    ConstantValue,
    DataDependentValue,
    Elementwise,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    WeightStore,
    sanitise,
)
from minimlc.frontend.onnx_sequence import CONTAINER_OPS, Item, OptionalValue, SequenceValue
from minimlc.frontend.onnx_signature import (
    check_computed_output,
    check_constant_output,
    computed_dtype,
    derive_input_dims,
    element_dtype,
    static_input,
    symbolic_input,
)
from minimlc.frontend.onnx_symbolic import ShapeValue, refuse, refuse_static_only
from minimlc.frontend.onnx_symbolic_dims import Dim, dim_text
from minimlc.frontend.onnx_symbolic_rewrites import SymbolicImport
from minimlc.frontend.signature import TensorInfo


@dataclass
class ImportedModel:
    """A model in the graph dialect, its weight store and its signature."""

    module: ModuleOp
    weights: dict[str, np.ndarray]
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    """Every graph output, in order; @main returns those not in `constant_outputs`, in order."""
    constant_outputs: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    """Outputs known at compile time, by name, with their own element types."""
    trimmed_outputs: dict[str, int] = field(default_factory=dict[str, int])
    """Outputs of a data-dependent extent, by name: the axis the runtime trims (`lowering/abi.py`)."""
    sequence_outputs: dict[str, int | None] = field(default_factory=dict[str, int | None])
    """Graph outputs that are sequences, by name: their number of elements, which `outputs` lists one by one as
    `name[i]` (None: an empty optional, returned as None); the runtime returns each as a list."""
    output_names: list[str] = field(default_factory=list[str])
    """The graph's output names in order, where `sequence_outputs` groups some of `outputs`."""
    index_checks: list[str] = field(default_factory=list[str])
    """Per run-time index check, in order, its message: @main returns each check's count of out-of-range indices
    after the trimmed outputs' counts (`onnx_index_checks`, `lowering/abi.py`)."""
    symbolic_dims: dict[str, tuple[int | Dim, ...]] = field(default_factory=dict[str, tuple[int | Dim, ...]])
    """Imported with `symbolic=True`: each input's and computed output's dimensions, by name, as sizes and exact
    expressions (`onnx_symbolic_dims.Dim`, `evaluate` gives an output's size from the inputs'); `inputs` and
    `outputs` spell them as text (`('batch', 'sequence', 768)`, `'batch*sequence'`). Empty otherwise."""
    input_bounds: dict[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    """The sizes the model declares for its input symbols, `{symbol: (smallest, largest)}` (a `torch.export.Dim`'s
    range): the session's default `input_bounds`."""

    @property
    def computed_outputs(self) -> list[TensorInfo]:
        """The results of @main in order: the outputs it computes, then the counts of the trimmed ones."""
        computed = [info for info in self.outputs if info.name not in self.constant_outputs]
        counts = [TensorInfo(f"{name}.count", (1,), np.dtype(np.int64)) for name in self.trimmed_outputs]
        checks = [TensorInfo(f"index_check{n}", (1,), np.dtype(np.int64)) for n in range(len(self.index_checks))]
        return computed + counts + checks


def import_model(
    model: ModelSource,
    input_shapes: Mapping[str, Sequence[int | str | None]] | None = None,
    *,
    symbolic: bool = False,
) -> ImportedModel:
    """Import an ONNX model (a ModelProto, a path or serialized bytes) into the graph dialect.

    With `symbolic`, symbolic and unknown input dimensions stay `?` in the types (`docs/design/symbolic_shapes.md`):
    each is named by its dim_param (an unknown one `unk0`, `unk1`, ...), @main records the names of its inputs'
    `?`s (`minimlc.input_symbols`), shapes computed from them are evaluated symbolically (`onnx_symbolic`), and
    `ImportedModel.symbolic_dims` gives every input's and output's dimensions; `input_shapes` may still fix inputs,
    or some of their dimensions (a size; None or a name keeps one symbolic). What cannot be imported with symbolic
    dimensions raises `ModelImportError` naming the node, op and symbol.

    `input_shapes` gives the shape of inputs with symbolic or unknown dimensions; a shape that contradicts a
    dimension the model declares is refused, as ONNX Runtime refuses such inputs. Initializers stored as external data
    are memory-mapped, not copied (`onnx_model_file`). Raises `UnsupportedOpsError` listing every unsupported node
    before converting anything (a node without a converter is supported where `onnx_fold` evaluates it: a Range or
    ConstantOfShape on compile-time constants), `ModelImportError` for any other problem (unparsable or invalid
    model, a directory given as the model, missing external data (`ExternalDataError`), bad attribute, shape
    mismatch, non-float32 data), and `FileNotFoundError` when a path does not exist.
    """
    read = check_model(model)
    importer = _Importer(read.proto.graph, _opsets(read.proto), dict(input_shapes or {}), read.external)
    importer.symbolic = SymbolicImport() if symbolic else None
    return importer.run()


def check_model(model: ModelSource) -> ReadModel:
    """Read `model` and check what `import_model` checks before converting anything (structure, supported ops),
    raising the same errors; the model read, for `import_model` to take."""
    read = read_model(model)
    check_structure(read.proto)
    _check_supported(read.proto.graph, _opsets(read.proto))
    return read


def _opsets(proto: onnx.ModelProto) -> dict[str, int]:
    opsets = {entry.domain or "": entry.version for entry in proto.opset_import}
    opsets.setdefault("", opsets.get("ai.onnx", 0))
    return opsets


def _check_supported(graph_proto: onnx.GraphProto, opsets: dict[str, int]) -> None:
    """Raise `UnsupportedOpsError` naming every node that has no converter and is not foldable (in subgraphs too)."""
    if unsupported := unsupported_nodes(graph_proto, opsets):
        raise UnsupportedOpsError([(op, opset, names) for (op, opset), names in unsupported.items()])


class _Importer:
    """Converts one checked, fully supported ONNX graph into @main."""

    def __init__(
        self,
        graph_proto: onnx.GraphProto,
        opsets: dict[str, int],
        input_shapes: dict[str, Sequence[int | str | None]],
        external: ExternalData,
    ):
        self.graph = onnx_qdq_fusion.fuse_qdq(graph_proto)
        self.external = external
        self.opset = opsets[""]
        self.input_shapes = input_shapes
        self.values: dict[str, Item] = {}
        self.used = onnx_control.names_used(graph_proto)
        self.scope = ""
        """The prefix of the constants named in the subgraph being imported (one per import of a subgraph)."""
        self.subgraph_imports = 0
        self.scoped_constants = onnx_control.ScopedConstants()
        self.index_checks: list[tuple[SSAValue, str]] = []
        self.unfolded: dict[str, str] = {}
        """Run-time values computed from constants only -> the node on constants that was compiled, not folded."""
        self.symbolic: SymbolicImport | None = None
        """The symbolic mode's state (`import_model(..., symbolic=True)`), None for static shapes."""
        self.input_dims: dict[str, tuple[int | Dim, ...]] = {}
        self.output_dims: dict[str, tuple[int | Dim, ...]] = {}
        self.unnamed_dims = 0
        """Symbolic mode: the dimensions of the inputs and computed outputs, by name."""
        self.verified: set[Operation] = set()
        """The ops `verify_built` verified, which the module's last verification skips."""

    def run(self) -> ImportedModel:
        """Build the module, verify it and return it with its weight store and signature."""
        for tensor in self.graph.initializer:
            self.values[tensor.name] = ConstantValue(tensor.name, self._initializer(tensor))
        if self.graph.sparse_initializer:
            raise ModelImportError("sparse initializers are not supported")
        input_infos = [vi for vi in self.graph.input if vi.name not in self.values]
        unknown = sorted(set(self.input_shapes) - {vi.name for vi in input_infos})
        if unknown:
            names = ", ".join(repr(vi.name) for vi in input_infos)
            raise ModelImportError(f"input_shapes names unknown inputs {unknown}; the model's inputs are {names}")
        inputs = [self._input(vi) for vi in input_infos]
        if self.symbolic is not None:
            self.input_dims = derive_input_dims(self.input_dims)
        types = [graph.tensor_type(self._input_type_shape(info), ELEMENT_TYPES[info.dtype]) for info in inputs]
        block = Block(arg_types=types)
        for info, arg in zip(inputs, block.args):
            arg.name_hint = sanitise(info.name)
            self.values[info.name] = arg
            if self.symbolic is not None:
                self.symbolic.dims[arg] = self.input_dims[info.name]
        builder = Builder(InsertPoint.at_end(block))
        weights = WeightStore(builder)
        for index, node in enumerate(self.graph.node):
            self._convert(node, index, builder, weights)

        results: list[SSAValue] = []
        outputs: list[TensorInfo] = []
        constant_outputs: dict[str, np.ndarray] = {}
        trimmed_outputs: dict[str, int] = {}
        counts: list[SSAValue] = []
        sequence_outputs: dict[str, int | None] = {}
        for vi, value in self._output_items(sequence_outputs):
            if isinstance(value, DataDependentValue):
                trimmed_outputs[vi.name] = value.axis
                counts.append(value.count)
                value = value.bound
            if isinstance(value, ConstantValue):
                check_constant_output(vi, value.array)
                constant_outputs[vi.name] = value.array
                outputs.append(TensorInfo(vi.name, value.array.shape, value.array.dtype))
            else:
                if isinstance(value, ShapeValue):
                    raise refuse(f"output '{vi.name}'", "a shape computed from symbols is output", value.symbols)
                dtype = computed_dtype(value)
                check_computed_output(vi, dtype)
                results.append(value)
                outputs.append(TensorInfo(vi.name, self._reported_shape(vi.name, value), dtype))
        results += counts + [count for count, _ in self.index_checks]
        builder.insert(func.ReturnOp(*results))
        main = func.FuncOp("main", ([arg.type for arg in block.args], [r.type for r in results]), Region(block))
        if self.symbolic is not None and (symbols := self._input_symbols(inputs)):
            main.attributes[INPUT_SYMBOLS_ATTR] = ArrayAttr([StringAttr(symbol) for symbol in symbols])
        module = ModuleOp([main])
        verify_imported(module, self.verified)
        names = [vi.name for vi in self.graph.output] if sequence_outputs else []
        messages = [message for _, message in self.index_checks]
        signature = (inputs, outputs, constant_outputs, trimmed_outputs, sequence_outputs, names, messages)
        imported = ImportedModel(module, weights.arrays, *signature)
        if self.symbolic is not None:
            imported.symbolic_dims = dict(self.input_dims) | self.output_dims
        return imported

    def _input_type_shape(self, info: TensorInfo) -> tuple[int, ...]:
        """An input's type shape: `?` for each symbolic dimension in symbolic mode."""
        if self.symbolic is None:
            return info.shape
        return tuple(graph.DYNAMIC if isinstance(size, Dim) else size for size in self.input_dims[info.name])

    def _input_symbols(self, inputs: Sequence[TensorInfo]) -> list[str]:
        """The name of each symbolic input dimension, in input order then axis order."""
        return [str(size) for info in inputs for size in self.input_dims[info.name] if isinstance(size, Dim)]

    def _reported_shape(self, name: str, value: SSAValue) -> tuple[int, ...]:
        """A computed output's shape as `outputs` reports it: static, or in symbolic mode sizes and expressions."""
        if self.symbolic is None:
            return shape_of(value)
        dims = self.symbolic.of(value)
        self.output_dims[name] = dims
        return tuple(dim_text(size) for size in dims)  # type: ignore[return-value]

    def _output_items(self, sequence_outputs: dict[str, int | None]) -> list[tuple[onnx.ValueInfoProto, Item]]:
        """Every tensor the graph outputs return, with its value info: a sequence output's elements one by one
        (recorded in `sequence_outputs` with their number; None for an empty optional)."""
        items: list[tuple[onnx.ValueInfoProto, Item]] = []
        for vi in self.graph.output:
            if vi.name not in self.values:
                raise ModelImportError(f"output '{vi.name}' is not produced by any node")
            value = self.values[vi.name]
            if not isinstance(value, (SequenceValue, OptionalValue)):
                items.append((vi, value))
                continue
            elements, is_sequence = onnx_sequence.output_items(vi, value)
            if is_sequence:
                sequence_outputs[vi.name] = len(elements)
            elif not elements:
                sequence_outputs[vi.name] = None
            items += elements
        return items

    def _initializer(self, tensor: onnx.TensorProto) -> np.ndarray:
        try:
            return self.external.array(tensor)
        except ExternalDataError:
            raise
        except (ValueError, TypeError, OSError) as error:
            raise ModelImportError(f"cannot read initializer '{tensor.name}': {error}") from error

    def _input(self, vi: onnx.ValueInfoProto) -> TensorInfo:
        if self.symbolic is None:
            return static_input(vi, self.input_shapes.get(vi.name))
        info, self.input_dims[vi.name] = symbolic_input(vi, self.input_shapes.get(vi.name), self._fresh_symbol)
        return info

    def _fresh_symbol(self) -> str:
        """A name for an unnamed dimension (neither a size nor a dim_param): `unk0`, `unk1`, ..."""
        self.unnamed_dims += 1
        return f"unk{self.unnamed_dims - 1}"

    def _convert(self, node: onnx.NodeProto, index: int, builder: Builder, weights: WeightStore) -> None:
        label = f"node '{node_label(node, index)}' ({node.op_type})"
        inputs: list[Item | None] = []
        for name in node.input:
            if name and name not in self.values:
                raise ModelImportError(f"{label}: input '{name}' refers to an unknown value")
            inputs.append(self.values[name] if name else None)
            if isinstance(inputs[-1], DataDependentValue):
                raise UnsupportedFeatureError(f"{label}: input '{name}' has a data-dependent shape (only outputs may)")
            if isinstance(inputs[-1], (SequenceValue, OptionalValue)) and node.op_type not in CONTAINER_OPS:
                raise ModelImportError(f"{label}: input '{name}' is a sequence or an optional, not a tensor")
        if self.symbolic is not None and self.symbolic.takes(node, inputs):
            context = NodeContext(node, self.opset, builder, weights)
            builder.name_hint = sanitise(node.output[0])
            last = builder.insertion_point.block.last_op
            try:
                outputs = self.symbolic.convert(node, label, inputs, context)
            finally:
                builder.name_hint = None
            verify_built(label, ops_after(builder.insertion_point.block, last), self.verified)
            self.index_checks += [(count, f"{label}: {message}") for count, message in context.index_checks]
            for name, value in zip(node.output, outputs):
                if name:
                    self.values[name] = value
            return
        outputs = self._fold(node, label, inputs) if onnx_fold.is_foldable(node, self._is_constant) else None
        if outputs is None:
            block = builder.insertion_point.block
            last = block.last_op
            outputs = self._call_converter(node, label, inputs, builder, weights)
            built = ops_after(block, last)
            if self.symbolic is not None:
                refuse_static_only(label, built)  # before verifying: a static-only op's verifier refuses `?` too
            verify_built(label, built, self.verified)
            if all(self._is_constant(name) or name in self.unfolded for name in node.input if name):
                origin = next((self.unfolded[name] for name in node.input if name in self.unfolded), label)
                computed = [name for name, value in zip(node.output, outputs) if isinstance(value, SSAValue)]
                self.unfolded |= dict.fromkeys(computed, origin)
            if self.symbolic is not None:
                self.symbolic.record(node, label, inputs, outputs)
        for name, value in zip(node.output, outputs):
            if name:
                scoped = isinstance(value, ConstantValue) and self.scope
                self.values[name] = self.scoped_constants.named(value, self.scope) if scoped else value

    def run_subgraph(
        self, graph_proto: onnx.GraphProto, inputs: Sequence[Item], builder: Builder, weights: WeightStore
    ) -> list[Item]:
        """Import the nodes of a subgraph (If's branch, Loop's body, ...) into @main, its inputs bound to `inputs`
        and the enclosing scopes' names visible; return its outputs."""
        if len(inputs) != len(graph_proto.input):
            raise ModelImportError(
                f"subgraph '{graph_proto.name}' takes {len(graph_proto.input)} inputs, given {len(inputs)}"
            )
        outer_values, outer_scope = self.values, self.scope
        self.subgraph_imports += 1
        self.values = dict(outer_values)
        self.scope = f"{graph_proto.name or 'subgraph'}.{self.subgraph_imports}/"
        try:
            for tensor in graph_proto.initializer:
                initializer = ConstantValue(tensor.name, self._initializer(tensor))
                self.values[tensor.name] = self.scoped_constants.named(initializer, self.scope)
            for vi, value in zip(graph_proto.input, inputs):
                self.values[vi.name] = value
            for index, node in enumerate(graph_proto.node):
                self._convert(node, index, builder, weights)
            missing = [vi.name for vi in graph_proto.output if vi.name not in self.values]
            if missing:
                raise ModelImportError(f"subgraph '{graph_proto.name}': outputs {missing} are not produced")
            return [self.values[vi.name] for vi in graph_proto.output]
        finally:
            self.values, self.scope = outer_values, outer_scope

    def _is_constant(self, name: str) -> bool:
        return isinstance(self.values.get(name), ConstantValue)

    def _fold(self, node: onnx.NodeProto, label: str, inputs: Sequence[Item | None]) -> list[ConstantValue] | None:
        """The node's outputs evaluated at import time, or None when it is to be compiled (`NotFoldable`)."""
        constants = [value if isinstance(value, ConstantValue) else None for value in inputs]
        try:
            results = onnx_fold.fold(node, constants, self.opset)
        except onnx_fold.NotFoldable as declined:
            if converter_key(node.domain, node.op_type) in CONVERTERS:
                return None
            raise UnsupportedFeatureError(f"{label}: cannot be folded ({declined}) and has no converter") from declined
        except NodeError as error:
            raise ModelImportError(f"{label}: {error}") from error
        return [ConstantValue(name, array) for name, array in zip(node.output, results)]

    def _unfolded_operands(self, node: onnx.NodeProto) -> str:
        """Why an operand that must be a compile-time constant is not: it is computed at run time from constants."""
        names = [node.input[i] for i in onnx_operators.CONSTANT_OPERANDS.get(node.op_type, ()) if i < len(node.input)]
        return "".join(
            f"; input '{name}' is computed at run time from constants by {self.unfolded[name]}, which is compiled, "
            "not folded at import time"
            for name in names
            if name in self.unfolded
        )

    def _call_converter(
        self,
        node: onnx.NodeProto,
        label: str,
        inputs: Sequence[Item | None],
        builder: Builder,
        weights: WeightStore,
    ) -> tuple[Item, ...]:
        if converter_key(node.domain, node.op_type) not in CONVERTERS:  # an evaluator only, for constant inputs
            computed = ", ".join(f"'{name}'" for name, value in zip(node.input, inputs) if isinstance(value, SSAValue))
            raise UnsupportedFeatureError(f"{label}: has no converter, and inputs {computed} are computed at run time")
        converter = CONVERTERS[converter_key(node.domain, node.op_type)]
        parameters = list(onnx_fold.signature_of(converter).parameters.values())[1:]
        slots = [p for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        keywords = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
        variadic = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
        required = sum(p.default is inspect.Parameter.empty for p in slots) + variadic
        if len(node.input) < required or (not variadic and len(node.input) > len(slots)):
            expected = f"at least {required}" if variadic else f"{required} to {len(slots)}"
            raise ModelImportError(f"{label}: has {len(node.input)} inputs, expected {expected}")
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        checks_its_own = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)  # takes **attributes
        unexpected = [] if checks_its_own else sorted(attributes.keys() - keywords)
        if unexpected:  # onnx.checker accepted them: a valid model using what minimlc lacks
            raise UnsupportedFeatureError(f"{label}: attributes {unexpected} are not supported (opset {self.opset})")

        builder.name_hint = sanitise(node.output[0])
        try:
            half = None if node.op_type in CONTAINER_OPS else onnx_half.half_float_of(node.op_type, inputs)
            if half is not None:
                inputs = onnx_half.widened(builder, inputs)
            if node.op_type not in TYPED_OPS and not _takes_its_elements(converter, inputs):
                _check_float_inputs(node, label, inputs)
            context = NodeContext(node, self.opset, builder, weights)
            if node.op_type in onnx_control.CONVERTERS or onnx_control.subgraphs(node):
                context = ControlContext(
                    node,
                    self.opset,
                    builder,
                    weights,
                    subgraph=lambda g, v: self.run_subgraph(g, v, builder, weights),
                    subgraph_checks=self.index_checks,
                )
            value = converter(context, *inputs, **attributes)
            self.index_checks += [(count, f"{label}: {message}") for count, message in context.index_checks]
            if half is not None:
                value = onnx_half.narrowed(builder, value if isinstance(value, tuple) else (value,), half)
        except UnsupportedNodeError as error:
            raise UnsupportedFeatureError(f"{label}: {error}{self._unfolded_operands(node)}") from error
        except NodeError as error:
            raise ModelImportError(f"{label}: {error}{self._unfolded_operands(node)}") from error
        finally:
            builder.name_hint = None
        results = value if isinstance(value, tuple) else (value,)
        if extra := [name for name in node.output[len(results) :] if name in self.used]:
            raise UnsupportedFeatureError(
                f"{label}: outputs {extra} are used, but only the first {len(results)} is supported"
            )
        if len(results) > 1:
            for name, result in zip(node.output, results):
                if isinstance(result, SSAValue):
                    result.name_hint = sanitise(name)
        return results


def _takes_its_elements(converter: object, inputs: Sequence[Value | None]) -> bool:
    """Whether `converter` is one elementwise graph op (`Elementwise`) whose element types take every run-time input."""
    return isinstance(converter, Elementwise) and all(
        graph.element_type(value) in converter.op.ELEMENTS for value in inputs if isinstance(value, SSAValue)
    )


def _check_float_inputs(node: onnx.NodeProto, label: str, inputs: Sequence[Value | None]) -> None:
    """Refuse run-time inputs other than float32 to a converter outside `TYPED_OPS`."""
    for name, value in zip(node.input, inputs):
        if isinstance(value, SSAValue) and graph.element_type(value) != f32:
            dtype = element_dtype(graph.element_type(value))
            raise UnsupportedFeatureError(
                f"{label}: input '{name}' is a run-time {dtype} tensor; {node.op_type} computes on float32 only"
            )
