"""graph-to-te patterns for ops that reduce groups of elements and then rescale those elements: softmax and
log-softmax, layer, RMS and group normalisation.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `patterns(groups)` with its own); helpers in
`builder.py`. Each op becomes the stages of one kernel (`te.KERNEL_GROUP`, numbered by the pass's
`KernelGroups`): reductions over each group into a tensor of statistics (the reduced axes kept as 1, or one entry
per (sample, group)), maybe an elementwise step on the statistics, then the elementwise result reading them
broadcast. The schedule (`schedule/rows.py`) computes the stages row by row, so each row stays in cache:

    %mean = te.compute "layer_norm_mean" (%i0, %i1) reduce sum (%k : 16) -> tensor<8x1xf32> {...}
    %var = te.compute "layer_norm_var" (%i0, %i1) reduce sum (%k : 16) -> tensor<8x1xf32> {...}
    %inv = te.compute "layer_norm_inv_std" (%i0, %i1) -> tensor<8x1xf32> {...}
    %y = te.compute "layer_norm" (%i0, %i1) -> tensor<8x16xf32> {...}   // all four: attributes {kernel_group = 0}

Statistics are computed as ONNX defines them (the mean, then the mean of squared deviations from it); sums are
divided by the count where they are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    KernelGroups,
    broadcast_indices,
    build_compute,
    f32_constant,
    index_constant,
    read,
    scaled,
)
from minimlc.lowering.graph_to_te.extents import Extent, Extents, RunTimeDimensionError, float_count

Reader = Callable[[], SSAValue]
Normalise = Callable[[Reader, Reader, Reader, Reader], SSAValue]
"""The last step of a softmax-like op at one index, from readers (call only those needed, in the order the reads
should appear) of x, of exp(x - max), of the row's max and of the row's sum of exp(x - max)."""


def softmax_computes(
    op: graph.SoftmaxOp | graph.LogSoftmaxOp, tag: str, final_tag: str, normalise: Normalise
) -> list[te.ComputeOp]:
    """The computes of softmax-like ops along `op.axis`: `<tag>_max`, `<tag>_exp` (exp(x - max)), `<tag>_sum` (the
    reductions keep the axis), then `<final_tag>` = normalise(...) elementwise."""
    shape = Extents(op).of(op.input)
    axis = op.axis.value.data
    kept = (*shape[:axis], 1, *shape[axis + 1 :])

    def reduce(suffix: str, tensor: SSAValue, combiner: str) -> te.ComputeOp:
        def body(indices: Indices) -> SSAValue:
            return read(tensor, [*indices[:axis], indices[-1], *indices[axis + 1 : -1]])

        return build_compute(f"{tag}_{suffix}", kept, body, (shape[axis],), combiner)

    def per_row(tensor: te.ComputeOp, indices: Indices) -> SSAValue:
        return read(tensor.result, broadcast_indices(kept, shape, indices))

    def exp_body(indices: Indices) -> SSAValue:
        return math.ExpOp(arith.SubfOp(read(op.input, indices), per_row(peak, indices)).result).result

    def final_body(indices: Indices) -> SSAValue:
        return normalise(
            lambda: read(op.input, indices),
            lambda: read(exp.result, indices),
            lambda: per_row(peak, indices),
            lambda: per_row(total, indices),
        )

    peak = reduce("max", op.input, "max_nnan")
    exp = build_compute(f"{tag}_exp", shape, exp_body)
    total = reduce("sum", exp.result, "sum")
    return [peak, exp, total, build_compute(final_tag, shape, final_body)]


class SoftmaxLowering(RewritePattern):
    """Lower softmax to the stages max, exp(x - max), sum and `exp(x - max) / sum`."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.SoftmaxOp, rewriter: PatternRewriter) -> None:
        def normalise(x: Reader, exp: Reader, peak: Reader, total: Reader) -> SSAValue:
            return arith.DivfOp(exp(), total()).result

        rewriter.replace(op, self.groups.join(softmax_computes(op, "softmax", "softmax_div", normalise)))


