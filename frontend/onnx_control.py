"""ONNX control flow resolved at import time: If, Loop, Scan and SequenceMap inline their subgraphs into @main.

minimlc's graph is a static-shape SSA graph, so a subgraph is imported once per iteration (or per taken branch) by
`ControlContext.subgraph`, with its inputs bound to the values of that iteration and the outer scope's names
visible; every tensor it computes is still computed by native code (or folded when it depends only on constants,
such as the iteration number).

- If: a compile-time condition imports the taken branch only; a run-time one imports both and selects each output
  with `graph.where` on the condition, which needs both branches to give outputs of one shape and element type.
- Loop: unrolled for a compile-time trip count `M` (the backend binds M and the initial condition: they set the
  extent of the scan outputs), or until the body's condition becomes a compile-time false; a run-time condition
  keeps the loop-carried values with `graph.where` once false (scan outputs then have a data-dependent extent:
  refused). Scan outputs are the per-iteration values stacked along a new axis 0 (`graph.concat`).
- Scan: unrolled over the static length of the scan inputs, in each input's direction and along its axis (opset 8:
  per batch element), the scan outputs stacked along their axes.

    y, z = Scan(init, x[3, 2]) { s_out = Add(s_in, x_t); out = Identity(s_out) }
    -> s1 = graph.add(init, slice(x, 0)); s2 = graph.add(s1, slice(x, 1)); ...; z = graph.concat(s1, s2, s3)

At most `MAX_ITERATIONS` iterations are unrolled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import hashlib
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import ConstantValue, NodeContext, NodeError, UnsupportedNodeError, Value
from minimlc.frontend.onnx_sequence import (
    Item,
    OptionalValue,
    SequenceValue,
    constant_integer,
    dtype_of_value,
    sequence_of,
    shape_of_value,
    stacked,
)

MAX_ITERATIONS = 512
"""The most iterations a Loop, Scan or SequenceMap is unrolled into (each imports its body once)."""

Subgraph = Callable[[onnx.GraphProto, Sequence[Item]], list[Item]]
"""Imports a subgraph with its inputs bound to the given values; returns its outputs."""


@dataclass
class ScopedConstants:
    """Names the constants of subgraphs, imported once per iteration or branch: a folded `i + 1` of iteration 3 must
    not be the weight of iteration 2's, while a Constant node's value, the same in every iteration, is one weight."""

    names: dict[tuple[str, str, tuple[int, ...], str], str] = field(default_factory=dict)

    def named(self, value: ConstantValue, scope: str) -> ConstantValue:
        """`value` under the name the first constant of its name and contents got in a subgraph (`scope` + name)."""
        array = np.ascontiguousarray(value.array)
        key = (value.name, array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest())
        return ConstantValue(self.names.setdefault(key, f"{scope}{value.name}"), value.array)


@dataclass
class ControlContext(NodeContext):
    """A `NodeContext` that can also import the node's subgraphs into @main."""

    subgraph: Subgraph = field(kw_only=True)
    subgraph_checks: list[tuple[SSAValue, str]] = field(kw_only=True, default_factory=list[tuple[SSAValue, str]])
    """The model's run-time index checks, which the subgraphs' nodes append to (`onnx_index_checks`)."""

    def gate_checks(self, start: int, condition: SSAValue, taken: bool) -> None:
        """Count the index checks appended since `start` only in runs where `condition` is `taken`: a branch or
        iteration that is computed but whose values are not selected must not raise (If's untaken branch)."""
        zero = self.data(ConstantValue(f"{self.node.output[0]}.no_index_errors", np.zeros(1, np.int64)))
        for position in range(start, len(self.subgraph_checks)):
            count, message = self.subgraph_checks[position]
            selected = (count, zero) if taken else (zero, count)
            self.subgraph_checks[position] = (self.emit(graph.WhereOp(condition, *selected)), message)


