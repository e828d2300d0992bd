"""`minimlc_backend`: a TorchDynamo backend, so that `torch.compile` runs a model's graphs with minimlc:

    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU()).eval()
    compiled = torch.compile(model, backend="minimlc", options={"opt_level": 3, "num_threads": 1})
    with torch.no_grad():
        y = compiled(torch.randn(8, 64))

Dynamo hands each graph (a graph break splits a function into several) to the backend with its parameters and
buffers as inputs; they are bound as weights of the compiled model (so the optimiser folds them), and a call whose
parameters were replaced or changed in place (a new `_version`) recompiles. Tensors pass without copies: contiguous
CPU inputs as numpy views, outputs as `torch.from_numpy` of the arrays minimlc wrote; the sizes a graph returns (for
the code after a graph break) are computed from the inputs' shapes.

A graph with dynamic dimensions (`torch._dynamo.mark_dynamic(x, 0)`, a second size, `torch.compile(dynamic=True)`)
compiles once for every size: it is re-traced by `torch.export` with `Dim.DYNAMIC` for each dynamic dimension and
imported by `from_exported_program`, each such dimension a `?` named after export's symbol (`s0`, `s1`, ...), its
range export's (the sizes the graph's ops allow, which dynamo's guards hold to); its int inputs (the sizes) are read
from the tensors that have them. Where export, the importer or the compiler cannot
keep them symbolic (logged once, `driver/symbolic.py`), the graph compiles one session per distinct input shapes (and
int inputs) instead, at the first call with them, through the compile cache (a shape compiled before loads).

    x = torch.randn(8, 64)
    torch._dynamo.mark_dynamic(x, 0)
    compiled(x); compiled(torch.randn(3, 64))      # one graph, one session (`counters["minimlc"]["sessions"] == 1`)

A graph minimlc cannot run (an unsupported op, a non-float32 or non-CPU input, autograd needed: compile for
inference, under `torch.no_grad()`; an error the compiler declares, `COMPILE_REFUSALS`) runs in PyTorch eager, with
one `UserWarning` saying why; so do shapes of a per-shape graph that minimlc refuses (e.g. uneven adaptive pooling
windows). `torch._dynamo.utils.counters["minimlc"]` counts `compiled_graphs`, `eager_graphs`, `sessions`,
`eager_shapes` and `symbolic_fallbacks`.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy
import torch
from torch import fx
from torch._dynamo.exc import UserError
from torch._dynamo.source import is_from_unspecialized_param_buffer_source
from torch._dynamo.utils import counters

from minimlc.driver.session import InferenceSession
from minimlc.driver.symbolic import COMPILE_REFUSALS, log_fallback
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.onnx_errors import ModelImportError, UnsupportedFeatureError
from minimlc.frontend.torch.exported_program import from_exported_program
from minimlc.frontend.torch.fx import TorchImportError, UnsupportedTorchOpsError, from_fx
from minimlc.runtime.session import Session

__all__ = ["minimlc_backend"]

OPTIONS = ("opt_level", "num_threads")
"""The `options` of `torch.compile(..., backend="minimlc", options={...})`: `InferenceSession.from_imported`'s."""


class CompileRefusedError(Exception):
    """`InferenceSession.from_imported` refused an imported graph with one of its declared errors."""


_REFUSALS = (UnsupportedTorchOpsError, TorchImportError, CompileRefusedError)
"""Why a graph (or its shapes) runs in eager: the FX importer or the compiler refused it."""

