"""Lower the `graph` dialect to `te`: every graph compute op becomes one or more `te.compute`s.

Takes `?` (run-time) dimensions in the ops of `DYNAMIC_LOWERINGS` (`extents.py`; any other op with one is refused,
naming it) and the element types the graph verifiers allow: elementwise arithmetic, comparisons and
casts compute on each element type with `scalar.py`, data movement reads and writes any type, the rest is f32.
`graph.weight` stays: computes read weights like any other tensor. Broadcasting follows numpy: an operand is
right-aligned with the result, and a dim of size 1 against a larger result dim is read at index 0. Each compute's
tag names the op kind (`add`, `gemm`, `gemm_bias`, `softmax_max`, ...). A graph op left without a
lowering makes the pass fail, naming the op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, math
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te import activation as graph_to_te_activation
from minimlc.lowering.graph_to_te import attention as graph_to_te_attention
from minimlc.lowering.graph_to_te import bfloat16, scalar
from minimlc.lowering.graph_to_te import compaction as graph_to_te_compaction
from minimlc.lowering.graph_to_te import extern as graph_to_te_extern
from minimlc.lowering.graph_to_te import generation as graph_to_te_generation
from minimlc.lowering.graph_to_te import indexing as graph_to_te_indexing
from minimlc.lowering.graph_to_te import linalg as graph_to_te_linalg
from minimlc.lowering.graph_to_te import nn as graph_to_te_nn
from minimlc.lowering.graph_to_te import normalization as graph_to_te_normalization
from minimlc.lowering.graph_to_te import quantized as graph_to_te_quantized
from minimlc.lowering.graph_to_te import selection as graph_to_te_selection
from minimlc.lowering.graph_to_te import spatial as graph_to_te_spatial
from minimlc.lowering.graph_to_te import tensor as graph_to_te_tensor
from minimlc.lowering.graph_to_te import weight_only as graph_to_te_weight_only
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    KernelGroups,
    Shape,
    broadcast_indices,
    build_compute,
    f32_constant,
    read,
    reshape_indices,
    scaled,
)
from minimlc.lowering.graph_to_te.extents import Extent, Extents, RunTimeDimensionError, has_run_time_dims
from minimlc.lowering.graph_to_te.repeated import RepeatedOps


def _sign(x: SSAValue) -> SSAValue:
    """-1, 0 or 1 by the sign of x; NaN stays NaN and a zero keeps its sign bit, as in numpy."""
    negative = arith.SelectOp(arith.CmpfOp(x, f32_constant(0.0), "olt"), f32_constant(-1.0), x).result
    return arith.SelectOp(arith.CmpfOp(x, f32_constant(0.0), "ogt"), f32_constant(1.0), negative).result


_UNARY: dict[type[graph.ElementwiseUnaryOp], Callable[[SSAValue], SSAValue]] = {
    graph.TanhOp: lambda x: math.TanhOp(x).result,
    graph.ExpOp: lambda x: math.ExpOp(x).result,
    graph.NegOp: scalar.negate,
    graph.AbsOp: scalar.absolute,
    graph.SqrtOp: lambda x: math.SqrtOp(x).result,
    graph.ReciprocalOp: lambda x: arith.DivfOp(f32_constant(1.0), x).result,
    graph.LogOp: lambda x: math.LogOp(x).result,
    graph.FloorOp: lambda x: math.FloorOp(x).result,
    graph.CeilOp: lambda x: math.CeilOp(x).result,
    graph.RoundOp: lambda x: math.RoundEvenOp(x).result,
    graph.SignOp: _sign,
    graph.ErfOp: lambda x: math.ErfOp(x).result,
    graph.SinOp: lambda x: math.SinOp(x).result,
    graph.CosOp: lambda x: math.CosOp(x).result,
    graph.TanOp: lambda x: math.TanOp(x).result,
    graph.AsinOp: lambda x: math.AsinOp(x).result,
    graph.AcosOp: lambda x: math.AcosOp(x).result,
    graph.AtanOp: lambda x: math.AtanOp(x).result,
    graph.SinhOp: lambda x: math.SinhOp(x).result,
    graph.CoshOp: lambda x: math.CoshOp(x).result,
    graph.AsinhOp: lambda x: math.AsinhOp(x).result,
    graph.AcoshOp: lambda x: math.AcoshOp(x).result,
    graph.AtanhOp: lambda x: math.AtanhOp(x).result,
    graph.NotOp: scalar.logical_not,
}
"""Unary math op -> its scalar function (the compute is tagged by the op's name)."""


class ElementwiseBinaryLowering(RewritePattern):
    """Lower a binary op (add, less, and, ...) to one compute over the result shape, operands read broadcast."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ElementwiseBinaryOp, rewriter: PatternRewriter) -> None:
        kind = op.name.removeprefix("graph.")
        extents = Extents(op)
        shape = extents.broadcast(graph.shape_of(op.result), [op.lhs, op.rhs])
        lhs_shape, rhs_shape = extents.operand(op.lhs, shape), extents.operand(op.rhs, shape)

        def body(indices: Indices) -> SSAValue:
            lhs = read(op.lhs, broadcast_indices(lhs_shape, shape, indices))
            rhs = read(op.rhs, broadcast_indices(rhs_shape, shape, indices))
            if isinstance(op, graph.ModOp):
                return scalar.remainder(lhs, rhs, fmod=op.fmod is not None)
            result = scalar.binary(kind, lhs, rhs)
            if graph.EXACT_ATTR in op.attributes and isinstance(result.owner, Operation):
                result.owner.attributes[graph.EXACT_ATTR] = builtin.UnitAttr()
            return result

        rewriter.replace(op, build_compute(kind, shape, body))


class CastLowering(RewritePattern):
    """Lower cast to one elementwise compute "cast" converting each element (ONNX rules, `scalar.py`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CastOp, rewriter: PatternRewriter) -> None:
        target = graph.element_type(op.result)
        saturate = op.no_saturate is None
        round_mode = "up" if op.round_mode is None else op.round_mode.data

        def body(indices: Indices) -> SSAValue:
            return scalar.cast(read(op.input, indices), target, saturate=saturate, round_mode=round_mode)

        compute = build_compute("cast", Extents(op).of(op.input), body)
        rewriter.replace(op, compute)


class BitCastLowering(RewritePattern):
    """Lower bitcast to one elementwise compute "bitcast" reinterpreting each element's bits (`scalar.py`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BitCastOp, rewriter: PatternRewriter) -> None:
        target = graph.element_type(op.result)

        def body(indices: Indices) -> SSAValue:
            return scalar.bitcast(read(op.input, indices), target)

        rewriter.replace(op, build_compute("bitcast", Extents(op).of(op.input), body))


class IsNaNLowering(RewritePattern):
    """Lower is_nan to one elementwise compute "is_nan": an unordered self-comparison."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.IsNaNOp, rewriter: PatternRewriter) -> None:
        def body(indices: Indices) -> SSAValue:
            return scalar.is_nan(read(op.input, indices))

        rewriter.replace(op, build_compute("is_nan", Extents(op).of(op.input), body))


class IsInfLowering(RewritePattern):
    """Lower is_inf to one elementwise compute "is_inf": equality with the infinities it detects."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.IsInfOp, rewriter: PatternRewriter) -> None:
        positive, negative = op.positive is not None, op.negative is not None

        def body(indices: Indices) -> SSAValue:
            return scalar.is_inf(read(op.input, indices), positive=positive, negative=negative)

        rewriter.replace(op, build_compute("is_inf", Extents(op).of(op.input), body))


class ElementwiseUnaryLowering(RewritePattern):
    """Lower a unary math op (exp, sqrt, sin, ...) to one compute applying its scalar function to each element."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ElementwiseUnaryOp, rewriter: PatternRewriter) -> None:
        if (function := _UNARY.get(type(op))) is None:
            return  # an activation: graph_to_te_activation lowers it

        def body(indices: Indices) -> SSAValue:
            return function(read(op.input, indices))

        rewriter.replace(op, build_compute(op.name.removeprefix("graph."), Extents(op).of(op.input), body))


class GemmLowering(RewritePattern):
    """Lower gemm to a sum reduction "gemm" and, given `c`, an elementwise "gemm_bias"."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GemmOp, rewriter: PatternRewriter) -> None:
        if (bf16_form := bfloat16.gemm_form(op)) is not None:
            rewriter.replace(op, bf16_form)
            return
        extents = Extents(op)
        shape = [extents.at(op.a, 1 if op.trans_a else 0), extents.at(op.b, 0 if op.trans_b else 1)]
        depth = extents.at(op.a, 0 if op.trans_a else 1)

        def product(indices: Indices) -> SSAValue:
            i, j, k = indices
            a = read(op.a, [k, i] if op.trans_a else [i, k])
            b = read(op.b, [j, k] if op.trans_b else [k, j])
            return scaled(arith.MulfOp(a, b).result, op.alpha.value.data)

        gemm = build_compute("gemm", shape, product, (depth,), "sum")
        if (bias := op.c) is None:
            rewriter.replace(op, gemm)
            return

        def biased(indices: Indices) -> SSAValue:
            c = read(bias, broadcast_indices(graph.shape_of(bias), shape, indices))
            return arith.AddfOp(read(gemm.result, indices), scaled(c, op.beta.value.data)).result

        rewriter.replace(op, [gemm, build_compute("gemm_bias", shape, biased)])


class MatMulLowering(RewritePattern):
    """Lower matmul (numpy: 1-D operands, broadcast batch dims) to one sum reduction "matmul"."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulOp, rewriter: PatternRewriter) -> None:
        if (bf16_form := bfloat16.matmul_form(op)) is not None:
            rewriter.replace(op, bf16_form)
            return
        lhs, rhs, result = graph.shape_of(op.lhs), graph.shape_of(op.rhs), graph.shape_of(op.result)
        extents = Extents(op)
        batch = extents.broadcast(result[: len(result) - (len(lhs) > 1) - (len(rhs) > 1)], [op.lhs, op.rhs], 2)
        rows = [extents.at(op.lhs, len(lhs) - 2)] if len(lhs) > 1 else []
        columns = [extents.at(op.rhs, len(rhs) - 1)] if len(rhs) > 1 else []
        shape = [*batch, *rows, *columns]

        def product(indices: Indices) -> SSAValue:
            outer, k = indices[:-1], indices[-1]

            def batched(operand: Shape, *rows_cols: SSAValue) -> list[SSAValue]:
                return [*broadcast_indices(operand[:-2], batch, outer[: len(batch)]), *rows_cols]

            a = read(op.lhs, [k] if len(lhs) == 1 else batched(lhs, outer[len(batch)], k))
            b = read(op.rhs, [k] if len(rhs) == 1 else batched(rhs, k, outer[-1]))
            return arith.MulfOp(a, b).result

        depth = extents.at(op.lhs, len(lhs) - 1)
        rewriter.replace(op, build_compute("matmul", shape, product, (depth,), "sum"))


def reshape_target(op: graph.ReshapeOp, extents: Extents) -> list[Extent]:
    """The extents of a reshape's result. A `?` comes from the op's ONNX target (`shape`: 0 copies the input's
    dimension, -1 takes the rest) or, for a single `?`, is the element count over the other dimensions."""
    target = graph.shape_of(op.result)
    if DYNAMIC_INDEX not in target:
        return list(target)
    requested = op.properties.get("shape", op.attributes.get("shape"))
    if isinstance(requested, builtin.DenseArrayBase):
        spec = list(requested.get_values())
    elif target.count(DYNAMIC_INDEX) == 1:
        spec = [-1 if size == DYNAMIC_INDEX else size for size in target]
    else:
        raise RunTimeDimensionError(
            "reshapes to several run-time dimensions without its ONNX target (0 copies, -1 the rest)"
        )
    shape: list[Extent] = [extents.at(op.input, axis) if size == 0 else size for axis, size in enumerate(spec)]
    if -1 in spec:
        rest = spec.index(-1)
        shape[rest] = extents.reshape_rest(extents.of(op.input), [e for axis, e in enumerate(shape) if axis != rest])
    return [size if size != DYNAMIC_INDEX else extent for size, extent in zip(target, shape)]


class ReshapeLowering(RewritePattern):
    """Lower reshape to a compute reading the input at the same row-major position."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        source, shape = extents.of(op.input), reshape_target(op, extents)

        def body(indices: Indices) -> SSAValue:
            return read(op.input, reshape_indices(indices, shape, source))

        rewriter.replace(op, build_compute("reshape", shape, body))


class TransposeLowering(RewritePattern):
    """Lower transpose to a compute reading input dim perm[d] at output index d."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.perm.get_values()
        extents = Extents(op)

        def body(indices: Indices) -> SSAValue:
            return read(op.input, [indices[perm.index(axis)] for axis in range(len(perm))])

        rewriter.replace(op, build_compute("transpose", [extents.at(op.input, axis) for axis in perm], body))


class ConstantLowering(RewritePattern):
    """Lower constant to an elementwise "constant" compute yielding the value (te-inline folds it into its readers)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConstantOp, rewriter: PatternRewriter) -> None:
        value = op.value.value.data
        rewriter.replace(op, build_compute("constant", graph.shape_of(op.result), lambda _: f32_constant(value)))


DYNAMIC_LOWERINGS: tuple[type[Operation], ...] = (
    graph.ElementwiseBinaryOp,
    graph.ElementwiseUnaryOp,
    graph.CastOp,
    graph.BitCastOp,
    graph.IsNaNOp,
    graph.IsInfOp,
    graph.ClipOp,
    graph.PReluOp,
    graph.GemmOp,
    graph.MatMulOp,
    graph.ReshapeOp,
    graph.TransposeOp,
    graph.SoftmaxOp,
    graph.LogSoftmaxOp,
    graph.LayerNormOp,
    graph.RMSNormOp,
    graph.GroupNormOp,
    graph.AttentionOp,
    graph.ConcatOp,
    graph.SliceOp,
    graph.GatherOp,
    graph.ExpandOp,
    graph.TileOp,
    graph.TriluOp,
    graph.WhereOp,
    graph.ReduceOp,
    graph.TakeOp,
    graph.TakeAlongAxisOp,
    graph.ArgReduceOp,
    graph.CumulativeOp,
    graph.ConvOp,
    graph.PoolOp,
    graph.BatchNormOp,
    graph.PadOp,
    graph.MatMulNBitsOp,
)
"""The graph ops whose lowerings take `?` dimensions (`extents.py`); any other op with a `?` in its types is refused."""


def _describe(op: Operation) -> str:
    """`'graph.conv' (conv1)`: the op and, when known, its node's name (its result's name)."""
    names = [result.name_hint for result in op.results if result.name_hint]
    return f"'{op.name}'" + (f" ({names[0]})" if names else "")


@dataclass
class RunTimeDimensionGuard(RewritePattern):
    """Apply `patterns` (the first that rewrites), letting a graph op with a `?` in its operand or result types reach
    only the lowerings of `DYNAMIC_LOWERINGS`: any other is refused, as is a case such a lowering cannot take, with
    a DiagnosticException naming the op:

        graph-to-te: 'graph.conv' (conv1) does not take run-time dimensions
    """

    patterns: list[RewritePattern]
    repeated: RepeatedOps

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith("graph.") or isinstance(op, graph.WeightOp):
            return  # every pattern lowers a graph op
        dynamic = any(has_run_time_dims(value) for value in (*op.operands, *op.results))
        if dynamic and not isinstance(op, DYNAMIC_LOWERINGS):
            raise DiagnosticException(f"graph-to-te: {_describe(op)} does not take run-time dimensions")
        if dynamic:
            self._lower(op, rewriter)
        else:  # a static op lowers as the first op of its signature did (`repeated.py`)
            self.repeated.lower(op, rewriter, lambda: self._lower(op, rewriter))

    def _lower(self, op: Operation, rewriter: PatternRewriter) -> None:
        try:
            for pattern in self.patterns:
                pattern.match_and_rewrite(op, rewriter)
                if rewriter.has_done_action:
                    return
        except RunTimeDimensionError as error:
            raise DiagnosticException(f"graph-to-te: {_describe(op)} {error}") from error


def lowering_patterns(module: builtin.ModuleOp, groups: KernelGroups) -> list[RewritePattern]:
    """Every graph op's lowering, for `module` (whose integer convolutions and matmuls it reads), numbering
    multi-stage kernels with `groups`."""
    return [
        ConstantLowering(),
        ElementwiseBinaryLowering(),
        ElementwiseUnaryLowering(),
        CastLowering(),
        BitCastLowering(),
        IsNaNLowering(),
        IsInfLowering(),
        GemmLowering(),
        MatMulLowering(),
        ReshapeLowering(),
        TransposeLowering(),
        *graph_to_te_activation.PATTERNS,
        *graph_to_te_nn.PATTERNS,
        *graph_to_te_normalization.patterns(groups),
        *graph_to_te_attention.patterns(groups),
        *graph_to_te_tensor.PATTERNS,
        *graph_to_te_indexing.PATTERNS,
        *graph_to_te_spatial.PATTERNS,
        *graph_to_te_extern.PATTERNS,
        *graph_to_te_selection.PATTERNS,
        *graph_to_te_generation.PATTERNS,
        *graph_to_te_compaction.PATTERNS,
        *graph_to_te_quantized.patterns(module),
        *graph_to_te_linalg.PATTERNS,
        *graph_to_te_weight_only.PATTERNS,
    ]


@dataclass(frozen=True)
class GraphToTePass(ModulePass):
    """Lower graph compute ops to te.compute definitions (graph.weight stays)."""

    name = "graph-to-te"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        numbered = [
            group.value.data
            for compute in op.walk()
            if isinstance(compute, te.ComputeOp)
            and isinstance(group := compute.attributes.get(te.KERNEL_GROUP), builtin.IntegerAttr)
        ]
        groups = KernelGroups(max(numbered, default=-1) + 1)
        patterns = RunTimeDimensionGuard(lowering_patterns(op, groups), RepeatedOps(groups))
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
        for leftover in op.walk():
            unregistered = isinstance(leftover, builtin.UnregisteredOp)
            name = leftover.op_name.data if unregistered else leftover.name
            if name.startswith("graph.") and not isinstance(leftover, graph.WeightOp):
                raise PassFailedException(f"graph-to-te: no lowering for '{name}'")
