"""ATen creation ops (`arange`, `full`, `scalar_tensor`, `zeros`, `ones`): tensors the program makes from its own
constant arguments, such as position ids and the `arange`s a causal mask is built from. The importer computes them
from the op's arguments (numpy, by the op's definition) and adds them as weights (of static shapes, the importer folds
them, and what only constants feed, before the converters: `exported_program._folded_constants`). Of a symbolic size
(a Dim of the program), they are computed at run time instead: `arange` as a running sum of ones, the filled ones as a
scalar broadcast to the size.

    CONVERTERS[torch.ops.aten.arange.start_step](ctx, node)   # arange(0, 16) -> graph.weight "constant.arange"
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import fx
from xdsl.ir import SSAValue

from minimlc.frontend.onnx_symbolic_dims import is_symbolic
from minimlc.frontend.torch.aten_common import AtenContext, AtenImportError, Converter, meta, numpy_dtype, static_shape
from minimlc.frontend.torch.aten_symbolic import SymbolicShapeError

aten = torch.ops.aten


def _constant(ctx: AtenContext, node: fx.Node, array: np.ndarray) -> SSAValue:
    """`array` as the node's value: its example value's dtype, checked against its shape."""
    array = np.asarray(array).astype(numpy_dtype(meta(node).dtype))
    if array.shape != static_shape(node):
        raise AtenImportError(f"computed a tensor of shape {array.shape}, the program's is {static_shape(node)}")
    return ctx.builder.weight(f"constant.{node.name}", array)


def _scalar(value: Any, what: str) -> int | float | bool:
    if not isinstance(value, int | float | bool):
        raise AtenImportError(f"{what} is {value!r}: only numbers the program holds are supported")
    return value


def arange(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """A constant; to a symbolic end, the range computed at run time (integer start and step)."""
    args = ctx.args(node)
    start, step = _scalar(args.get("start", 0), "start"), _scalar(args.get("step", 1), "step")
    (count,) = ctx.dims(node)
    if is_symbolic(count):
        integers = isinstance(start, int) and isinstance(step, int)
        if not integers or meta(node).dtype not in (torch.int64, torch.int32):
            raise SymbolicShapeError(f"an arange of {count} elements needs an integer start, step and dtype")
        return ctx.shapes.iota(count, start, step, numpy_dtype(meta(node).dtype))
    end = _scalar(args["end"], "end")
    return _constant(ctx, node, np.arange(start, end, step, dtype=np.float64))


def full(ctx: AtenContext, node: fx.Node) -> SSAValue:
    fill = _scalar(ctx.args(node)["fill_value"], "fill_value")
    if any(is_symbolic(size) for size in ctx.dims(node)):
        return ctx.filled(fill, ctx.dims(node), meta(node).dtype)
    return _constant(ctx, node, np.full(static_shape(node), fill))


def scalar_tensor(ctx: AtenContext, node: fx.Node) -> SSAValue:
    return _constant(ctx, node, np.array(_scalar(ctx.args(node)["s"], "the value")))


def _filled(number: int) -> Converter:
    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        if any(is_symbolic(size) for size in ctx.dims(node)):
            return ctx.filled(number, ctx.dims(node), meta(node).dtype)
        return _constant(ctx, node, np.full(static_shape(node), number))

    return convert


CONVERTERS: dict[Any, Converter] = {
    aten.arange.default: arange,
    aten.arange.start: arange,
    aten.arange.start_step: arange,
    aten.full.default: full,
    aten.scalar_tensor.default: scalar_tensor,
    aten.zeros.default: _filled(0),
    aten.ones.default: _filled(1),
}
