"""ONNX converters for the recurrent layers RNN, LSTM and GRU, unrolled over time into graph ops (as TVM's ONNX
frontend does): the input projection of every step is one `graph.gemm`, then each step is a gemm of the hidden
state, gate activations and elementwise updates, in the direction's order. Shapes are static, so the unrolled graph
is exact; `MAX_STEPS` bounds its size.

    gates_t = X_t W^T + Wb  (all steps at once)  +  H_{t-1} R^T + Rb
    RNN: H_t = f(gates_t)
    LSTM (gates i, o, f, c): C_t = f(f_t) C_{t-1} + f(i_t) g(c_t); H_t = f(o_t) h(C_t), peepholes P on C
    GRU (gates z, r, h): H_t = (1 - z_t) h~_t + z_t H_{t-1}, h~_t with the reset gate before or after R_h

Every direction (forward, reverse, bidirectional), both layouts, initial states, biases and LSTM peepholes are
supported; `sequence_lens` (a run-time int32 tensor) masks the steps past each sequence's length in the forward
direction. The activations may be Sigmoid, Tanh or Relu; `clip`, activation parameters and `input_forget` are
refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
)

MAX_STEPS = 512
"""The longest sequence unrolled (each step adds a handful of graph ops per direction)."""

Activation = Callable[[SSAValue], graph.ElementwiseUnaryOp]

ACTIVATIONS: dict[str, Activation] = {
    "sigmoid": graph.SigmoidOp,
    "tanh": graph.TanhOp,
    "relu": graph.ReluOp,
}
"""ONNX activation name (lower case) -> the graph op computing it."""


@dataclass
class _Direction:
    """One direction's parameters: input projection of every step [seq, batch, G*H], recurrence weight [G*H, H] and
    bias [G*H], initial hidden state [batch, H], activations, and whether it runs from the end."""

    projected: SSAValue
    recurrence: SSAValue
    recurrence_bias: SSAValue | None
    hidden: SSAValue
    activations: list[Activation]
    reverse: bool


def _slice(ctx: NodeContext, x: SSAValue, axis: int, start: int, length: int) -> SSAValue:
    shape = list(shape_of(x))
    starts = [start if d == axis else 0 for d in range(len(shape))]
    shape[axis] = length
    return ctx.emit(graph.SliceOp(x, starts, [1] * len(shape), shape))


def _take(ctx: NodeContext, x: SSAValue, axis: int, index: int) -> SSAValue:
    """`x` at `index` along `axis`, without that axis."""
    shape = shape_of(x)
    return ctx.emit(graph.ReshapeOp(_slice(ctx, x, axis, index, 1), (*shape[:axis], *shape[axis + 1 :])))


def _f32(ctx: NodeContext, value: Value | None, name: str, shape: Sequence[int]) -> SSAValue | None:
    if value is None:
        return None
    x = ctx.data(value)
    if graph.element_type(x) != f32 or shape_of(x) != tuple(shape):
        raise NodeError(f"{name} must be a float32 tensor of shape {tuple(shape)}, got {x.type}")
    return x


def _required_f32(ctx: NodeContext, value: Value | None, name: str, shape: Sequence[int]) -> SSAValue:
    checked = _f32(ctx, value, name, shape)
    if checked is None:
        raise NodeError(f"input {name} is required")
    return checked


def _activations(
    names: Sequence[str | bytes] | None, defaults: Sequence[str], directions: int
) -> list[list[Activation]]:
    chosen = [as_text(name).lower() for name in names] if names else [*defaults] * directions
    if len(chosen) != len(defaults) * directions:
        raise NodeError(f"activations must name {len(defaults)} functions per direction, got {chosen}")
    unknown = sorted({name for name in chosen if name not in ACTIVATIONS})
    if unknown:
        raise UnsupportedNodeError(f"activations {unknown} are not supported (only {', '.join(ACTIVATIONS)})")
    per = len(defaults)
    return [[ACTIVATIONS[name] for name in chosen[d * per : (d + 1) * per]] for d in range(directions)]


@dataclass(frozen=True)
class _Options:
    """The attributes every recurrent layer shares."""

    direction: str
    hidden_size: int | None
    layout: int

    @staticmethod
    def checked(
        direction: str | bytes,
        hidden_size: int | None,
        layout: int,
        unsupported: dict[str, float | list[float] | None],
    ) -> _Options:
        """The options, refusing the `unsupported` attributes that are set (clip, activation parameters)."""
        for name, value in unsupported.items():
            if value is not None:
                raise UnsupportedNodeError(f"attribute {name} is not supported")
        text = as_text(direction)
        if text not in ("forward", "reverse", "bidirectional"):
            raise NodeError(f"direction must be forward, reverse or bidirectional, got '{text}'")
        return _Options(text, hidden_size, layout)


class _Recurrence:
    """The unrolling of one RNN, LSTM or GRU node: checks, the per-direction parameters, the steps, the outputs."""

    def __init__(self, ctx: NodeContext, gates: int, inputs: Sequence[Value | None], options: _Options) -> None:
        X, W, R, B, sequence_lens, initial_h = inputs[:6]
        self.ctx, self.gates = ctx, gates
        direction = options.direction
        self.layout = options.layout
        x = ctx.data(X)
        if graph.element_type(x) != f32 or len(shape_of(x)) != 3:
            raise NodeError(f"X must be a 3-D float32 tensor, got {x.type}")
        self.x = ctx.emit(graph.TransposeOp(x, (1, 0, 2))) if self.layout else x
        self.steps, self.batch, features = shape_of(self.x)
        if not 1 <= self.steps <= MAX_STEPS:
            raise UnsupportedNodeError(f"sequences of {self.steps} steps are not supported (1 to {MAX_STEPS})")
        self.directions = 2 if direction == "bidirectional" else 1
        self.reverse = [direction == "reverse", True][: self.directions]
        hidden = options.hidden_size or shape_of(ctx.data(R))[-1]
        self.hidden = hidden
        gh = gates * hidden
        self.w = _required_f32(ctx, W, "W", (self.directions, gh, features))
        self.r = _required_f32(ctx, R, "R", (self.directions, gh, hidden))
        self.b = _f32(ctx, B, "B", (self.directions, 2 * gh))
        self.initial = self.state(initial_h, "initial_h")
        self.mask_lengths = self._sequence_lengths(sequence_lens)

    def state(self, value: Value | None, name: str) -> SSAValue | None:
        """An initial state [dirs, batch, H] (given batch first with layout 1)."""
        batch, directions, hidden = self.batch, self.directions, self.hidden
        shape = (batch, directions, hidden) if self.layout else (directions, batch, hidden)
        state = _f32(self.ctx, value, name, shape)
        if state is not None and self.layout:
            state = self.ctx.emit(graph.TransposeOp(state, (1, 0, 2)))
        return state

    def _sequence_lengths(self, value: Value | None) -> SSAValue | None:
        """The run-time lengths to mask with (None when absent, or constant and all full)."""
        if value is None:
            return None
        if isinstance(value, ConstantValue) and bool(np.all(value.array == self.steps)):
            return None
        lengths = self.ctx.data(value)
        if graph.element_type(lengths) not in graph.INDICES or shape_of(lengths) != (self.batch,):
            raise NodeError(f"sequence_lens must be an integer tensor of shape ({self.batch},), got {lengths.type}")
        if any(self.reverse):
            raise UnsupportedNodeError("sequence_lens in the reverse direction is not supported")
        return self.ctx.emit(graph.ReshapeOp(lengths, (self.batch, 1)))

    def direction(
        self, d: int, activations: list[Activation], recurrence_rows: tuple[int, int] | None = None
    ) -> _Direction:
        """Direction `d`'s parameters; `recurrence_rows` limits R and Rb to those rows (GRU's z and r gates)."""
        ctx, gh = self.ctx, self.gates * self.hidden
        w, r = _take(ctx, self.w, 0, d), _take(ctx, self.r, 0, d)
        bias = _take(ctx, self.b, 0, d) if self.b is not None else None
        input_bias = _slice(ctx, bias, 0, 0, gh) if bias is not None else None
        flat = ctx.emit(graph.ReshapeOp(self.x, (self.steps * self.batch, shape_of(self.x)[2])))
        projected = ctx.emit(graph.GemmOp(flat, w, input_bias, trans_b=True))
        projected = ctx.emit(graph.ReshapeOp(projected, (self.steps, self.batch, gh)))
        start, length = recurrence_rows or (0, gh)
        recurrence = _slice(ctx, r, 0, start, length)
        recurrence_bias = _slice(ctx, bias, 0, gh + start, length) if bias is not None else None
        hidden = _take(ctx, self.initial, 0, d) if self.initial is not None else self.zeros()
        return _Direction(projected, recurrence, recurrence_bias, hidden, activations, self.reverse[d])

    def zeros(self) -> SSAValue:
        return self.ctx.emit(graph.ConstantOp(0.0, (self.batch, self.hidden)))

    def gate(self, gates: SSAValue, k: int) -> SSAValue:
        return _slice(self.ctx, gates, 1, k * self.hidden, self.hidden)

    def order(self, direction: _Direction) -> range:
        return range(self.steps - 1, -1, -1) if direction.reverse else range(self.steps)

    def inside(self, t: int) -> SSAValue | None:
        """Whether step `t` is inside each sequence ([batch, 1] bools; None without sequence_lens)."""
        if self.mask_lengths is None:
            return None
        dtype = np.int32 if graph.element_type(self.mask_lengths) == graph.INDICES[0] else np.int64
        name = f"{'_'.join(filter(None, self.ctx.node.output))}_step_{t}"
        return self.ctx.emit(graph.LessOp(self.ctx.data(ConstantValue(name, np.array(t, dtype))), self.mask_lengths))

    def kept(self, inside: SSAValue | None, new: SSAValue, old: SSAValue) -> SSAValue:
        """`new` inside the sequence, `old` past its end."""
        return new if inside is None else self.ctx.emit(graph.WhereOp(inside, new, old))

    def outputs(self, hidden_steps: list[dict[int, SSAValue]], finals: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """Y [seq, dirs, batch, H] and Y_h [dirs, batch, H] (batch first with layout 1) from each direction's
        hidden state at each step and its final state."""
        ctx, shape = self.ctx, (1, 1, self.batch, self.hidden)
        per_direction = [
            ctx.emit(graph.ConcatOp([ctx.emit(graph.ReshapeOp(steps[t], shape)) for t in range(self.steps)], 0))
            if self.steps > 1
            else ctx.emit(graph.ReshapeOp(steps[0], shape))
            for steps in hidden_steps
        ]
        y = per_direction[0] if self.directions == 1 else ctx.emit(graph.ConcatOp(per_direction, 1))
        return (self.batch_first(y, (2, 0, 1, 3)), self.stacked(finals))

    def stacked(self, finals: list[SSAValue]) -> SSAValue:
        ctx, shape = self.ctx, (1, self.batch, self.hidden)
        parts = [ctx.emit(graph.ReshapeOp(final, shape)) for final in finals]
        return self.batch_first(parts[0] if len(parts) == 1 else ctx.emit(graph.ConcatOp(parts, 0)), (1, 0, 2))

    def batch_first(self, value: SSAValue, perm: tuple[int, ...]) -> SSAValue:
        return self.ctx.emit(graph.TransposeOp(value, perm)) if self.layout else value


def _recurrent_gates(ctx: NodeContext, direction: _Direction, h: SSAValue, t: int) -> SSAValue:
    """X_t W^T + Wb + H_{t-1} R^T + Rb for the gates `direction.recurrence` covers."""
    recurrent = ctx.emit(graph.GemmOp(h, direction.recurrence, direction.recurrence_bias, trans_b=True))
    projected = _take(ctx, direction.projected, 0, t)
    if shape_of(projected) != shape_of(recurrent):  # GRU: the z and r gates only
        projected = _slice(ctx, projected, 1, 0, shape_of(recurrent)[1])
    return ctx.emit(graph.AddOp(projected, recurrent))


def RNN(
    ctx: NodeContext,
    X: Value,
    W: Value,
    R: Value,
    B: Value | None = None,
    sequence_lens: Value | None = None,
    initial_h: Value | None = None,
    *,
    activation_alpha: list[float] | None = None,
    activation_beta: list[float] | None = None,
    activations: list[str | bytes] | None = None,
    clip: float | None = None,
    direction: str | bytes = "forward",
    hidden_size: int | None = None,
    layout: int = 0,
) -> tuple[SSAValue, SSAValue]:
    """H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb), unrolled -> gemms and activations."""
    unsupported = {"clip": clip, "activation_alpha": activation_alpha, "activation_beta": activation_beta}
    options = _Options.checked(direction, hidden_size, layout, unsupported)
    rnn = _Recurrence(ctx, 1, [X, W, R, B, sequence_lens, initial_h], options)
    functions = _activations(activations, ["tanh"], rnn.directions)
    steps: list[dict[int, SSAValue]] = []
    finals: list[SSAValue] = []
    for d in range(rnn.directions):
        parameters = rnn.direction(d, functions[d])
        h, outputs = parameters.hidden, dict[int, SSAValue]()
        for t in rnn.order(parameters):
            inside = rnn.inside(t)
            new = ctx.emit(parameters.activations[0](_recurrent_gates(ctx, parameters, h, t)))
            h, outputs[t] = rnn.kept(inside, new, h), rnn.kept(inside, new, rnn.zeros())
        steps.append(outputs)
        finals.append(h)
    return rnn.outputs(steps, finals)


def LSTM(
    ctx: NodeContext,
    X: Value,
    W: Value,
    R: Value,
    B: Value | None = None,
    sequence_lens: Value | None = None,
    initial_h: Value | None = None,
    initial_c: Value | None = None,
    P: Value | None = None,
    *,
    activation_alpha: list[float] | None = None,
    activation_beta: list[float] | None = None,
    activations: list[str | bytes] | None = None,
    clip: float | None = None,
    direction: str | bytes = "forward",
    hidden_size: int | None = None,
    input_forget: int = 0,
    layout: int = 0,
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Gates i, o, f, c with peepholes, a cell state and a hidden state, unrolled -> gemms, activations and
    elementwise updates; outputs Y, Y_h, Y_c."""
    if input_forget:
        raise UnsupportedNodeError("input_forget = 1 is not supported")
    unsupported = {"clip": clip, "activation_alpha": activation_alpha, "activation_beta": activation_beta}
    options = _Options.checked(direction, hidden_size, layout, unsupported)
    lstm = _Recurrence(ctx, 4, [X, W, R, B, sequence_lens, initial_h], options)
    functions = _activations(activations, ["sigmoid", "tanh", "tanh"], lstm.directions)
    initial_cells = lstm.state(initial_c, "initial_c")
    peepholes = _f32(ctx, P, "P", (lstm.directions, 3 * lstm.hidden))
    steps: list[dict[int, SSAValue]] = []
    finals: list[SSAValue] = []
    cells: list[SSAValue] = []

    def plus_peephole(gate: SSAValue, weights: SSAValue | None, k: int, cell: SSAValue) -> SSAValue:
        if weights is None:
            return gate
        peephole = _slice(ctx, weights, 0, k * lstm.hidden, lstm.hidden)
        return ctx.emit(graph.AddOp(gate, ctx.emit(graph.MulOp(peephole, cell))))

    for d in range(lstm.directions):
        parameters = lstm.direction(d, functions[d])
        gate_function, cell_function, hidden_function = parameters.activations
        weights = _take(ctx, peepholes, 0, d) if peepholes is not None else None
        h, outputs = parameters.hidden, dict[int, SSAValue]()
        c = _take(ctx, initial_cells, 0, d) if initial_cells is not None else lstm.zeros()
        for t in lstm.order(parameters):
            inside = lstm.inside(t)
            gates = _recurrent_gates(ctx, parameters, h, t)
            i = ctx.emit(gate_function(plus_peephole(lstm.gate(gates, 0), weights, 0, c)))
            f = ctx.emit(gate_function(plus_peephole(lstm.gate(gates, 2), weights, 2, c)))
            candidate = ctx.emit(cell_function(lstm.gate(gates, 3)))
            new_c = ctx.emit(graph.AddOp(ctx.emit(graph.MulOp(f, c)), ctx.emit(graph.MulOp(i, candidate))))
            o = ctx.emit(gate_function(plus_peephole(lstm.gate(gates, 1), weights, 1, new_c)))
            new_h = ctx.emit(graph.MulOp(o, ctx.emit(hidden_function(new_c))))
            c, h = lstm.kept(inside, new_c, c), lstm.kept(inside, new_h, h)
            outputs[t] = lstm.kept(inside, new_h, lstm.zeros())
        steps.append(outputs)
        finals.append(h)
        cells.append(c)
    y, y_h = lstm.outputs(steps, finals)
    return y, y_h, lstm.stacked(cells)