def _condition(ctx: NodeContext, value: Item | None, what: str) -> bool | SSAValue:
    """A one-element bool condition: a Python bool when known at import time, else a rank-0 run-time tensor."""
    if isinstance(value, ConstantValue):
        if value.array.size != 1:
            raise NodeError(f"{what} must hold one element, got shape {value.array.shape}")
        return bool(value.array.reshape(()))
    if not isinstance(value, SSAValue):
        raise NodeError(f"{what} must be a bool tensor")
    if graph.element_type(value) != i1 or int(np.prod(shape_of(value))) != 1:
        raise NodeError(f"{what} must be one bool, got {value.type}")
    return value if shape_of(value) == () else ctx.emit(graph.ReshapeOp(value, ()))


def _both(ctx: NodeContext, a: bool | SSAValue, b: bool | SSAValue) -> bool | SSAValue:
    """`a and b`, at import time where either is known."""
    if a is False or b is False:
        return False
    if a is True or b is True:
        return b if a is True else a
    return a if a is b else ctx.emit(graph.AndOp(a, b))


def selected(ctx: NodeContext, condition: SSAValue, then: Item, otherwise: Item, what: str) -> Item:
    """`then` where the run-time `condition` holds, else `otherwise` -> graph.where (per element of sequences)."""
    if isinstance(then, SequenceValue) and isinstance(otherwise, SequenceValue):
        if len(then.items) != len(otherwise.items):
            raise UnsupportedNodeError(
                f"{what} is a sequence of length {len(then.items)} or {len(otherwise.items)} depending on a run-time "
                "condition; only equal lengths are supported"
            )
        items = [selected(ctx, condition, a, b, what) for a, b in zip(then.items, otherwise.items)]
        return sequence_of(items, then.dtype)  # pyright: ignore[reportArgumentType]
    if isinstance(then, OptionalValue) or isinstance(otherwise, OptionalValue):
        raise UnsupportedNodeError(f"{what} is an optional chosen by a run-time condition")
    if not isinstance(then, (SSAValue, ConstantValue)) or not isinstance(otherwise, (SSAValue, ConstantValue)):
        raise UnsupportedNodeError(f"{what} is a tensor or a sequence depending on a run-time condition")
    shapes = (shape_of_value(then), shape_of_value(otherwise))
    dtypes = (dtype_of_value(then), dtype_of_value(otherwise))
    if shapes[0] != shapes[1] or dtypes[0] != dtypes[1]:
        raise UnsupportedNodeError(
            f"{what} has shape {shapes[0]} ({dtypes[0]}) or {shapes[1]} ({dtypes[1]}) depending on a run-time "
            "condition; both must have one static shape and element type"
        )
    if isinstance(then, ConstantValue) and isinstance(otherwise, ConstantValue):
        if np.array_equal(then.array, otherwise.array):
            return then
    if then is otherwise:
        return then
    return ctx.emit(graph.WhereOp(condition, ctx.data(then), ctx.data(otherwise)))


def If(
    ctx: ControlContext, cond: Item, *, then_branch: onnx.GraphProto, else_branch: onnx.GraphProto
) -> tuple[Item, ...]:
    """The taken branch's outputs when `cond` is known at import time, else both branches selected per output."""
    condition = _condition(ctx, cond, "cond")
    if isinstance(condition, bool):
        return tuple(ctx.subgraph(then_branch if condition else else_branch, []))
    start = len(ctx.subgraph_checks)
    then = ctx.subgraph(then_branch, [])
    ctx.gate_checks(start, condition, taken=True)
    start = len(ctx.subgraph_checks)
    otherwise = ctx.subgraph(else_branch, [])
    ctx.gate_checks(start, condition, taken=False)
    if len(then) != len(otherwise):
        raise NodeError(f"the branches give {len(then)} and {len(otherwise)} outputs")
    return tuple(
        selected(ctx, condition, a, b, f"output '{name}'") for a, b, name in zip(then, otherwise, ctx.node.output)
    )