class LogSoftmaxLowering(RewritePattern):
    """Lower log_softmax to the stages max, exp(x - max), sum and `x - max - log(sum)`."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.LogSoftmaxOp, rewriter: PatternRewriter) -> None:
        def normalise(x: Reader, exp: Reader, peak: Reader, total: Reader) -> SSAValue:
            return arith.SubfOp(arith.SubfOp(x(), peak()).result, math.LogOp(total()).result).result

        rewriter.replace(op, self.groups.join(softmax_computes(op, "log_softmax", "log_softmax", normalise)))


class _Statistics:
    """Reductions of `x` over groups of elements: the statistics tensor's shape, the extents each statistic reduces
    over, where a statistic's group reads `x`, and where an element of `x` reads its group's statistic."""

    def __init__(
        self,
        x: SSAValue,
        shape: Sequence[Extent],
        extents: Sequence[Extent],
        element: Callable[[Indices], list[SSAValue]],
        statistic: Callable[[Indices], list[SSAValue]],
        count: Extent,
    ):
        self.x, self.shape, self.extents = x, shape, extents
        self.element, self.statistic = element, statistic
        self.count = count

    def reduce(self, tag: str, summand: Callable[[SSAValue, Indices], SSAValue]) -> te.ComputeOp:
        """A sum over each group of `summand(x element, statistic indices)`."""

        def body(indices: Indices) -> SSAValue:
            statistic = indices[: len(self.shape)]
            return summand(read(self.x, self.element(indices)), statistic)

        return build_compute(tag, self.shape, body, self.extents, "sum")

    def mean(self, total: te.ComputeOp, statistic: Indices) -> SSAValue:
        """The mean of a sum over the group, at statistic indices."""
        value = read(total.result, statistic)
        if isinstance(self.count, SSAValue):
            return arith.DivfOp(value, float_count(self.count, value.type)).result
        return scaled(value, 1.0 / self.count)

    def inverse_root(self, tag: str, total: te.ComputeOp, epsilon: float) -> te.ComputeOp:
        """`1 / sqrt(total / count + epsilon)` per group."""

        def body(indices: Indices) -> SSAValue:
            shifted = arith.AddfOp(self.mean(total, indices), f32_constant(epsilon)).result
            return arith.DivfOp(f32_constant(1.0), math.SqrtOp(shifted).result).result

        return build_compute(tag, self.shape, body)

    def centred(self, tag: str, epsilon: float) -> tuple[te.ComputeOp, te.ComputeOp, list[te.ComputeOp]]:
        """The mean and the inverse standard deviation of each group: (mean sum, inverse std, every stage)."""
        total = self.reduce(f"{tag}_mean", lambda value, _: value)

        def square(value: SSAValue, statistic: Indices) -> SSAValue:
            deviation = arith.SubfOp(value, self.mean(total, statistic)).result
            return arith.MulfOp(deviation, deviation).result

        squares = self.reduce(f"{tag}_var", square)
        inverse = self.inverse_root(f"{tag}_inv_std", squares, epsilon)
        return total, inverse, [total, squares, inverse]


def _axis_statistics(op: graph.LayerNormOp | graph.RMSNormOp) -> _Statistics:
    """Statistics over the axes from `op.axis` on, kept as axes of extent 1."""
    extents = Extents(op)
    shape, axis = extents.of(op.input), op.axis.value.data
    kept = (*shape[:axis], *(1 for _ in shape[axis:]))
    return _Statistics(
        op.input,
        kept,
        shape[axis:],
        lambda indices: [*indices[:axis], *indices[len(shape) :]],
        lambda indices: broadcast_indices(kept, shape, indices),
        extents.product(shape[axis:]),
    )


class LayerNormLowering(RewritePattern):
    """Lower layer_norm to the stages mean, variance, inverse standard deviation and the scaled, shifted result."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.LayerNormOp, rewriter: PatternRewriter) -> None:
        statistics = _axis_statistics(op)
        shape = Extents(op).of(op.input)
        total, inverse, stages = statistics.centred("layer_norm", op.epsilon.value.data)
        bias = op.bias

        def body(indices: Indices) -> SSAValue:
            statistic = statistics.statistic(indices)
            deviation = arith.SubfOp(read(op.input, indices), statistics.mean(total, statistic)).result
            normalised = arith.MulfOp(deviation, read(inverse.result, statistic)).result
            value = arith.MulfOp(normalised, _parameter(op.scale, shape, indices)).result
            return value if bias is None else arith.AddfOp(value, _parameter(bias, shape, indices)).result

        rewriter.replace(op, self.groups.join([*stages, build_compute("layer_norm", shape, body)]))