def GRU(
    ctx: NodeContext,
    X: Value,
    W: Value,
    R: Value,
    B: Value | None = None,
    sequence_lens: Value | None = None,
    initial_h: Value | None = None,
    *,
    activation_alpha: list[float] | None = None,
    activation_beta: list[float] | None = None,
    activations: list[str | bytes] | None = None,
    clip: float | None = None,
    direction: str | bytes = "forward",
    hidden_size: int | None = None,
    layout: int = 0,
    linear_before_reset: int = 0,
) -> tuple[SSAValue, SSAValue]:
    """Gates z, r and the candidate h~ (the reset gate applied before or, with `linear_before_reset`, after its
    recurrence), H_t = h~ + z (H_{t-1} - h~), unrolled -> gemms, activations and elementwise updates."""
    unsupported = {"clip": clip, "activation_alpha": activation_alpha, "activation_beta": activation_beta}
    options = _Options.checked(direction, hidden_size, layout, unsupported)
    gru = _Recurrence(ctx, 3, [X, W, R, B, sequence_lens, initial_h], options)
    functions = _activations(activations, ["sigmoid", "tanh"], gru.directions)
    size = gru.hidden
    steps: list[dict[int, SSAValue]] = []
    finals: list[SSAValue] = []
    for d in range(gru.directions):
        parameters = gru.direction(d, functions[d], (0, 2 * size))
        gate_function, candidate_function = parameters.activations
        candidate_weights = _slice(ctx, _take(ctx, gru.r, 0, d), 0, 2 * size, size)
        candidate_bias = _slice(ctx, _take(ctx, gru.b, 0, d), 0, 5 * size, size) if gru.b is not None else None
        h, outputs = parameters.hidden, dict[int, SSAValue]()
        for t in gru.order(parameters):
            inside = gru.inside(t)
            gates = _recurrent_gates(ctx, parameters, h, t)
            z, r = ctx.emit(gate_function(gru.gate(gates, 0))), ctx.emit(gate_function(gru.gate(gates, 1)))
            projected = _slice(ctx, _take(ctx, parameters.projected, 0, t), 1, 2 * size, size)
            if linear_before_reset:
                recurrent = ctx.emit(graph.GemmOp(h, candidate_weights, candidate_bias, trans_b=True))
                recurrent = ctx.emit(graph.MulOp(r, recurrent))
            else:
                reset = ctx.emit(graph.MulOp(r, h))
                recurrent = ctx.emit(graph.GemmOp(reset, candidate_weights, candidate_bias, trans_b=True))
            candidate = ctx.emit(candidate_function(ctx.emit(graph.AddOp(projected, recurrent))))
            kept_part = ctx.emit(graph.MulOp(z, ctx.emit(graph.SubOp(h, candidate))))
            new_h = ctx.emit(graph.AddOp(candidate, kept_part))
            h, outputs[t] = gru.kept(inside, new_h, h), gru.kept(inside, new_h, gru.zeros())
        steps.append(outputs)
        finals.append(h)
    return gru.outputs(steps, finals)


CONVERTERS: dict[str, Converter] = {"RNN": RNN, "LSTM": LSTM, "GRU": GRU}
"""ONNX op type (default domain) -> converter."""
