"""Import a `torch.export` program (core ATen, static shapes) into the `graph` dialect: `from_exported_program`.

    ep = torch.export.export(model.eval(), (torch.randn(1, 3, 32, 32),))
    session = minimlc.InferenceSession.from_imported(from_exported_program(ep))
    (logits,) = session.run(None, {"x": image})

The program is decomposed to core ATen first. User inputs become the model's inputs (by their names), parameters,
buffers and lifted constants its weights (by their qualified names, sharing the tensors' memory), the user outputs
its outputs (by their node names). Every node is converted by the converter of its ATen op (`aten_creation`,
`aten_elementwise`, `aten_tensor`, `aten_nn`, `aten_selection`); creation ops (`arange`, `full`, ...) become weights
the importer computes from their arguments, and what the program computes from them (a causal mask, Swin's
shifted-window mask) is compiled; each node's shape and dtype taken from its example value (`node.meta["val"]`).
Every unsupported op is reported in
one `UnsupportedAtenOpsError` before anything is built.

A program exported with `dynamic_shapes` is compiled once for every size its Dims allow (`aten_symbolic`):

    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model.eval(), (torch.randn(2, 16),), dynamic_shapes=({0: batch},))
    imported = from_exported_program(ep)    # input x: ('batch', 16), type tensor<?x16xf32>; bounds {batch: (1, 64)}
    session = minimlc.InferenceSession.from_imported(imported)   # runs any batch from 1 to 64; 65 is refused

Each Dim of an input becomes a `?` named after it (`minimlc.input_symbols`), its min and max the session's default
`input_bounds`; the nodes that compute sizes (`sym_size`, arithmetic on them) are kept as expressions of the Dims,
used as shapes only; views, expands, slices and creation ops of symbolic sizes become static graph forms (reshape
targets with 0 and -1, broadcasts by a carrier of the size, slices to the end). What cannot be expressed so raises
`SymbolicShapeError` naming the node and the symbols.
"""

from __future__ import annotations

import operator
import sys
import warnings
from collections.abc import Callable
from typing import Any

import sympy
import torch
from torch import fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind, TensorArgument
from xdsl.ir import SSAValue

from minimlc.frontend.graph_builder import GraphBuilder, GraphBuildError
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.onnx_errors import UnsupportedFeatureError
from minimlc.frontend.onnx_symbolic_dims import Dim, dim_text, is_symbolic
from minimlc.frontend.signature import TensorInfo
from minimlc.frontend.torch import aten_creation, aten_elementwise, aten_nn, aten_selection, aten_tensor
from minimlc.frontend.torch.aten_common import (
    NUMPY_DTYPES,
    AtenContext,
    AtenImportError,
    Converter,
    SupportCheck,
    UnsupportedAtenOpsError,
    meta,
    numpy_dtype,
    numpy_of,
    source_location,
)
from minimlc.frontend.torch.aten_symbolic import Dims, SymbolicShapeError, dim_of, dims_of, symbol_names, symbols_note

aten = torch.ops.aten

CONVERTERS: dict[Any, Converter] = {
    **aten_creation.CONVERTERS,
    **aten_elementwise.CONVERTERS,
    **aten_tensor.CONVERTERS,
    **aten_nn.CONVERTERS,
    **aten_selection.CONVERTERS,
}
"""Every converted ATen op overload and its converter."""

SUPPORT_CHECKS: dict[Any, SupportCheck] = {
    **aten_elementwise.SUPPORT_CHECKS,
    **aten_tensor.SUPPORT_CHECKS,
    **aten_nn.SUPPORT_CHECKS,
}

CHECKS_ONLY = {aten._assert_tensor_metadata.default, aten._assert_scalar.default}
"""Ops that only check what the example values already say (sizes within the Dims' ranges, which the session's
`input_bounds` check): nothing to compute."""


def from_exported_program(program: ExportedProgram, *, keep_params_as_weights: bool = True) -> ImportedModel:
    """The graph-dialect model of an exported program, which `InferenceSession.from_imported` compiles.

    With `keep_params_as_weights=False`, parameters and buffers become model inputs (after the user inputs), to be
    fed at every run, named by their placeholders (`p_fc_weight` for `fc.weight`, `program.graph_signature` maps
    them). Raises `UnsupportedAtenOpsError` naming every unsupported op with its nodes and source lines (before
    building anything), `UnsupportedFeatureError` for mutated buffers or inputs, symbolic shapes and non-tensor
    inputs or outputs, `AtenImportError` for a node that cannot be converted.
    """
    with warnings.catch_warnings():  # torch's own deprecation, raised by its deepcopy of the call graph's treespecs
        warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning)
        program = program.run_decompositions()
    _check_signature(program)
    nodes = list(program.graph_module.graph.nodes)
    tensors = _placeholder_tensors(program)
    constants = _lifted_constants(nodes, tensors)
    _check_supported(nodes, constants)
    builder = GraphBuilder()
    ctx = AtenContext(builder, constants, symbol_names(nodes))
    _add_placeholders(ctx, program, tensors, keep_params_as_weights)
    for node in nodes:
        if node.op != "call_function" or node in constants or _checks_only(node):
            continue
        if _is_size(node):
            ctx.sizes[node] = _labelled(node, lambda: dim_of(meta(node), ctx.names))
        else:
            ctx.values[node] = _convert(ctx, node)
    output_dims = _add_outputs(ctx, program, nodes[-1])
    return _with_symbols(ctx, builder.finish(), program, output_dims)


