"""Built-in converters of FX `call_function` targets (`FUNCTIONS`: torch, torch.nn.functional and operator functions)
and `call_method` targets (`METHODS`: Tensor methods by name) to graph ops.

Each converter takes the `FxContext` and the node's arguments with PyTorch's names and defaults, tensors already
graph values, and returns the node's value (a graph value, or a Python value such as a shape):

    FUNCTIONS[torch.matmul](ctx, a, b)          # graph.matmul
    METHODS["view"](ctx, x, 2, -1)              # graph.reshape
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from xdsl.ir import SSAValue

from minimlc.dialects.graph import shape_of
from minimlc.frontend.torch import fx_layers
from minimlc.frontend.torch.fx_context import (
    FxContext,
    TorchImportError,
    normalise_dim,
    normalise_dims,
    resolved_shape,
    sizes,
    tensor_value,
)
from minimlc.frontend.torch.fx_indexing import getitem

Converter = Callable[..., Any]


def _unary(op: str) -> Converter:
    def convert(ctx: FxContext, input: Any, inplace: bool = False) -> SSAValue:
        return ctx.emit(op, tensor_value(input))

    return convert


def _binary(op: str) -> Converter:
    def convert(ctx: FxContext, input: Any, other: Any, *, alpha: float = 1) -> Any:
        if alpha != 1:
            other = ctx.binary("mul", other, alpha)
        return ctx.binary(op, input, other)

    return convert


def _div(ctx: FxContext, input: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
    if rounding_mode is not None:
        raise TorchImportError(f"division with rounding_mode={rounding_mode!r} is not supported")
    return ctx.binary("div", input, other)


def _pow(ctx: FxContext, input: Any, exponent: Any) -> Any:
    return ctx.binary("pow", input, exponent)


def _floordiv(ctx: FxContext, input: Any, other: Any) -> Any:
    if isinstance(input, SSAValue) or isinstance(other, SSAValue):
        raise TorchImportError("floor division of tensors is not supported (only of Python numbers, e.g. sizes)")
    return input // other


def _neg(ctx: FxContext, input: Any) -> Any:
    return ctx.emit("neg", input) if isinstance(input, SSAValue) else -input


def _gelu(ctx: FxContext, input: Any, approximate: str = "none") -> SSAValue:
    return ctx.emit("gelu", tensor_value(input), approximate)


def _silu(ctx: FxContext, input: Any, inplace: bool = False) -> SSAValue:
    return ctx.emit("swish", tensor_value(input), 1.0)


def softmax(ctx: FxContext, input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> SSAValue:
    """Softmax along `dim`; without one, PyTorch's legacy choice (dim 0 of 0-, 1- and 3-d inputs, else dim 1)."""
    x = tensor_value(input)
    if dtype not in (None, torch.float32):
        raise TorchImportError(f"softmax with dtype={dtype} is not supported")
    rank = len(shape_of(x))
    if dim is None:
        dim = 0 if rank in (0, 1, 3) else 1
    return ctx.emit("softmax", x, normalise_dim(dim, rank))


def linear(ctx: FxContext, input: Any, weight: Any, bias: Any = None) -> SSAValue:
    """`input @ weight.T + bias` as one graph.gemm, leading dimensions folded into its rows."""
    x, w = tensor_value(input), ctx.tensor(weight)
    shape = shape_of(x)
    (out_features, in_features), b = shape_of(w), None if bias is None else ctx.tensor(bias)
    if not shape or shape[-1] != in_features:
        raise TorchImportError(f"linear of an input of shape {shape} by a weight of shape {shape_of(w)}")
    rows = ctx.reshape(x, (math.prod(shape[:-1]), in_features))
    y = ctx.emit("gemm", rows, w, b, trans_b=True)
    return ctx.reshape(y, (*shape[:-1], out_features))


def layer_norm(
    ctx: FxContext,
    input: Any,
    normalized_shape: Sequence[int],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
) -> SSAValue:
    """graph.layer_norm over the trailing `normalized_shape` axes; no weight means a scale of ones."""
    x = tensor_value(input)
    shape, normalised = shape_of(x), tuple(normalized_shape)
    if shape[len(shape) - len(normalised) :] != normalised:
        raise TorchImportError(f"layer_norm over {list(normalised)} of an input of shape {shape}")
    scale = ctx.tensor(weight) if weight is not None else ctx.tensor(np.ones(normalised, np.float32))
    shift = None if bias is None else ctx.tensor(bias)
    return ctx.emit("layer_norm", x, scale, shift, axis=len(shape) - len(normalised), epsilon=float(eps))