class RMSNormLowering(RewritePattern):
    """Lower rms_norm to the stages sum of squares, inverse root mean square and the scaled result."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.RMSNormOp, rewriter: PatternRewriter) -> None:
        statistics = _axis_statistics(op)
        shape = Extents(op).of(op.input)
        squares = statistics.reduce("rms_norm_square_sum", lambda value, _: arith.MulfOp(value, value).result)
        inverse = statistics.inverse_root("rms_norm_inv_rms", squares, op.epsilon.value.data)

        def body(indices: Indices) -> SSAValue:
            normalised = arith.MulfOp(read(op.input, indices), read(inverse.result, statistics.statistic(indices)))
            return arith.MulfOp(normalised.result, _parameter(op.scale, shape, indices)).result

        rewriter.replace(op, self.groups.join([squares, inverse, build_compute("rms_norm", shape, body)]))


class GroupNormLowering(RewritePattern):
    """Lower group_norm to the stages mean, variance and inverse standard deviation per (sample, group), then the
    result scaled and shifted per channel."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GroupNormOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        shape = extents.of(op.input)
        if isinstance(shape[1], SSAValue):
            raise RunTimeDimensionError("has a run-time channel dimension")
        per_group = shape[1] // op.num_groups.value.data

        def channel(group: SSAValue, offset: SSAValue) -> SSAValue:
            if per_group == 1:
                return group
            return arith.AddiOp(arith.MuliOp(group, index_constant(per_group)).result, offset).result

        def group_of(channel_index: SSAValue) -> SSAValue:
            return channel_index if per_group == 1 else arith.DivUIOp(channel_index, index_constant(per_group)).result

        statistics = _Statistics(
            op.input,
            (shape[0], op.num_groups.value.data),
            (per_group, *shape[2:]),
            lambda indices: [indices[0], channel(indices[1], indices[2]), *indices[3:]],
            lambda indices: [indices[0], group_of(indices[1])],
            extents.product([per_group, *shape[2:]]),
        )
        total, inverse, stages = statistics.centred("group_norm", op.epsilon.value.data)

        def body(indices: Indices) -> SSAValue:
            statistic = statistics.statistic(indices)
            deviation = arith.SubfOp(read(op.input, indices), statistics.mean(total, statistic)).result
            normalised = arith.MulfOp(deviation, read(inverse.result, statistic)).result
            value = arith.MulfOp(normalised, read(op.scale, [indices[1]])).result
            return arith.AddfOp(value, read(op.bias, [indices[1]])).result

        rewriter.replace(op, self.groups.join([*stages, build_compute("group_norm", shape, body)]))


def _parameter(value: SSAValue, shape: Sequence[Extent], indices: Indices) -> SSAValue:
    """A scale or bias broadcast (right-aligned) to the result, at its `indices`."""
    return read(value, broadcast_indices(graph.shape_of(value), shape, indices))


def patterns(groups: KernelGroups) -> list[RewritePattern]:
    """This module's patterns, numbering their kernels with `groups`."""
    return [
        SoftmaxLowering(groups),
        LogSoftmaxLowering(groups),
        LayerNormLowering(groups),
        RMSNormLowering(groups),
        GroupNormLowering(groups),
    ]
