"""ONNX converters for the optimizer ops of the `ai.onnx.preview.training` domain: Adagrad, Adam and Momentum
(standard and Nesterov). Each updates n tensors at once (inputs R, T, then n of each kind; outputs n of each kind) by
the elementwise formulas of the operator's specification, as graph elementwise ops: the learning rate R and the
iteration count T are run-time scalars, so the bias corrections that depend on T (`T > 0`) are `graph.where`s and
`alpha ** T` is a `graph.pow` of T cast to float32.

    %g = graph.add %scaled_x, %G   (norm_coefficient * X + G)
    %v = graph.add %decayed_v, %scaled_g   (alpha * V + beta * G)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i64
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

TRAINING_DOMAIN = "ai.onnx.preview.training"


class _Updates:
    """Emits the elementwise update formulas of one optimizer node."""

    def __init__(self, ctx: NodeContext, rate: Value, iteration: Value):
        self.ctx = ctx
        self.count = 0
        self.rate = ctx.data(rate)
        if graph.element_type(self.rate) != f32 or math.prod(shape_of(self.rate)) != 1:
            raise UnsupportedNodeError(f"R must be one float32 element, got {self.rate.type}")
        steps = ctx.data(iteration)
        if graph.element_type(steps) != i64 or math.prod(shape_of(steps)) != 1:
            raise NodeError(f"T must be one int64 element, got {steps.type}")
        self.rate = ctx.emit(graph.ReshapeOp(self.rate, ()))
        steps = ctx.emit(graph.ReshapeOp(steps, ()))
        self.steps = ctx.emit(graph.CastOp(steps, f32))
        self.started = ctx.emit(graph.GreaterOp(self.steps, self.constant(0.0)))

    def constant(self, value: float) -> SSAValue:
        self.count += 1
        array = np.array(value, np.float32)
        return self.ctx.data(ConstantValue(f"{self.ctx.node.output[0]}.c{self.count}", array))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(graph.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(graph.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(graph.MulOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ctx.emit(graph.DivOp(a, b))

    def scaled(self, factor: float, value: SSAValue) -> SSAValue:
        return self.mul(self.constant(factor), value)

    def once_started(self, value: SSAValue, at_start: SSAValue) -> SSAValue:
        """`value` where T > 0, else `at_start`."""
        return self.ctx.emit(graph.WhereOp(self.started, value, at_start))

    def regularized(self, x: SSAValue, g: SSAValue, norm_coefficient: float) -> SSAValue:
        return self.add(self.scaled(norm_coefficient, x), g)

    def power_of_steps(self, base: float) -> SSAValue:
        return self.ctx.emit(graph.PowOp(self.constant(base), self.steps))


def _groups(ctx: NodeContext, tensors: Sequence[Value], kinds: int, names: str) -> list[list[SSAValue]]:
    """The n tensors of each of `kinds` kinds (X, G, V, H ...), each kind's shapes matching X's."""
    if len(tensors) % kinds or not tensors:
        raise NodeError(f"expects R, T then {names} for each tensor, got {len(tensors) + 2} inputs")
    count = len(tensors) // kinds
    values = [ctx.data(tensor) for tensor in tensors]
    groups = [values[kind * count : (kind + 1) * count] for kind in range(kinds)]
    for index, x in enumerate(groups[0]):
        for group in groups:
            if graph.element_type(group[index]) != f32:
                raise UnsupportedNodeError(f"{names} of tensor {index} must be float32, got {group[index].type}")
            if shape_of(group[index]) != shape_of(x):
                raise NodeError(f"{names} of tensor {index} must have one shape, got {group[index].type} and {x.type}")
    return groups


def Adagrad(
    ctx: NodeContext,
    R: Value,
    T: Value,
    *tensors: Value,
    decay_factor: float = 0.0,
    epsilon: float = 1e-6,
    norm_coefficient: float = 0.0,
) -> tuple[SSAValue, ...]:
    """Adagrad of n tensors: X_new = X - R / (1 + T * decay_factor) * g / (sqrt(H_new) + epsilon), H_new = H + g^2."""
    updates = _Updates(ctx, R, T)
    xs, gs, hs = _groups(ctx, tensors, 3, "X, G, H")
    decayed = updates.add(updates.constant(1.0), updates.scaled(decay_factor, updates.steps))
    rate = updates.div(updates.rate, decayed)
    new_xs: list[SSAValue] = []
    new_hs: list[SSAValue] = []
    for x, g, h in zip(xs, gs, hs):
        regularized = updates.regularized(x, g, norm_coefficient)
        new_h = updates.add(h, updates.mul(regularized, regularized))
        root = updates.add(ctx.emit(graph.SqrtOp(new_h)), updates.constant(epsilon))
        new_xs.append(updates.sub(x, updates.div(updates.mul(rate, regularized), root)))
        new_hs.append(new_h)
    return (*new_xs, *new_hs)


def Adam(
    ctx: NodeContext,
    R: Value,
    T: Value,
    *tensors: Value,
    alpha: float = 0.9,
    beta: float = 0.999,
    epsilon: float = 1e-6,
    norm_coefficient: float = 0.0,
    norm_coefficient_post: float = 0.0,
) -> tuple[SSAValue, ...]:
    """Adam of n tensors: V_new = alpha V + (1 - alpha) g, H_new = beta H + (1 - beta) g^2, X_new = (X - R' V_new /
    (sqrt(H_new) + epsilon)) (1 - norm_coefficient_post), R' = R sqrt(1 - beta^T) / (1 - alpha^T) once T > 0."""
    updates = _Updates(ctx, R, T)
    xs, gs, vs, hs = _groups(ctx, tensors, 4, "X, G, V, H")
    one = updates.constant(1.0)
    correction = updates.div(
        ctx.emit(graph.SqrtOp(updates.sub(one, updates.power_of_steps(beta)))),
        updates.sub(one, updates.power_of_steps(alpha)),
    )
    rate = updates.once_started(updates.mul(updates.rate, correction), updates.rate)
    new_xs: list[SSAValue] = []
    new_vs: list[SSAValue] = []
    new_hs: list[SSAValue] = []
    for x, g, v, h in zip(xs, gs, vs, hs):
        regularized = updates.regularized(x, g, norm_coefficient)
        new_v = updates.add(updates.scaled(alpha, v), updates.scaled(1 - alpha, regularized))
        squared = updates.mul(regularized, regularized)
        new_h = updates.add(updates.scaled(beta, h), updates.scaled(1 - beta, squared))
        root = updates.add(ctx.emit(graph.SqrtOp(new_h)), updates.constant(epsilon))
        new_x = updates.sub(x, updates.mul(rate, updates.div(new_v, root)))
        new_xs.append(updates.scaled(1 - norm_coefficient_post, new_x))
        new_vs.append(new_v)
        new_hs.append(new_h)
    return (*new_xs, *new_vs, *new_hs)


