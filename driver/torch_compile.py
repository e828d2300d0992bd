"""`minimlc_backend`: a TorchDynamo backend, so that `torch.compile` runs a model's graphs with minimlc:

    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU()).eval()
    compiled = torch.compile(model, backend="minimlc", options={"opt_level": 3, "num_threads": 1})
    with torch.no_grad():
        y = compiled(torch.randn(8, 64))

Dynamo hands each graph (a graph break splits a function into several) to the backend with its parameters and
buffers as inputs; they are bound as weights of the compiled model (so the optimiser folds them), and a call whose
parameters were replaced or changed in place (a new `_version`) recompiles. Tensors pass without copies: contiguous
CPU inputs as numpy views, outputs as `torch.from_numpy` of the arrays minimlc wrote. One session is compiled per
distinct input shapes (and int inputs), at the first call with them, so a dimension dynamo marks dynamic needs no
new graph: each new shape compiles once, through the compile cache (a shape compiled before, in any process, loads).
A graph minimlc cannot run (an unsupported op, a non-float32 or non-CPU input, autograd needed: compile for
inference, under `torch.no_grad()`) runs in PyTorch eager, with one `UserWarning` saying why; so do shapes of a
dynamic graph that the importer refuses (e.g. uneven adaptive pooling windows).
`torch._dynamo.utils.counters["minimlc"]` counts `compiled_graphs`, `eager_graphs`, `sessions` and `eager_shapes`.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import fx
from torch._dynamo.source import is_from_unspecialized_param_buffer_source
from torch._dynamo.utils import counters

from minimlc.driver.session import InferenceSession
from minimlc.frontend.torch.fx import TorchImportError, UnsupportedTorchOpsError, from_fx
from minimlc.runtime.session import Session

__all__ = ["minimlc_backend"]

OPTIONS = ("opt_level", "num_threads")
"""The `options` of `torch.compile(..., backend="minimlc", options={...})`: `InferenceSession.from_imported`'s."""

_IMPORT_REFUSALS = (UnsupportedTorchOpsError, TorchImportError)


def minimlc_backend(
    gm: fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    options: Mapping[str, Any] | None = None,
    mode: str | None = None,
) -> Callable[..., Any]:
    """The callable dynamo runs in place of `gm`: minimlc's compiled code, or `gm.forward` (with a warning) for a
    graph minimlc cannot run. `options` (`opt_level`, `num_threads`) go to the compiler; `mode` must be left out."""
    settings = _settings(options, mode)
    refusal = _refusal(gm, example_inputs)
    if refusal is None:
        try:
            compiled = CompiledGraph(gm, example_inputs, settings)
        except _IMPORT_REFUSALS as error:
            refusal = _import_refusal(error)
        else:
            counters["minimlc"]["compiled_graphs"] += 1
            return compiled
    warnings.warn(f"minimlc: running this graph in PyTorch eager: {refusal}", UserWarning, stacklevel=2)
    counters["minimlc"]["eager_graphs"] += 1
    return gm.forward


