"""Shape-setting operands computed from graph inputs, for the ONNX backend (`backend/onnx_backend.py`).

The backend binds a graph input read where an op needs a compile-time constant (`CONSTANT_OPERANDS`: Reshape's
shape, Range's limit, Pad's pads, a Loop's trip count, ...). A function body (the `_expanded` node tests, exporters'
subgraphs) often computes such an operand from an input first: Range's body computes its Loop's trip count as
`ceil((limit - start) / delta)`, CenterCropPad's computes Pad's pads from the target shape, a window function's the
Range limit from its size. So the backend binds the graph inputs a constant operand is computed from, through any
chain of nodes. An input read as data too (Range's start is the loop's first value) stays a run-time input for those
reads; the nodes computing the operand from it are duplicated to read its bound copy (`<name>.bound`), so the
operand folds at import time while the rest computes on the run-time value.

    m = Cast(Ceil(Div(Sub(limit, start), delta)));  y = Loop(m, cond, start)
    -> m.bound = Cast(Ceil(Div(Sub(limit.bound, start.bound), delta.bound)));  y = Loop(m.bound, cond, start)

Tracing stops at Shape, Size, SequenceLength and OptionalHasElement, whose outputs do not depend on their inputs'
values; only tensor inputs are bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import onnx

from minimlc.frontend.onnx_operators import CONSTANT_OPERANDS

_SHAPE_OPS = ("Shape", "Size", "SequenceLength", "OptionalHasElement")
"""Ops whose outputs do not depend on their inputs' values (every shape and sequence length is static)."""


def _constant_operands(graph: onnx.GraphProto) -> list[tuple[onnx.NodeProto, int]]:
    """Every (node, input position) of `graph` where the node needs a compile-time constant."""
    return [
        (node, position)
        for node in graph.node
        if node.domain in ("", "ai.onnx")
        for position in CONSTANT_OPERANDS.get(node.op_type, ())
        if position < len(node.input) and node.input[position]
    ]


def shape_setting_inputs(graph: onnx.GraphProto) -> set[str]:
    """The graph inputs a constant operand is computed from, directly or through the graph's nodes."""
    producers = {output: node for node in graph.node for output in node.output if output}
    initializers = {tensor.name for tensor in graph.initializer}
    inputs = {vi.name for vi in graph.input if vi.type.HasField("tensor_type")} - initializers
    found: set[str] = set()
    seen: set[str] = set()
    pending = [node.input[position] for node, position in _constant_operands(graph)]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            found.add(name)
        elif (node := producers.get(name)) is not None and node.op_type not in _SHAPE_OPS:
            pending += [value for value in node.input if value]
    return found


def with_bound_operands(graph: onnx.GraphProto, renamed: Mapping[str, str]) -> None:
    """Make the nodes of `graph` compute their constant operands from the bound copies `renamed` gives (input name ->
    bound copy's name), duplicating the nodes in between (in place)."""
    producers = {output: node for node in graph.node for output in node.output if output}
    copies: dict[str, str] = dict(renamed)
    depends: dict[str, bool] = {}

    def reads_bound(name: str) -> bool:
        if name not in depends:
            node = producers.get(name)
            depends[name] = name in renamed or (
                node is not None
                and node.op_type not in _SHAPE_OPS
                and any(reads_bound(value) for value in node.input if value)
            )
        return depends[name]

    duplicated: dict[int, list[onnx.NodeProto]] = {}
    for user, position in _constant_operands(graph):
        name = user.input[position]
        if name in renamed:
            user.input[position] = renamed[name]
            continue
        if not reads_bound(name):
            continue
        chain: list[onnx.NodeProto] = []
        _collect(name, producers, reads_bound, copies, chain)
        duplicated.setdefault(id(user), []).extend(chain)
        user.input[position] = copies[name]
    nodes = list(graph.node)
    del graph.node[:]
    for node in nodes:
        graph.node.extend(duplicated.get(id(node), []))
        graph.node.append(node)


def _collect(
    name: str,
    producers: Mapping[str, onnx.NodeProto],
    reads_bound: Callable[[str], bool],
    copies: dict[str, str],
    chain: list[onnx.NodeProto],
) -> None:
    """Append to `chain` (in dependency order) copies of the nodes computing `name` from bound inputs."""
    if name in copies:
        return
    node = producers[name]
    for value in node.input:
        if value and reads_bound(value):
            _collect(value, producers, reads_bound, copies, chain)
    for output in node.output:
        if output:
            copies[output] = f"{output}.bound"
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    copy.name = f"{node.name}.bound" if node.name else ""
    copy.input[:] = [copies.get(value, value) if value and reads_bound(value) else value for value in node.input]
    copy.output[:] = [copies[output] if output else "" for output in node.output]
    chain.append(copy)