_SYMBOLIC_REFUSALS = (UserError, ModelImportError)
"""Why a dynamic graph is compiled per input shapes: `torch.export` (a `UserError`), or the ATen importer
(`SymbolicShapeError`, an unsupported op, a dynamic size export made static) refused it."""


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
        except _REFUSALS as error:
            refusal = _reason(error)
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
    """Why minimlc cannot run the graph (its inputs are not CPU tensors of float32, or, in a graph with dynamic
    dimensions, which `torch.export` re-traces, of the integer and bool types token ids and masks take; or it needs
    autograd), or None."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    examples = [node.meta.get("example_value") for node in placeholders]
    dynamic = any(
        isinstance(example, torch.Tensor) and any(_is_dynamic(size) for size in example.shape) for example in examples
    )
    accepted = (torch.float32, torch.int64, torch.int32, torch.bool) if dynamic else (torch.float32,)
    for node, value in zip(placeholders, example_inputs):
        if not isinstance(value, torch.Tensor):
            continue
        if value.device.type != "cpu":
            return f"input {node.target} is on {value.device} (minimlc runs on the CPU)"
        if value.dtype not in accepted and not _is_weight(node) and not _is_scalar(node):
            kinds = "float32, int64, int32 or bool inputs with dynamic dims" if dynamic else "float32 inputs"
            return f"input {node.target} is {value.dtype} (minimlc takes {kinds})"
        if value.requires_grad and torch.is_grad_enabled():
            return (
                f"autograd is needed ({node.target} requires grad with gradients enabled); minimlc compiles for "
                "inference: call the model under torch.no_grad() or torch.inference_mode()"
            )
    return None


def _reason(error: Exception) -> str:
    if isinstance(error, UnsupportedTorchOpsError):
        return "unsupported " + "; ".join(f"{target} (node {', '.join(names)})" for target, names in error.ops)
    return str(error)


def _is_weight(node: fx.Node) -> bool:
    """Whether a placeholder is a parameter or buffer dynamo lifted from a module."""
    argument = node.meta.get("grapharg")
    return argument is not None and is_from_unspecialized_param_buffer_source(argument.source)


def _is_scalar(node: fx.Node) -> bool:
    """Whether a placeholder is a Python number dynamo passes as a 0-d tensor (`torch.compile(dynamic=True)` does so
    with a layer's `eps`), read only by `.item()`."""
    argument = node.meta.get("grapharg")
    return (
        argument is not None
        and argument.pass_arg_as_tensor
        and all(user.op == "call_method" and user.target == "item" for user in node.users)
    )


class CompiledGraph:
    """A dynamo graph run by minimlc, its parameters and buffers bound as weights: one session for every size of its
    dynamic dimensions where it compiles so (`_exported`), else a session per distinct input shapes (and int inputs,
    such as a dynamic size)."""

    def __init__(self, gm: fx.GraphModule, example_inputs: Sequence[Any], settings: Mapping[str, Any]) -> None:
        self._gm, self._settings = gm, dict(settings)
        self._placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
        roles = [
            "weight" if _is_weight(node) else "scalar" if _is_scalar(node) else "input" for node in self._placeholders
        ]
        for index, value in enumerate(example_inputs):
            if not isinstance(value, torch.Tensor):
                roles[index] = "value"
        self._weights = [index for index, role in enumerate(roles) if role == "weight"]
        self._inputs = [index for index, role in enumerate(roles) if role == "input"]
        self._values = [index for index, role in enumerate(roles) if role == "value"]
        self._scalars = [index for index, role in enumerate(roles) if role == "scalar"]
        self._bound: list[tuple[torch.Tensor, int]] = []
        self._bound_scalars: list[Any] = []
        self._sessions: dict[tuple[Any, ...], Session | None] = {}
        self._names = [str(self._placeholders[index].target) for index in self._inputs]
        self._holders = {
            size.node.expr: (index, axis)
            for index in self._inputs
            for axis, size in enumerate(self._example_shape(index))
            if _is_dynamic(size)
        }
        self._dynamic = bool(self._holders)
        self._symbolic: tuple[Session, list[str]] | None = None
        self._symbolic_refused = False
        self._returned = next(node for node in gm.graph.nodes if node.op == "output").args[0]
        self._sizes = self._size_outputs()
        concrete = [_concrete(value) for value in example_inputs]
        if all(value is not None for value in concrete):
            self._session_for(
                concrete, eager_if_refused=False
            )  # an unsupported op or argument is refused now, not at the first call

    def __call__(self, *args: Any) -> Any:
        found = self._session_for(args, eager_if_refused=True)
        if found is None:
            return self._gm.forward(*args)
        session, names = found
        arrays = {name: args[index].detach().contiguous().numpy() for name, index in zip(names, self._inputs)}
        results = iter(torch.from_numpy(array) for array in session.run(None, arrays))
        if not isinstance(self._returned, tuple | list):
            return next(results)
        sizes = self._size_values(args) if self._sizes else {}
        return type(self._returned)(
            sizes[position] if position in sizes else next(results) for position in range(len(self._returned))
        )

    def _size_values(self, args: Sequence[Any]) -> dict[int, int]:
        """The sizes the graph returns, computed from the arguments' shapes and int inputs."""
        symbols = {symbol: args[index].shape[axis] for symbol, (index, axis) in self._holders.items()}
        symbols.update((symbol, args[index]) for symbol, index in self._int_inputs().items())
        return {position: int(size.xreplace(symbols)) for position, size in self._sizes.items()}

    def _size_outputs(self) -> dict[int, sympy.Expr]:
        """The sizes the graph returns (for the code after a graph break), by position: expressions of its inputs'
        sizes, computed from the arguments; `TorchImportError` for one that is not."""
        returned = self._returned if isinstance(self._returned, tuple | list) else [self._returned]
        known = set(self._holders) | set(self._int_inputs())
        sizes: dict[int, sympy.Expr] = {}
        for position, node in enumerate(returned):
            example = node.meta.get("example_value") if isinstance(node, fx.Node) else None
            if isinstance(example, torch.SymInt | int) and not isinstance(example, bool):
                size = sympy.sympify(example.node.expr if isinstance(example, torch.SymInt) else example)
                if not size.free_symbols <= known:
                    raise TorchImportError(f"the graph returns the size {size}, which its inputs' sizes do not give")
                sizes[position] = size
        if len(sizes) == len(returned):
            raise TorchImportError("the graph returns no tensors")
        return sizes

    def _session_for(self, args: Sequence[Any], *, eager_if_refused: bool) -> tuple[Session, list[str]] | None:
        """The session for `args` and the names of its inputs: the symbolic one of a dynamic graph, else the one for
        their shapes, compiled now if new (all are dropped if a weight changed); None for shapes minimlc refused
        (`eager_if_refused`, with a warning; else it raises)."""
        scalars = [args[index].item() for index in self._scalars]
        if self._weights_changed(args) or scalars != self._bound_scalars:
            self._sessions.clear()
            self._symbolic, self._symbolic_refused = None, False
            self._bound = [(args[index], args[index]._version) for index in self._weights]
            self._bound_scalars = scalars
        if self._dynamic and self._symbolic is None and not self._symbolic_refused:
            self._symbolic = self._compile_symbolic(args)
        if self._symbolic is not None:
            return self._symbolic
        shapes = [tuple(args[index].shape) for index in self._inputs]
        key = (*shapes, *(args[index] for index in self._values))
        if key not in self._sessions:
            try:
                self._sessions[key] = _compiled(from_fx(self._specialized(args), shapes), self._settings)
            except _REFUSALS as error:
                if not eager_if_refused:
                    raise
                warnings.warn(
                    f"minimlc: running this graph in PyTorch eager for input shapes {shapes}: {_reason(error)}",
                    UserWarning,
                    stacklevel=3,
                )
                counters["minimlc"]["eager_shapes"] += 1
                self._sessions[key] = None
            else:
                counters["minimlc"]["sessions"] += 1
        session = self._sessions[key]
        return None if session is None else (session, self._names)

    def _compile_symbolic(self, args: Sequence[Any]) -> tuple[Session, list[str]] | None:
        """One session for every size of the graph's dynamic dimensions (a `?` per dimension), or None (logged once,
        and per-shape sessions from then on) where export, the importer or the compiler cannot keep them symbolic."""
        try:
            imported = from_exported_program(self._exported(args))
            session = _compiled(imported, self._settings)
        except (*_SYMBOLIC_REFUSALS, *_REFUSALS) as error:
            log_fallback(f"a torch.compile graph with dynamic sizes: {_reason(error)}")
            counters["minimlc"]["symbolic_fallbacks"] += 1
            self._symbolic_refused = True
            return None
        counters["minimlc"]["sessions"] += 1
        return session, [info.name for info in imported.inputs]

    def _exported(self, args: Sequence[Any]) -> torch.export.ExportedProgram:
        """The graph re-traced by `torch.export` with `Dim.DYNAMIC` for each dynamic dimension (export narrows its
        range by the guards the graph's ops need, as dynamo's own guards do), its weights as constants and its int
        inputs (dynamic sizes) read from the tensors that have them; `UnsupportedFeatureError` if export specialised
        a dynamic dimension to a number."""
        graph, placeholders, attributes = self._graph_with_weights(args)
        symbols = {index: symbol for symbol, index in self._int_inputs().items()}
        for index in self._values:
            placeholder, symbol = placeholders[index], symbols.get(index)
            if symbol not in self._holders:
                raise UnsupportedFeatureError(f"the int input {placeholder.target} is not an input tensor's size")
            holder, axis = self._holders[symbol]
            with graph.inserting_after(placeholders[holder]):
                size = graph.call_function(torch.ops.aten.sym_size.int, (placeholders[holder], axis))
            placeholder.replace_all_uses_with(size)
            graph.erase_node(placeholder)
        dynamic_shapes = [
            {
                axis: torch.export.Dim.DYNAMIC
                for axis, size in enumerate(self._example_shape(index))
                if _is_dynamic(size)
            }
            for index in self._inputs
        ]
        examples = tuple(torch.empty_like(args[index]) for index in self._inputs)
        with torch._guards.tracing(None):  # in dynamo's context, export would add guards to the frame dynamo compiles
            program = torch.export.export(
                fx.GraphModule(attributes, graph), examples, dynamic_shapes=tuple(dynamic_shapes), strict=False
            )
        user_inputs = set(program.graph_signature.user_inputs)
        values = [node.meta["val"] for node in program.graph.nodes if node.name in user_inputs]
        for value, dynamic in zip(values, dynamic_shapes):
            if any(not _is_dynamic(value.shape[axis]) for axis in dynamic):
                raise UnsupportedFeatureError(f"torch.export specialised a dynamic size of an input to {value.shape}")
        return program

    def _example(self, index: int) -> Any:
        """Placeholder `index`'s example value, as dynamo recorded it: a fake tensor, a SymInt; None without."""
        return self._placeholders[index].meta.get("example_value")

    def _int_inputs(self) -> dict[sympy.Expr, int]:
        """The index of each int input (a dynamic size), by its symbol."""
        examples = {index: self._example(index) for index in self._values}
        return {example.node.expr: index for index, example in examples.items() if isinstance(example, torch.SymInt)}

    def _example_shape(self, index: int) -> tuple[Any, ...]:
        """The shape of input `index`'s example value (SymInts where dynamic), as dynamo recorded it; () without."""
        example = self._example(index)
        return tuple(example.shape) if isinstance(example, torch.Tensor) else ()

    def _weights_changed(self, args: Sequence[Any]) -> bool:
        if not self._bound:
            return bool(self._weights)
        return any(
            args[index] is not tensor or tensor._version != version
            for index, (tensor, version) in zip(self._weights, self._bound)
        )

    def _graph_with_weights(self, args: Sequence[Any]) -> tuple[fx.Graph, list[fx.Node], dict[str, Any]]:
        """A copy of the graph whose weights are read as attributes (`get_attr`) and scalars are their values, its
        placeholders (those of the weights and scalars erased) and its attributes."""
        graph = fx.Graph()
        returned = graph.graph_copy(self._gm.graph, {})
        if self._sizes:  # computed from the arguments instead
            returned = type(returned)(value for position, value in enumerate(returned) if position not in self._sizes)
        graph.output(returned)
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
        for index in self._scalars:
            for item in list(placeholders[index].users):
                _substitute(graph, item, args[index].item())
            graph.erase_node(placeholders[index])
        return graph, placeholders, attributes

    def _specialized(self, args: Sequence[Any]) -> fx.GraphModule:
        """The graph for these arguments: weights read as attributes, int inputs as their values."""
        graph, placeholders, attributes = self._graph_with_weights(args)
        for index in self._values:
            _substitute(graph, placeholders[index], args[index])
        return fx.GraphModule(attributes, graph)


def _substitute(graph: fx.Graph, node: fx.Node, value: Any) -> None:
    """Replace `node`, erased, by `value` (a number) where it is used."""
    for user in list(node.users):
        user.args = fx.node.map_arg(user.args, lambda argument: value if argument is node else argument)
        user.kwargs = fx.node.map_arg(user.kwargs, lambda argument: value if argument is node else argument)
    graph.erase_node(node)


def _compiled(imported: ImportedModel, settings: Mapping[str, Any]) -> Session:
    """`imported` compiled; `CompileRefusedError` for what the compiler declares it refuses (`COMPILE_REFUSALS`)."""
    try:
        return InferenceSession.from_imported(imported, cache=True, **settings)
    except COMPILE_REFUSALS as error:
        raise CompileRefusedError(f"the compiler refused it: {type(error).__name__}: {error}") from error


def _is_dynamic(size: Any) -> bool:
    """Whether an example value's size is dynamic: a SymInt that dynamo has not specialised to a number."""
    return isinstance(size, torch.SymInt) and not size.node.expr.is_number


def _concrete(value: Any) -> Any:
    """An example input as a value a session can be compiled for: a real tensor, or a dynamic size's hint (None for
    a fake tensor or a size without one)."""
    if isinstance(value, torch.SymInt):
        return getattr(value.node, "hint", None)
    if isinstance(value, torch.Tensor) and torch._subclasses.fake_tensor.is_fake(value):
        return None
    return value