def dropout(ctx: FxContext, input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> SSAValue:
    """The identity, as in evaluation; dropping elements (training with p > 0) is refused."""
    if training and p > 0:
        raise TorchImportError(f"dropout in training mode (p={p}) is random; trace the model in eval mode")
    return tensor_value(input)


def flatten(ctx: FxContext, input: Any, start_dim: int = 0, end_dim: int = -1) -> SSAValue:
    x = tensor_value(input)
    shape = shape_of(x)
    if not shape:
        return ctx.reshape(x, (1,))
    start, end = normalise_dim(start_dim, len(shape)), normalise_dim(end_dim, len(shape))
    if start > end:
        raise TorchImportError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = math.prod(shape[start : end + 1])
    return ctx.reshape(x, (*shape[:start], merged, *shape[end + 1 :]))


def _cat(ctx: FxContext, tensors: Sequence[Any], dim: int = 0) -> SSAValue:
    values = [tensor_value(t) for t in tensors]
    return ctx.emit("concat", values, normalise_dim(dim, len(shape_of(values[0]))))


def transpose(ctx: FxContext, input: Any, dim0: int, dim1: int) -> SSAValue:
    x = tensor_value(input)
    rank = len(shape_of(x))
    perm = list(range(rank))
    a, b = normalise_dim(dim0, rank), normalise_dim(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return x if a == b else ctx.emit("transpose", x, perm)


def permute(ctx: FxContext, input: Any, dims: Sequence[int]) -> SSAValue:
    x = tensor_value(input)
    rank = len(shape_of(x))
    perm = [normalise_dim(dim, rank) for dim in dims]
    if sorted(perm) != list(range(rank)):
        raise TorchImportError(f"permute: {list(dims)} is not a permutation of the {rank} dimensions")
    return x if perm == sorted(perm) else ctx.emit("transpose", x, perm)


def reshape(ctx: FxContext, input: Any, shape: Sequence[int]) -> SSAValue:
    x = tensor_value(input)
    return ctx.reshape(x, resolved_shape(shape_of(x), shape))


def _reduction(op: str) -> Converter:
    def convert(ctx: FxContext, input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> SSAValue:
        x = tensor_value(input)
        if dtype not in (None, torch.float32):
            raise TorchImportError(f"{op} with dtype={dtype} is not supported")
        return ctx.emit(op, x, normalise_dims(dim, len(shape_of(x))), bool(keepdim))

    return convert


def _matmul(ctx: FxContext, input: Any, other: Any) -> SSAValue:
    a, b = ctx.tensor(input), ctx.tensor(other)
    if not shape_of(a) or not shape_of(b):
        raise TorchImportError("matmul of a 0-d tensor")
    return ctx.emit("matmul", a, b)


def _getattr(ctx: FxContext, obj: Any, name: str) -> Any:
    """`x.shape` and `x.ndim` of a tensor (static shapes)."""
    if isinstance(obj, SSAValue) and name in ("shape", "ndim"):
        shape = shape_of(obj)
        return shape if name == "shape" else len(shape)
    raise TorchImportError(f"attribute {name!r} of {obj!r} is not supported (only a tensor's shape and ndim)")


def _contiguous(ctx: FxContext, input: Any, memory_format: Any = None) -> SSAValue:
    return tensor_value(input)


def _size(ctx: FxContext, input: Any, dim: int | None = None) -> Any:
    shape = shape_of(tensor_value(input))
    return shape if dim is None else shape[normalise_dim(dim, len(shape))]


FUNCTIONS: dict[Any, Converter] = {
    torch.relu: _unary("relu"),
    F.relu: _unary("relu"),
    torch.sigmoid: _unary("sigmoid"),
    torch.tanh: _unary("tanh"),
    torch.exp: _unary("exp"),
    F.gelu: _gelu,
    F.silu: _silu,
    torch.softmax: softmax,
    F.softmax: softmax,
    F.linear: linear,
    F.layer_norm: layer_norm,
    F.dropout: dropout,
    torch.add: _binary("add"),
    torch.sub: _binary("sub"),
    torch.mul: _binary("mul"),
    torch.div: _div,
    torch.pow: _pow,
    operator.add: _binary("add"),
    operator.sub: _binary("sub"),
    operator.mul: _binary("mul"),
    operator.truediv: _div,
    operator.pow: _pow,
    operator.floordiv: _floordiv,
    operator.neg: _neg,
    operator.matmul: _matmul,
    operator.getitem: getitem,
    builtins.getattr: _getattr,
    torch.matmul: _matmul,
    torch.flatten: flatten,
    torch.cat: _cat,
    torch.transpose: transpose,
    torch.permute: permute,
    torch.reshape: reshape,
    torch.mean: _reduction("reduce_mean"),
    torch.sum: _reduction("reduce_sum"),
    **fx_layers.FUNCTIONS,
}
"""call_function target -> converter."""


def _shaped(convert: Converter) -> Converter:
    """A method taking its sizes or dimensions either as several ints or as one sequence (`view`, `permute`)."""

    def method(ctx: FxContext, input: Any, *args: Any) -> SSAValue:
        return convert(ctx, input, sizes(args))

    return method


METHODS: dict[str, Converter] = {
    "view": _shaped(reshape),
    "reshape": _shaped(reshape),
    "permute": _shaped(permute),
    "flatten": flatten,
    "transpose": transpose,
    "contiguous": _contiguous,
    "size": _size,
    "relu": _unary("relu"),
    "sigmoid": _unary("sigmoid"),
    "tanh": _unary("tanh"),
    "exp": _unary("exp"),
    "softmax": softmax,
    "mean": _reduction("reduce_mean"),
    "sum": _reduction("reduce_sum"),
    "matmul": _matmul,
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _binary("mul"),
    "div": _div,
    "pow": _pow,
}
"""call_method target (a Tensor method's name) -> converter; the tensor is the first argument."""