def _check_signature(program: ExportedProgram) -> None:
    signature = program.graph_signature
    if signature.buffers_to_mutate or signature.user_inputs_to_mutate:
        mutated = [*signature.buffers_to_mutate.values(), *signature.user_inputs_to_mutate.values()]
        raise UnsupportedFeatureError(f"the program mutates {', '.join(mutated)}: in-place state is not supported")
    for spec in signature.input_specs:
        if spec.kind == InputKind.USER_INPUT and not isinstance(spec.arg, TensorArgument):
            raise UnsupportedFeatureError(f"user input {spec.arg} is not a tensor: only tensor inputs are supported")
        if spec.kind not in (InputKind.USER_INPUT, InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            raise UnsupportedFeatureError(f"input {spec.arg.name} of kind {spec.kind.name} is not supported")


def _placeholder_tensors(program: ExportedProgram) -> dict[str, tuple[InputKind, str, torch.Tensor | None]]:
    """Each placeholder's kind, qualified name and tensor (None for a user input), by placeholder name."""
    found: dict[str, tuple[InputKind, str, torch.Tensor | None]] = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            found[spec.arg.name] = (spec.kind, spec.arg.name, None)
            continue
        target = spec.target or spec.arg.name
        tensor = program.state_dict.get(target)
        found[spec.arg.name] = (spec.kind, target, program.constants[target] if tensor is None else tensor)
    return found


def _lifted_constants(
    nodes: list[fx.Node], tensors: dict[str, tuple[InputKind, str, torch.Tensor | None]]
) -> dict[fx.Node, Any]:
    """The lifted constant tensors the program reads (weights named `constant.<name>` where they are used)."""
    return {
        node: tensors[node.name][2]
        for node in nodes
        if node.op == "placeholder" and node.users and tensors[node.name][0] == InputKind.CONSTANT_TENSOR
    }


def _check_supported(nodes: list[fx.Node], constants: dict[fx.Node, Any]) -> None:
    """Raise `UnsupportedAtenOpsError` listing every node that is neither converted nor evaluated at import time."""
    unsupported: dict[str, list[str]] = {}
    for node in nodes:
        if node.op != "call_function" or node in constants or _checks_only(node) or _is_size(node):
            continue
        if (op := _unsupported_op(node)) is not None:
            location = source_location(node)
            unsupported.setdefault(op, []).append(node.name + (f" ({location})" if location else ""))
    if unsupported:
        raise UnsupportedAtenOpsError(unsupported)


def _unsupported_op(node: fx.Node) -> str | None:
    """What of `node` is unsupported (its op, with the reason where the op has a converter), or None."""
    if node.target is operator.getitem:
        source, index = node.args
        computed = aten_nn.COMPUTED_RESULTS.get(source.target)  # type: ignore[union-attr]
        if computed is None or index < computed:  # type: ignore[operator]
            return None
        return f"{source.target} result {index} (not computed)"  # type: ignore[union-attr]
    op = str(node.target)
    if node.target not in CONVERTERS:
        return op
    value = node.meta.get("val")
    if isinstance(value, torch.Tensor) and value.dtype not in NUMPY_DTYPES:
        return f"{op} with a {value.dtype} result"
    reason = SUPPORT_CHECKS[node.target](node) if node.target in SUPPORT_CHECKS else None
    return None if reason is None else f"{op} with {reason}"


def _add_placeholders(
    ctx: AtenContext,
    program: ExportedProgram,
    tensors: dict[str, tuple[InputKind, str, torch.Tensor | None]],
    keep_params_as_weights: bool,
) -> None:
    """User inputs first, then weights (or, without `keep_params_as_weights`, parameter and buffer inputs)."""
    placeholders = [node for node in program.graph_module.graph.nodes if node.op == "placeholder"]
    state_inputs = []
    for node in placeholders:
        kind, name, tensor = tensors[node.name]
        if tensor is None:
            ctx.values[node] = _user_input(ctx, node, name)
        elif node in ctx.constants or not node.users:
            continue
        elif kind != InputKind.CONSTANT_TENSOR and not keep_params_as_weights:
            state_inputs.append((node, tensor))
        else:
            ctx.values[node] = ctx.builder.weight(name, numpy_of(tensor))
    for node, tensor in state_inputs:
        ctx.values[node] = ctx.builder.input(node.name, tuple(tensor.shape), numpy_dtype(tensor.dtype))


def _checks_only(node: fx.Node) -> bool:
    """A node that only checks what the example values already say (metadata, or sizes within bounds)."""
    return node.target in CHECKS_ONLY or isinstance(node.meta.get("val"), torch.SymBool | bool)


def _is_size(node: fx.Node) -> bool:
    """A node that computes a size (`sym_size`, arithmetic on sizes), kept as the expression its example value is."""
    return isinstance(node.meta.get("val"), torch.SymInt | int)


def _user_input(ctx: AtenContext, node: fx.Node, name: str) -> SSAValue:
    """A user input: each size a number or a Dim (a `?` named after it)."""
    dims = _labelled(node, lambda: ctx.dims(node))
    derived = [size for size in dims if is_symbolic(size) and size != Dim.symbol(str(size))]
    if derived:
        raise SymbolicShapeError(
            f"input '{name}' has the size {derived[0]}{symbols_note(derived)}: an input's symbolic sizes must be Dims "
            "of their own (not expressions of others)"
        )
    shape = [str(size) if is_symbolic(size) else size for size in dims]
    value = ctx.builder.input(name, shape, numpy_dtype(meta(node).dtype))
    ctx.record(value, dims)
    return value


def _convert(ctx: AtenContext, node: fx.Node) -> Any:
    if node.target is operator.getitem:
        source, index = node.args
        return ctx.values[source][index]  # type: ignore[index]
    converted = _labelled(node, lambda: CONVERTERS[node.target](ctx, node))
    values = meta(node) if isinstance(converted, tuple) else [meta(node)]
    for value, example in zip(converted if isinstance(converted, tuple) else [converted], values):
        if value is not None:
            _labelled(node, lambda: ctx.record(value, dims_of(example, ctx.names)))
    return converted


def _labelled(node: fx.Node, convert: Callable[[], Any]) -> Any:
    """`convert()`, its errors naming the node, its op and its source line."""
    try:
        return convert()
    except (AtenImportError, GraphBuildError, KeyError, ValueError) as error:
        location = source_location(node)
        where = f" at {location}" if location else ""
        kind = SymbolicShapeError if isinstance(error, SymbolicShapeError) else AtenImportError
        raise kind(f"node '{node.name}' ({node.target}{where}): {error}") from error


def _with_symbols(
    ctx: AtenContext, imported: ImportedModel, program: ExportedProgram, output_dims: list[Dims]
) -> ImportedModel:
    """`imported` with its symbolic sizes (none: as it is): outputs reported by their expressions
    (`'batch*sequence'`), `symbolic_dims`, and the ranges of the inputs' Dims as `input_bounds`."""
    if not any(isinstance(size, str) for info in imported.inputs for size in info.shape):
        return imported
    for info in imported.inputs:
        imported.symbolic_dims[info.name] = tuple(Dim.symbol(s) if isinstance(s, str) else s for s in info.shape)
    for index, (info, dims) in enumerate(zip(imported.outputs, output_dims)):
        imported.symbolic_dims[info.name] = dims
        imported.outputs[index] = TensorInfo(info.name, tuple(dim_text(size) for size in dims), info.dtype)
    named = {name: symbol for symbol, name in ctx.names.items()}
    symbols = {size for info in imported.inputs for size in info.shape if isinstance(size, str)}
    for name in sorted(symbols):
        ranges = program.range_constraints.get(named[name])
        if ranges is None:
            continue
        upper = int(ranges.upper) if isinstance(ranges.upper, sympy.Integer) else sys.maxsize
        imported.input_bounds[name] = (int(ranges.lower), upper)
    return imported


def _add_outputs(ctx: AtenContext, program: ExportedProgram, output: fx.Node) -> list[Dims]:
    """Add the user outputs; their dims, in order."""
    returned = output.args[0]
    dims: list[Dims] = []
    names: set[str] = set()
    for spec, value in zip(program.graph_signature.output_specs, returned):  # type: ignore[arg-type]
        if spec.kind != OutputKind.USER_OUTPUT:
            continue
        if not isinstance(value, fx.Node) or not isinstance(meta(value), torch.Tensor):
            raise UnsupportedFeatureError(f"output {spec.arg} is not a tensor: only tensor outputs are supported")
        name = spec.arg.name
        while name in names:
            name += "_"
        names.add(name)
        ctx.builder.output(ctx.value(value), name)
        dims.append(ctx.dims(value))
    return dims