def Momentum(
    ctx: NodeContext,
    R: Value,
    T: Value,
    *tensors: Value,
    alpha: float,
    beta: float,
    mode: str | bytes,
    norm_coefficient: float,
) -> tuple[SSAValue, ...]:
    """Momentum of n tensors: V_new = alpha V + beta' g (beta' = 1 at T = 0), X_new = X - R V_new (standard) or
    X - R (g + alpha V_new) (nesterov)."""
    kind = as_text(mode)
    if kind not in ("standard", "nesterov"):
        raise NodeError(f"mode must be 'standard' or 'nesterov', got '{kind}'")
    updates = _Updates(ctx, R, T)
    xs, gs, vs = _groups(ctx, tensors, 3, "X, G, V")
    gradient_scale = updates.once_started(updates.constant(beta), updates.constant(1.0))
    new_xs: list[SSAValue] = []
    new_vs: list[SSAValue] = []
    for x, g, v in zip(xs, gs, vs):
        regularized = updates.regularized(x, g, norm_coefficient)
        new_v = updates.add(updates.scaled(alpha, v), updates.mul(gradient_scale, regularized))
        step = new_v if kind == "standard" else updates.add(regularized, updates.scaled(alpha, new_v))
        new_xs.append(updates.sub(x, updates.mul(updates.rate, step)))
        new_vs.append(new_v)
    return (*new_xs, *new_vs)


CONVERTERS: dict[str, Converter] = {
    f"{TRAINING_DOMAIN}.Adagrad": Adagrad,
    f"{TRAINING_DOMAIN}.Adam": Adam,
    f"{TRAINING_DOMAIN}.Momentum": Momentum,
}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`), the training-domain optimizers."""
