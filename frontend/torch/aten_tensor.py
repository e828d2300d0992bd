"""ATen converters of data movement and reductions: views and reshapes (to the shape of the node's example value),
permutes, expand, cat, slices, select, split, flip, repeat, gathers by index tensors (index, index_select), nearest
upsampling by whole factors, and reductions (sum, mean, amax, amin, prod, any, var, vector norms).

    CONVERTERS[torch.ops.aten.permute.default](ctx, node)   # -> graph.transpose
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import fx
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_symbolic_dims import is_symbolic
from minimlc.frontend.torch.aten_common import AtenContext, Converter, SupportCheck, axis, bind, meta
from minimlc.frontend.torch.aten_symbolic import Dims, SymbolicShapeError, dims_of, spelled, symbols_note, type_shape

aten = torch.ops.aten


def reshape(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """Any view that keeps the elements in order (view, reshape, squeeze, unsqueeze, flatten) -> graph.reshape
    (with symbolic sizes, ONNX's target form: 0 copies the input's size, -1 takes the rest)."""
    return ctx.reshape(ctx.value(node.args[0]), ctx.dims(node))


def permute(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    rank = meta(node).dim()
    return _transposed(ctx, ctx.value(args["self"]), [axis(dim, rank) for dim in args["dims"]])


def _transposed(ctx: AtenContext, value: SSAValue, perm: list[int]) -> SSAValue:
    if perm == sorted(perm):
        return value
    return ctx.emit(graph.TransposeOp, value, perm)


def expand(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """-> graph.expand (to a symbolic size the input lacks: `SymbolicShapes.broadcast`)."""
    return ctx.shapes.broadcast(ctx.value(node.args[0]), ctx.dims(node))


def cat(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    dtype, rank = meta(node).dtype, meta(node).dim()
    values = [ctx.tensor(tensor, dtype) for tensor in args["tensors"] if not _empty_vector(tensor)]
    return ctx.emit(graph.ConcatOp, values, axis(args["dim"], rank))


def _empty_vector(tensor: fx.Node) -> bool:
    """A 1-D tensor of no elements (which torch lets `cat` skip)."""
    return tuple(meta(tensor).shape) == (0,)


def slice_tensor(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`x[..., start:end:step, ...]` along one dim -> graph.slice (with symbolic sizes: `symbolic_slice`)."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    source, dims = ctx.shapes.of(value), ctx.dims(node)
    if source == dims:
        return value
    dim = axis(args["dim"], len(source))
    if is_symbolic(source[dim]) or is_symbolic(dims[dim]):
        return symbolic_slice(ctx, value, dim, args["start"], args["step"], dims)
    start, _, step = slice(args["start"], args["end"], args["step"]).indices(source[dim])
    starts = [start if index == dim else 0 for index in range(len(source))]
    steps = [step if index == dim else 1 for index in range(len(source))]
    return ctx.emit(graph.SliceOp, value, starts, steps, type_shape(dims))


def symbolic_slice(ctx: AtenContext, value: SSAValue, dim: int, start: Any, step: int, dims: Dims) -> SSAValue:
    """A slice along a dim of symbolic size, or to one: from a start to the end of a symbolic size (graph.slice to a
    `?`); any other count from a non-negative start (a position table sliced to the sequence, all but the last of
    `sequence + 1`) as graph.take at the range of its positions, which the program's count keeps in bounds."""
    source = ctx.shapes.of(value)
    extent, count = source[dim], dims[dim]
    start = 0 if start is None else start
    if not isinstance(start, int) or start < 0 or step <= 0:
        raise SymbolicShapeError(
            f"slices {spelled(source)} along dim {dim} from {start} with step {step}: a symbolic slice needs a "
            f"non-negative constant start and a positive step{symbols_note(source)}"
        )
    if is_symbolic(extent) and step == 1 and count == extent - start:
        starts = [start if index == dim else 0 for index in range(len(source))]
        steps = [step if index == dim else 1 for index in range(len(source))]
        return ctx.emit(graph.SliceOp, value, starts, steps, type_shape(dims))
    positions = ctx.shapes.iota(count, start, step, np.dtype(np.int64))
    return ctx.emit(graph.TakeOp, value, positions, dim)