def _iterations(count: int | None) -> None:
    if count is not None and count > MAX_ITERATIONS:
        raise UnsupportedNodeError(f"{count} iterations: at most {MAX_ITERATIONS} are unrolled")


def Loop(
    ctx: ControlContext, M: Item | None = None, cond: Item | None = None, *v_initial: Item, body: onnx.GraphProto
) -> tuple[Item, ...]:
    """The body unrolled for each iteration; loop-carried values threaded through, scan outputs stacked."""
    if M is not None and not isinstance(M, ConstantValue):
        raise UnsupportedNodeError("the trip count M is computed at run time; only a compile-time one is unrolled")
    trip = constant_integer(M, "M")
    _iterations(trip)
    if len(body.input) != 2 + len(v_initial):
        raise NodeError(f"the body takes {len(body.input)} inputs, expected {2 + len(v_initial)}")
    running = True if cond is None else _condition(ctx, cond, "cond")
    carried = list(v_initial)
    scans: list[list[Item]] = []
    prefix = ctx.node.output[0] if ctx.node.output else "loop"
    iteration = 0
    while (trip is None or iteration < trip) and running is not False:
        if iteration == MAX_ITERATIONS:
            raise UnsupportedNodeError(f"the loop runs past {MAX_ITERATIONS} iterations, the most unrolled")
        number = ConstantValue(f"{prefix}.iteration{iteration}", np.array(iteration, np.int64))
        condition = ConstantValue(f"{prefix}.running", np.array(True)) if running is True else running
        start = len(ctx.subgraph_checks)
        try:
            outputs = ctx.subgraph(body, [number, condition, *carried])
        except ValueError as error:  # the importer's ModelImportError: this iteration fails whatever the inputs
            if running is True or isinstance(error, NotImplementedError) or len(body.output) > 1 + len(carried):
                raise
            _fails_if_reached(ctx, start, running, f"the loop reaches iteration {iteration}, where {error}")
            break
        if running is not True:  # an iteration past a run-time exit is computed but not kept
            ctx.gate_checks(start, running, taken=True)
        if len(outputs) < 1 + len(carried):
            raise NodeError(f"the body gives {len(outputs)} outputs, expected at least {1 + len(carried)}")
        updated, scan = outputs[1 : 1 + len(carried)], outputs[1 + len(carried) :]
        if running is True:
            carried = updated
        elif scan:
            raise UnsupportedNodeError(
                "the loop's condition is computed at run time, so its scan outputs have a data-dependent extent"
            )
        else:
            carried = [
                selected(ctx, running, new, old, f"loop-carried value {index}")
                for index, (new, old) in enumerate(zip(updated, carried))
            ]
        scans.append(scan)
        running = _both(ctx, running, _condition(ctx, outputs[0], "the body's condition"))
        iteration += 1
    scan_count = len(body.output) - 1 - len(v_initial)
    if scan_count and not scans:
        raise UnsupportedNodeError("the loop runs no iteration: its scan outputs' element shape is unknown")
    stacks = [stacked(ctx, [_tensor_output(step[k], "scan output") for step in scans], 0) for k in range(scan_count)]
    return (*carried, *stacks)


def _fails_if_reached(ctx: ControlContext, start: int, running: SSAValue, message: str) -> None:
    """A loop iteration that cannot be imported (an index out of range at import time, say) after a run-time exit
    condition: the unrolling stops there, and a run that would reach it raises (`onnx_index_checks`) with `message`,
    as ONNX Runtime fails in that iteration."""
    del ctx.subgraph_checks[start:]
    reached = ctx.emit(graph.ReshapeOp(ctx.emit(graph.CastOp(running, i64)), (1,)))
    ctx.subgraph_checks.append((reached, message))


def _tensor_output(value: Item, what: str) -> Value:
    if not isinstance(value, (SSAValue, ConstantValue)):
        raise UnsupportedNodeError(f"a {what} must be a tensor")
    return value


