"""`from_fx`: a `torch.fx.GraphModule` -> an `ImportedModel`, as the MLC course's FX importer builds a Relax
function, with user maps for functions and modules and built-in converters for common PyTorch ops:

    traced = torch.fx.symbolic_trace(model.eval())
    imported = from_fx(traced, [(1, 784)], call_function_map={torch.relu: map_relu})
    session = minimlc.InferenceSession.from_imported(imported)
    (logits,) = session.run(None, {"x": images})

A user converter is called as `call_function_map[node.target](bb, node_map, node)` (call_method nodes too, keyed by
the method's name) and `call_module_map[type(module)](bb, node_map, node, module)`, with the `GraphBuilder` and the
values of the nodes converted so far; it returns the node's value (e.g. `bb.emit_te(te_relu, x)`). User maps win
over the built-ins (`fx_functions.FUNCTIONS`, `fx_functions.METHODS`, `fx_modules.MODULES`). Every unsupported
target is listed in one `UnsupportedTorchOpsError` before anything is built.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import fx, nn
from xdsl.ir import SSAValue

from minimlc.frontend.graph_builder import GraphBuilder, GraphBuildError
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.onnx_errors import UnsupportedFeatureError
from minimlc.frontend.torch.fx_context import FxContext, TorchImportError
from minimlc.frontend.torch.fx_functions import FUNCTIONS, METHODS
from minimlc.frontend.torch.fx_modules import MODULES

__all__ = ["TorchImportError", "UnsupportedTorchOpsError", "from_fx"]

FunctionMap = Mapping[Any, Callable[[GraphBuilder, dict[fx.Node, Any], fx.Node], Any]]
ModuleMap = Mapping[type[nn.Module], Callable[[GraphBuilder, dict[fx.Node, Any], fx.Node, nn.Module], Any]]


class UnsupportedTorchOpsError(UnsupportedFeatureError):
    """The FX graph calls functions, methods or modules with no converter; `.ops` lists (target, node names)."""

    def __init__(self, ops: list[tuple[str, list[str]]]):
        self.ops = ops
        listing = "; ".join(f"{target}: {', '.join(names)}" for target, names in ops)
        kinds = "target" if len(ops) == 1 else "targets"
        super().__init__(f"FX graph has {len(ops)} unsupported {kinds} (add them to the call maps): {listing}")


def from_fx(
    fx_module: fx.GraphModule,
    input_shapes: Sequence[Sequence[int]],
    call_function_map: FunctionMap | None = None,
    call_module_map: ModuleMap | None = None,
    *,
    input_dtypes: Sequence[Any] | None = None,
) -> ImportedModel:
    """The graph of `fx_module` as a model whose inputs are its placeholders, named after them, of `input_shapes`
    (float32 unless `input_dtypes` gives numpy or torch dtypes), whose weights are the attributes it reads and whose
    outputs are what it returns (`output`, or `output0`, `output1`, ... for a tuple)."""
    function_map, module_map = dict(call_function_map or {}), dict(call_module_map or {})
    nodes = list(fx_module.graph.nodes)
    modules = {str(n.target): fx_module.get_submodule(str(n.target)) for n in nodes if n.op == "call_module"}
    _check_supported(nodes, modules, function_map, module_map)
    placeholders = [node for node in nodes if node.op == "placeholder"]
    dtypes = _input_dtypes(placeholders, input_shapes, input_dtypes)
    ctx = FxContext(GraphBuilder())
    node_map: dict[fx.Node, Any] = {}
    inputs = iter(zip(input_shapes, dtypes))
    for node in nodes:
        if node.op == "placeholder":
            shape, dtype = next(inputs)
            node_map[node] = ctx.bb.input(str(node.target), tuple(shape), dtype)
            continue
        try:
            if node.op == "output":
                _outputs(ctx.bb, node_map, node)
                break
            node_map[node] = _convert(ctx, fx_module, modules, node_map, node, function_map, module_map)
        except (TorchImportError, GraphBuildError) as error:
            raise TorchImportError(f"node '{node.name}' ({_describe(node, modules)}): {error}") from error
    return ctx.bb.finish()


def _convert(
    ctx: FxContext,
    root: fx.GraphModule,
    modules: dict[str, nn.Module],
    node_map: dict[fx.Node, Any],
    node: fx.Node,
    function_map: dict[Any, Any],
    module_map: dict[type[nn.Module], Any],
) -> Any:
    """The value of a get_attr or call node."""
    if node.op == "get_attr":
        return ctx.weight(str(node.target), _attribute(root, str(node.target)))
    if node.op in ("call_function", "call_method") and node.target in function_map:
        return function_map[node.target](ctx.bb, node_map, node)
    if node.op == "call_module" and type(modules[str(node.target)]) in module_map:
        module = modules[str(node.target)]
        return module_map[type(module)](ctx.bb, node_map, node, module)
    args = fx.node.map_arg(node.args, lambda argument: node_map[argument])
    kwargs = fx.node.map_arg(node.kwargs, lambda argument: node_map[argument])
    if node.op == "call_module":
        module = modules[str(node.target)]
        converter, leading = MODULES[type(module)], (module, str(node.target))
    else:
        converter = FUNCTIONS[node.target] if node.op == "call_function" else METHODS[str(node.target)]
        leading: tuple[Any, ...] = ()
    try:
        return converter(ctx, *leading, *args, **kwargs)
    except TypeError as error:  # arguments the built-in converter does not take
        raise TorchImportError(f"unsupported arguments {node.args} {node.kwargs} ({error})") from error


def _check_supported(
    nodes: list[fx.Node],
    modules: dict[str, nn.Module],
    function_map: dict[Any, Any],
    module_map: dict[type[nn.Module], Any],
) -> None:
    """One `UnsupportedTorchOpsError` listing every call without a user or built-in converter."""
    missing: dict[str, list[str]] = {}
    for node in nodes:
        if node.op == "call_function":
            known = node.target in function_map or node.target in FUNCTIONS
        elif node.op == "call_method":
            known = node.target in function_map or node.target in METHODS
        elif node.op == "call_module":
            module_type = type(modules[str(node.target)])
            known = module_type in module_map or module_type in MODULES
        else:
            continue
        if not known:
            missing.setdefault(_describe(node, modules), []).append(node.name)
    if missing:
        raise UnsupportedTorchOpsError(list(missing.items()))


def _describe(node: fx.Node, modules: dict[str, nn.Module]) -> str:
    """How an error names a node's target: `function torch.nn.functional.elu`, `method Tensor.cumsum`, `module
    torch.nn.modules.activation.ELU`."""
    if node.op == "call_function":
        module = getattr(node.target, "__module__", None) or "builtins"
        name = getattr(node.target, "__name__", repr(node.target))
        return f"function {module.removeprefix('_')}.{name}"
    if node.op == "call_method":
        return f"method Tensor.{node.target}"
    if node.op == "call_module":
        module_type = type(modules[str(node.target)])
        return f"module {module_type.__module__}.{module_type.__qualname__}"
    return node.op


def _attribute(root: nn.Module, qualified_name: str) -> torch.Tensor:
    """The parameter, buffer or tensor constant `root.a.b.c` names."""
    value = operator.attrgetter(qualified_name)(root)
    if not isinstance(value, torch.Tensor):
        raise TorchImportError(f"attribute '{qualified_name}' is a {type(value).__name__}, not a tensor")
    return value


def _input_dtypes(
    placeholders: list[fx.Node], input_shapes: Sequence[Sequence[int]], input_dtypes: Sequence[Any] | None
) -> list[np.dtype]:
    """The numpy dtype of each input, after checking there is a shape (and a dtype, if given) per placeholder."""
    names = ", ".join(str(node.target) for node in placeholders)
    for what, given in (("input_shapes", input_shapes), ("input_dtypes", input_dtypes)):
        if given is not None and len(given) != len(placeholders):
            raise TorchImportError(
                f"the FX graph has {len(placeholders)} inputs ({names}), but {len(given)} {what} are given"
            )
    if input_dtypes is None:
        return [np.dtype(np.float32)] * len(placeholders)
    return [_numpy_dtype(dtype) for dtype in input_dtypes]


def _numpy_dtype(dtype: Any) -> np.dtype:
    if isinstance(dtype, torch.dtype):
        return torch.empty((), dtype=dtype).numpy().dtype
    return np.dtype(dtype)


def _outputs(bb: GraphBuilder, node_map: dict[fx.Node, Any], node: fx.Node) -> None:
    """The values the graph's `output` node returns: one (`output`) or a tuple or list of them (`output<i>`)."""
    returned = fx.node.map_arg(node.args[0], lambda argument: node_map[argument])
    values = list(returned) if isinstance(returned, tuple | list) else [returned]
    for index, value in enumerate(values):
        if not isinstance(value, SSAValue):
            raise TorchImportError(f"returned value {index} is {value!r}; outputs must be tensors")
        bb.output(value, "output" if len(values) == 1 else f"output{index}")