def _settings(options: Mapping[str, Any] | None, mode: str | None) -> dict[str, Any]:
    if mode is not None:
        raise ValueError(f"the minimlc backend takes no mode (got {mode!r}); pass options={{...}} of {list(OPTIONS)}")
    unknown = sorted(set(options or {}) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown minimlc backend option(s) {unknown}; the options are {list(OPTIONS)}")
    return dict(options or {})


def _refusal(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> str | None:
    """Why minimlc cannot run the graph (its inputs are not float32 CPU tensors, or it needs autograd), or None."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        if not isinstance(value, torch.Tensor):
            continue
        if value.device.type != "cpu":
            return f"input {node.target} is on {value.device} (minimlc runs on the CPU)"
        if value.dtype != torch.float32 and not _is_weight(node):
            return f"input {node.target} is {value.dtype} (minimlc takes float32 inputs)"
        if value.requires_grad and torch.is_grad_enabled():
            return (
                f"autograd is needed ({node.target} requires grad with gradients enabled); minimlc compiles for "
                "inference: call the model under torch.no_grad() or torch.inference_mode()"
            )
    return None


def _import_refusal(error: TorchImportError | UnsupportedTorchOpsError) -> str:
    if isinstance(error, UnsupportedTorchOpsError):
        return "unsupported " + "; ".join(f"{target} (node {', '.join(names)})" for target, names in error.ops)
    return str(error)


def _is_weight(node: fx.Node) -> bool:
    """Whether a placeholder is a parameter or buffer dynamo lifted from a module."""
    argument = node.meta.get("grapharg")
    return argument is not None and is_from_unspecialized_param_buffer_source(argument.source)


class CompiledGraph:
    """A dynamo graph run by minimlc: a session per distinct input shapes (and int inputs, such as a dynamic size),
    its parameters and buffers bound as weights."""

    def __init__(self, gm: fx.GraphModule, example_inputs: Sequence[Any], settings: Mapping[str, Any]) -> None:
        self._gm, self._settings = gm, dict(settings)
        self._placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
        roles = ["weight" if _is_weight(node) else "input" for node in self._placeholders]
        for index, value in enumerate(example_inputs):
            if not isinstance(value, torch.Tensor):
                roles[index] = "value"
        self._weights = [index for index, role in enumerate(roles) if role == "weight"]
        self._inputs = [index for index, role in enumerate(roles) if role == "input"]
        self._values = [index for index, role in enumerate(roles) if role == "value"]
        self._bound: list[tuple[torch.Tensor, int]] = []
        self._sessions: dict[tuple[Any, ...], Session | None] = {}
        self._returned = next(node for node in gm.graph.nodes if node.op == "output").args[0]
        concrete = [_concrete(value) for value in example_inputs]
        if all(value is not None for value in concrete):
            self._session_for(
                concrete, eager_if_refused=False
            )  # an unsupported op or argument is refused now, not at the first call

    def __call__(self, *args: Any) -> Any:
        arrays = {
            str(self._placeholders[index].target): args[index].detach().contiguous().numpy() for index in self._inputs
        }
        session = self._session_for(args, eager_if_refused=True)
        if session is None:
            return self._gm.forward(*args)
        results = iter(torch.from_numpy(array) for array in session.run(None, arrays))
        if isinstance(self._returned, tuple | list):
            return type(self._returned)(next(results) for _ in self._returned)
        return next(results)

    def _session_for(self, args: Sequence[Any], *, eager_if_refused: bool) -> Session | None:
        """The session for the shapes of `args`, compiled now if new (all are dropped if a weight changed); None for
        shapes the importer refused (`eager_if_refused`, with a warning; else it raises `TorchImportError`)."""
        if self._weights_changed(args):
            self._sessions.clear()
            self._bound = [(args[index], args[index]._version) for index in self._weights]
        shapes = [tuple(args[index].shape) for index in self._inputs]
        key = (*shapes, *(args[index] for index in self._values))
        if key not in self._sessions:
            try:
                imported = from_fx(self._specialized(args), shapes)
            except _IMPORT_REFUSALS as error:
                if not eager_if_refused:
                    raise
                warnings.warn(
                    f"minimlc: running this graph in PyTorch eager for input shapes {shapes}: {_import_refusal(error)}",
                    UserWarning,
                    stacklevel=3,
                )
                counters["minimlc"]["eager_shapes"] += 1
                self._sessions[key] = None
                return None
            self._sessions[key] = InferenceSession.from_imported(imported, cache=True, **self._settings)
            counters["minimlc"]["sessions"] += 1
        return self._sessions[key]

    def _weights_changed(self, args: Sequence[Any]) -> bool:
        if not self._bound:
            return bool(self._weights)
        return any(
            args[index] is not tensor or tensor._version != version
            for index, (tensor, version) in zip(self._weights, self._bound)
        )

    def _specialized(self, args: Sequence[Any]) -> fx.GraphModule:
        """The graph for these arguments: weights read as attributes (`get_attr`), int inputs as their values."""
        graph = fx.Graph()
        graph.output(graph.graph_copy(self._gm.graph, {}))
        placeholders = [node for node in graph.nodes if node.op == "placeholder"]
        attributes = {
            str(node.target): operator.attrgetter(str(node.target))(self._gm)
            for node in graph.nodes
            if node.op in ("get_attr", "call_module")
        }
        for index in self._weights:
            placeholder = placeholders[index]
            attributes[str(placeholder.target)] = args[index].detach()
            with graph.inserting_before(placeholder):
                placeholder.replace_all_uses_with(graph.get_attr(str(placeholder.target)))
            graph.erase_node(placeholder)
        for index in self._values:
            placeholder, value = placeholders[index], args[index]
            for user in list(placeholder.users):
                user.args = fx.node.map_arg(user.args, lambda node: value if node is placeholder else node)
                user.kwargs = fx.node.map_arg(user.kwargs, lambda node: value if node is placeholder else node)
            graph.erase_node(placeholder)
        return fx.GraphModule(attributes, graph)


def _concrete(value: Any) -> Any:
    """An example input as a value a session can be compiled for: a real tensor, or a dynamic size's hint (None for
    a fake tensor or a size without one)."""
    if isinstance(value, torch.SymInt):
        return getattr(value.node, "hint", None)
    if isinstance(value, torch.Tensor) and torch._subclasses.fake_tensor.is_fake(value):
        return None
    return value