def taken(ctx: NodeContext, value: Value, axis: int, index: int) -> Value:
    """`value` at `index` along `axis`, without that axis."""
    if isinstance(value, ConstantValue):
        return ConstantValue(f"{value.name}[{axis}:{index}]", np.take(value.array, index, axis))
    shape = shape_of(value)
    starts = [index if d == axis else 0 for d in range(len(shape))]
    extents = [1 if d == axis else e for d, e in enumerate(shape)]
    sliced = ctx.emit(graph.SliceOp(value, starts, [1] * len(shape), extents))
    return ctx.emit(graph.ReshapeOp(sliced, shape[:axis] + shape[axis + 1 :]))


def _axes(values: Sequence[int] | None, count: int, what: str) -> list[int]:
    chosen = [0] * count if values is None else list(values)
    if len(chosen) != count:
        raise NodeError(f"{what} has {len(chosen)} entries, expected {count}")
    return chosen


def _unrolled_scan(
    ctx: ControlContext,
    body: onnx.GraphProto,
    states: Sequence[Item],
    inputs: Sequence[Value],
    input_axes: Sequence[int],
    input_directions: Sequence[int],
    output_axes: Sequence[int] | None,
    output_directions: Sequence[int] | None,
) -> list[Item]:
    """One scan over `inputs` (sliced along `input_axes`): the final states, then the stacked scan outputs."""
    axes = [_axis(axis, len(shape_of_value(x)), "scan_input_axes") for axis, x in zip(input_axes, inputs)]
    lengths = {shape_of_value(x)[axis] for axis, x in zip(axes, inputs)}
    if len(lengths) != 1:
        raise NodeError(f"the scan inputs have different sequence lengths {sorted(lengths)}")
    length = lengths.pop()
    _iterations(length)
    if length == 0:
        raise UnsupportedNodeError("the scan inputs are empty: the scan outputs' element shape is unknown")
    scan_count = len(body.output) - len(states)
    if len(body.input) != len(states) + len(inputs) or scan_count < 0:
        raise NodeError(f"the body's inputs and outputs do not match {len(states)} states and {len(inputs)} inputs")
    out_axes, out_directions = (
        _axes(output_axes, scan_count, "scan_output_axes"),
        _axes(output_directions, scan_count, "scan_output_directions"),
    )
    current = list(states)
    steps: list[list[Item]] = []
    for step in range(length):
        slices = [
            taken(ctx, x, axis, length - 1 - step if reverse else step)
            for x, axis, reverse in zip(inputs, axes, input_directions)
        ]
        outputs = ctx.subgraph(body, [*current, *slices])
        current, scan = outputs[: len(states)], outputs[len(states) :]
        steps.append(scan)
    stacks: list[Item] = []
    for k, (axis, reverse) in enumerate(zip(out_axes, out_directions)):
        values = [_tensor_output(step[k], "scan output") for step in steps]
        stacks.append(stacked(ctx, values[::-1] if reverse else values, axis))
    return [*current, *stacks]


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise NodeError(f"{what} entry {axis} is out of range for rank {rank}")
    return axis % rank