def select(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`x[..., index, ...]` along one dim -> graph.gather of one index, the dim dropped (a negative index of a
    symbolic dim: graph.take, which counts it from the run-time end)."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    source = ctx.shapes.of(value)
    dim = axis(args["dim"], len(source))
    if is_symbolic(source[dim]) and args["index"] < 0:  # from the end of a run-time extent: graph.take wraps it
        position = ctx.filled(args["index"], (), torch.int64)
        taken_dims = (*source[:dim], *shape_of(position), *source[dim + 1 :])
        return ctx.reshape(ctx.shapes.emit(taken_dims, graph.TakeOp, value, position, dim), ctx.dims(node))
    index = args["index"] % source[dim] if args["index"] < 0 else args["index"]
    return ctx.emit(graph.GatherOp, value, dim, [index], ())


def flip(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """Reversed along the dims -> graph.slice from each flipped dim's end with step -1."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    source = shape_of(value)
    dims = {axis(dim, len(source)) for dim in args["dims"]}
    if any(source[dim] == graph.DYNAMIC for dim in dims):
        raise SymbolicShapeError(f"flips a dim of symbolic size: {ctx.shapes.of(value)}")
    starts = [size - 1 if index in dims else 0 for index, size in enumerate(source)]
    steps = [-1 if index in dims else 1 for index in range(len(source))]
    return ctx.emit(graph.SliceOp, value, starts, steps, source)


def upsample_nearest(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """upsample_nearest2d by whole factors: each pixel repeated, as reshape, expand and reshape."""
    value = ctx.value(node.args[0])
    batch, channels, *sizes = ctx.shapes.of(value)
    out_sizes = ctx.dims(node)[2:]
    spread = [batch, channels]
    for size, out in zip(sizes, out_sizes):
        spread += [size, out // size]
    spaced = ctx.reshape(value, [extent if index % 2 == 0 or index < 2 else 1 for index, extent in enumerate(spread)])
    return ctx.reshape(ctx.shapes.broadcast(spaced, spread), ctx.dims(node))


def _upsample_check(node: fx.Node) -> str | None:
    sizes = tuple(meta(node.args[0]).shape[2:])  # type: ignore[union-attr]
    out_sizes = tuple(meta(node).shape[2:])
    if not all(isinstance(size, int) for size in sizes + out_sizes):
        return f"symbolic spatial sizes {sizes} -> {out_sizes}"
    if any(out % size for size, out in zip(sizes, out_sizes)):
        return f"output size {out_sizes} not a whole multiple of the input size {sizes}"
    return None


def split(ctx: AtenContext, node: fx.Node) -> tuple[SSAValue | None, ...]:
    """split and split_with_sizes: one graph.slice per piece, sized by the node's example values."""
    value = ctx.value(node.args[0])
    source = shape_of(value)
    dim = axis(bind(node)["dim"], len(source))
    pieces: list[SSAValue | None] = []
    offset = 0
    for piece in meta(node):
        dims = dims_of(piece, ctx.names)
        if is_symbolic(dims[dim]):
            raise SymbolicShapeError(f"splits a dim into pieces of symbolic size {dims[dim]}{symbols_note(dims)}")
        starts = [offset if index == dim else 0 for index in range(len(source))]
        pieces.append(ctx.emit(graph.SliceOp, value, starts, [1] * len(source), type_shape(dims)))
        offset += dims[dim]
    return tuple(pieces)


def index_select(ctx: AtenContext, node: fx.Node) -> SSAValue:
    args = ctx.args(node)
    value = ctx.value(args["self"])
    return ctx.emit(graph.TakeOp, value, ctx.value(args["index"]), axis(args["dim"], len(shape_of(value))))


def index_tensor(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`x[..., ids]` with one index tensor (the dims before it taken whole) -> graph.take; `x[i, j, ...]` with index
    tensors for the leading dims (broadcast together, as the masks of `transformers` index a batch of positions)
    -> graph.gather_nd of the stacked index tuples."""
    args = ctx.args(node)
    indices = args["indices"]
    used = [entry for entry in indices if entry is not None]
    if len(used) > 1:
        return _gather_leading(ctx, ctx.value(args["self"]), used, ctx.dims(node))
    position = next(index for index, entry in enumerate(indices) if entry is not None)
    return ctx.emit(graph.TakeOp, ctx.value(args["self"]), _index_value(ctx, indices[position]), position)


def _index_value(ctx: AtenContext, index: fx.Node) -> SSAValue:
    ids = ctx.value(index)
    return ids if meta(index).dtype in (torch.int32, torch.int64) else ctx.cast(ids, torch.int64)


def _gather_leading(ctx: AtenContext, value: SSAValue, indices: list[fx.Node], dims: Dims) -> SSAValue:
    """`value[i0, i1, ...]`: the index tensors broadcast together into one index of the leading dims flattened
    (`(i0 * size1 + i1) * size2 + ...`, negative indices counted from the end), graph.take of it."""
    source = ctx.shapes.of(value)
    common = dims[: len(dims) - (len(source) - len(indices))]
    linear: SSAValue | None = None
    for index, size in zip(indices, source):
        extent = _extent(ctx, size)
        position = ctx.shapes.broadcast(ctx.cast(_index_value(ctx, index), torch.int64), common)
        negative = ctx.cast(
            ctx.shapes.emit(common, graph.LessOp, position, ctx.filled(0, (), torch.int64)), torch.int64
        )
        position = ctx.shapes.emit(
            common, graph.AddOp, position, ctx.shapes.emit(common, graph.MulOp, negative, extent)
        )
        if linear is not None:
            scaled = ctx.shapes.emit(common, graph.MulOp, linear, extent)
            position = ctx.shapes.emit(common, graph.AddOp, scaled, position)
        linear = position
    flattened = ctx.reshape(value, (math.prod(source[: len(indices)]), *source[len(indices) :]))
    return ctx.shapes.emit(dims, graph.TakeOp, flattened, linear, 0)


def _extent(ctx: AtenContext, size: Any) -> SSAValue:
    """A size as an int64 tensor of one element (a symbolic one counted at run time: the sum of that many ones)."""
    if not is_symbolic(size):
        return ctx.filled(size, (1,), torch.int64)
    ones = ctx.shapes.broadcast(ctx.filled(1, (1,), torch.int64), (size,))
    return ctx.emit(graph.ReduceSumOp, ones, [0], True)


def _index_check(node: fx.Node) -> str | None:
    indices = bind(node)["indices"]
    used = [entry for entry in indices if entry is not None]
    if any(meta(entry).dtype == torch.bool for entry in used):
        return "a boolean mask index"
    if len(used) > 1 and indices[: len(used)] != used:
        return "several index tensors not all leading (x[:, i, j])"
    return None


def _reduction(op: type[graph.ReduceOp], dim_name: str | None = "dim") -> Converter:
    """A reduction over the listed dims (all of them where the list is absent or empty), in the result's dtype."""

    def convert(ctx: AtenContext, node: fx.Node) -> SSAValue:
        args = ctx.args(node)
        value = ctx.tensor(args["self"], meta(node).dtype)
        rank = len(shape_of(value))
        dims = args.get(dim_name) if dim_name else None
        dims = [dims] if isinstance(dims, int) else dims
        axes = sorted({axis(dim, rank) for dim in dims} if dims else range(rank))
        if rank == 0:
            return value
        keepdim = bool(args.get("keepdim", False))
        reduced = ctx.shapes.emit(_reduced(ctx.shapes.of(value), axes, keepdim), op, value, axes, keepdim)
        return ctx.reshape(reduced, ctx.dims(node))

    return convert


def vector_norm(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """linalg_vector_norm of order 1 (graph.reduce_l1), 2 (graph.reduce_l2) or infinity (max of |x|)."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    rank = len(shape_of(value))
    dims = args.get("dim")
    axes = sorted({axis(dim, rank) for dim in dims} if dims else range(rank))
    keepdim = bool(args["keepdim"])
    if args["ord"] == math.inf:
        return ctx.emit(graph.ReduceMaxOp, ctx.emit(graph.AbsOp, value), axes, keepdim)
    return ctx.emit(graph.ReduceL1Op if args["ord"] == 1 else graph.ReduceL2Op, value, axes, keepdim)


def _vector_norm_check(node: fx.Node) -> str | None:
    args = bind(node)
    if meta(node).dtype != torch.float32:
        return f"a {meta(node).dtype} result (float32 only)"
    return None if args["ord"] in (1, 2, math.inf) else f"ord={args['ord']} (1, 2 and inf only)"


def variance(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """var.correction: the sum of squared deviations from the mean over the dims, by their count less
    `correction` (1 unless given)."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    rank = len(shape_of(value))
    dims = args.get("dim")
    axes = sorted({axis(dim, rank) for dim in dims} if dims else range(rank))
    mean = ctx.emit(graph.ReduceMeanOp, value, axes, True)
    deviation = ctx.emit(graph.SubOp, value, mean)
    squares = ctx.emit(graph.ReduceSumOp, ctx.emit(graph.MulOp, deviation, deviation), axes, bool(args["keepdim"]))
    correction = 1 if args.get("correction") is None else args["correction"]
    count = math.prod(ctx.shapes.of(value)[index] for index in axes) - correction
    if is_symbolic(count):
        raise SymbolicShapeError(f"divides by the symbolic count {count}{symbols_note([count])}")
    divided = ctx.emit(graph.DivOp, squares, ctx.filled(float(count), (), torch.float32))
    ctx.shapes.dims[divided] = _reduced(ctx.shapes.of(value), axes, bool(args["keepdim"]))
    return ctx.reshape(divided, ctx.dims(node))


def repeat(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`x.repeat(*repeats)` (leading dims added where repeats has more) -> graph.tile."""
    args = ctx.args(node)
    repeats = list(args["repeats"])
    value = ctx.value(args["self"])
    source = ctx.shapes.of(value)
    value = ctx.reshape(value, (1,) * (len(repeats) - len(source)) + source)
    return ctx.emit(graph.TileOp, value, repeats)


def any_dim(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`any` as the max of the tensor as int32 bools, back to bool."""
    args = ctx.args(node)
    value = ctx.cast(ctx.tensor(args["self"], torch.bool), torch.int32)
    rank = len(shape_of(value))
    dims = args.get("dim")
    dims = [dims] if isinstance(dims, int) else dims
    axes = sorted({axis(dim, rank) for dim in dims} if dims else range(rank))
    keepdim = bool(args.get("keepdim", False))
    reduced = ctx.shapes.emit(_reduced(ctx.shapes.of(value), axes, keepdim), graph.ReduceMaxOp, value, axes, keepdim)
    return ctx.cast(ctx.reshape(reduced, ctx.dims(node)), torch.bool)


def slice_scatter(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """`self` with `src` written over `self[..., start:end, ...]` (step 1, along a dim of static size) -> the parts
    of `self` before and after the slice concatenated around `src` (as Swin's shifted-window mask is built)."""
    args = ctx.args(node)
    value = ctx.value(args["self"])
    source = ctx.shapes.of(value)
    dim = axis(args["dim"], len(source))
    start, end, _ = slice(args["start"], args["end"], 1).indices(source[dim])
    end = max(start, end)
    pieces = []
    if start > 0:
        pieces.append(_static_slice(ctx, value, dim, 0, start))
    if end > start:
        pieces.append(ctx.tensor(args["src"], meta(node).dtype))
    if end < source[dim]:
        pieces.append(_static_slice(ctx, value, dim, end, source[dim]))
    return pieces[0] if len(pieces) == 1 else ctx.emit(graph.ConcatOp, pieces, dim)


def _static_slice(ctx: AtenContext, value: SSAValue, dim: int, start: int, end: int) -> SSAValue:
    """`value[..., start:end, ...]` along `dim` (of static size; other dims may be symbolic)."""
    source = ctx.shapes.of(value)
    dims = tuple(end - start if index == dim else size for index, size in enumerate(source))
    starts = [start if index == dim else 0 for index in range(len(source))]
    sliced = ctx.emit(graph.SliceOp, value, starts, [1] * len(source), type_shape(dims))
    ctx.record(sliced, dims)
    return sliced


def _slice_scatter_check(node: fx.Node) -> str | None:
    args = bind(node)
    size = meta(node).shape[axis(args["dim"], meta(node).dim())]
    if not isinstance(size, int):
        return f"a slice along a dim of symbolic size {size}"
    return None if args.get("step", 1) == 1 else f"step {args['step']} (1 only)"


def copy(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """copy(self, src): `src` broadcast to the shape of `self` and cast to its dtype (the functional form of
    `self.copy_(src)`, an assignment to a slice)."""
    args = ctx.args(node)
    return ctx.shapes.broadcast(ctx.tensor(args["src"], meta(node).dtype), ctx.dims(node))


def as_strided_identity(ctx: AtenContext, node: fx.Node) -> SSAValue:
    """as_strided to the input's own sizes and strides (those of its dims of size 1 aside: a decomposition's restride
    of a channels-last mean): the input itself."""
    return ctx.value(node.args[0])


def _as_strided_check(node: fx.Node) -> str | None:
    source, result = meta(node.args[0]), meta(node)  # type: ignore[arg-type]
    offset = bind(node).get("storage_offset")
    same = [str(size) for size in source.shape] == [str(size) for size in result.shape]
    strides = zip(source.shape, source.stride(), result.stride())
    same = same and all(str(size) == "1" or str(have) == str(want) for size, have, want in strides)
    return None if same and not offset else "sizes, strides or an offset other than its input's (a real restride)"


def _reduced(source: Dims, axes: list[int], keepdim: bool) -> Dims:
    """The dims of a reduction of `source` over `axes`."""
    return tuple(1 if index in axes else size for index, size in enumerate(source) if keepdim or index not in axes)


CONVERTERS: dict[Any, Converter] = {
    aten.view.default: reshape,
    aten.squeeze.dims: reshape,
    aten.unsqueeze.default: reshape,
    aten.permute.default: permute,
    aten.expand.default: expand,
    aten.cat.default: cat,
    aten.slice.Tensor: slice_tensor,
    aten.select.int: select,
    aten.split_with_sizes.default: split,
    aten.index.Tensor: index_tensor,
    aten.sum.dim_IntList: _reduction(graph.ReduceSumOp),
    aten.mean.dim: _reduction(graph.ReduceMeanOp),
    aten.mean.default: _reduction(graph.ReduceMeanOp, None),
    aten.amax.default: _reduction(graph.ReduceMaxOp),
    aten.amin.default: _reduction(graph.ReduceMinOp),
    aten.prod.dim_int: _reduction(graph.ReduceProdOp),
    aten.var.correction: variance,
    aten.linalg_vector_norm.default: vector_norm,
    aten.flip.default: flip,
    aten.index_select.default: index_select,
    aten.upsample_nearest2d.vec: upsample_nearest,
    aten.repeat.default: repeat,
    aten.any.dim: any_dim,
    aten.any.dims: any_dim,
    aten.slice_scatter.default: slice_scatter,
    aten.copy.default: copy,
    aten.as_strided.default: as_strided_identity,
}

SUPPORT_CHECKS: dict[Any, SupportCheck] = {
    aten.index.Tensor: _index_check,
    aten.linalg_vector_norm.default: _vector_norm_check,
    aten.upsample_nearest2d.vec: _upsample_check,
    aten.slice_scatter.default: _slice_scatter_check,
    aten.as_strided.default: _as_strided_check,
    aten.var.correction: lambda node: None if meta(node).dtype == torch.float32 else "a non-float32 input",
}