def Scan(
    ctx: ControlContext,
    *inputs: Item | None,
    body: onnx.GraphProto,
    num_scan_inputs: int,
    directions: Sequence[int] | None = None,
    scan_input_axes: Sequence[int] | None = None,
    scan_input_directions: Sequence[int] | None = None,
    scan_output_axes: Sequence[int] | None = None,
    scan_output_directions: Sequence[int] | None = None,
) -> tuple[Item, ...]:
    """The body unrolled over the scan inputs' sequence axis (opset 8: for each batch element, then stacked)."""
    if ctx.opset >= 9:
        states, scanned = inputs[: len(inputs) - num_scan_inputs], inputs[len(inputs) - num_scan_inputs :]
        in_directions = _axes(scan_input_directions, num_scan_inputs, "scan_input_directions")
        return tuple(
            _unrolled_scan(
                ctx,
                body,
                [_present(state) for state in states],
                [_tensor_output(_present(x), "scan input") for x in scanned],
                _axes(scan_input_axes, num_scan_inputs, "scan_input_axes"),
                in_directions,
                scan_output_axes,
                scan_output_directions,
            )
        )
    sequence_lens, *rest = inputs
    states = [_tensor_output(_present(state), "state") for state in rest[: len(rest) - num_scan_inputs]]
    scanned = [_tensor_output(_present(x), "scan input") for x in rest[len(rest) - num_scan_inputs :]]
    in_directions = _axes(directions, num_scan_inputs, "directions")
    batches = {shape_of_value(value)[0] for value in (*states, *scanned)}
    if len(batches) != 1:
        raise NodeError(f"the inputs have different batch sizes {sorted(batches)}")
    batch = batches.pop()
    length = shape_of_value(scanned[0])[1] if scanned else 0
    if sequence_lens is not None and not (
        isinstance(sequence_lens, ConstantValue) and np.all(sequence_lens.array == length)
    ):
        raise UnsupportedNodeError("sequence_lens shorter than the inputs' length (or known at run time only)")
    per_batch = [
        _unrolled_scan(
            ctx,
            body,
            [taken(ctx, state, 0, b) for state in states],
            [taken(ctx, x, 0, b) for x in scanned],
            [0] * num_scan_inputs,
            in_directions,
            None,
            None,
        )
        for b in range(batch)
    ]
    outputs = range(len(per_batch[0]))
    return tuple(stacked(ctx, [_tensor_output(row[k], "output") for row in per_batch], 0) for k in outputs)


def _present(value: Item | None) -> Item:
    if value is None:
        raise NodeError("an omitted input where a value is needed")
    return value


def SequenceMap(
    ctx: ControlContext, input_sequence: Item | None = None, *additional_inputs: Item, body: onnx.GraphProto
) -> tuple[SequenceValue, ...]:
    """The body applied to each element (with the same element of each other sequence, or the other tensors)."""
    if not isinstance(input_sequence, SequenceValue):
        raise NodeError("input_sequence must be a sequence")
    length = len(input_sequence.items)
    _iterations(length)
    for other in additional_inputs:
        if isinstance(other, SequenceValue) and len(other.items) != length:
            raise NodeError(f"the sequences have lengths {length} and {len(other.items)}")
    results = [
        ctx.subgraph(
            body,
            [
                input_sequence.items[index],
                *(other.items[index] if isinstance(other, SequenceValue) else other for other in additional_inputs),
            ],
        )
        for index in range(length)
    ]
    sequences: list[SequenceValue] = []
    for k, output in enumerate(body.output):
        declared = output.type.sequence_type.elem_type.tensor_type.elem_type or output.type.tensor_type.elem_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(declared)) if declared else None
        sequences.append(sequence_of([_tensor_output(row[k], "SequenceMap output") for row in results], dtype))
    return tuple(sequences)


def subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The subgraphs of a node's attributes (If's branches, Loop's body, ...)."""
    return [graph for a in node.attribute for graph in (*a.graphs, *([a.g] if a.HasField("g") else []))]


def constant_inputs(node: onnx.NodeProto, subgraph: onnx.GraphProto) -> set[str]:
    """The inputs of a node's subgraph known at import time in every import of it: Loop's iteration number."""
    return {subgraph.input[0].name} if node.op_type == "Loop" and subgraph.input else set()


def names_used(graph_proto: onnx.GraphProto) -> set[str]:
    """The names the graph's nodes read (their subgraphs' nodes too) and its outputs."""
    used = {vi.name for vi in graph_proto.output}
    for node in graph_proto.node:
        used.update(node.input)
        for subgraph in subgraphs(node):
            used |= names_used(subgraph)
    return used


CONVERTERS = {"If": If, "Loop": Loop, "Scan": Scan, "SequenceMap": SequenceMap}
"""ONNX op type -> converter, for the ops with subgraphs (each takes a `ControlContext`)."""
