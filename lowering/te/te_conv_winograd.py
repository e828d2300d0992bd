"""`te-conv-winograd`: compute a stride-1 3x3 convolution with Winograd's minimal filtering F(2x2, 3x3).

Each 2x2 block of output pixels (a tile) is computed from the 4x4 input block under it: the block and the 3x3
filter are carried into a 4x4 transform domain, multiplied there point by point, and carried back. Summed over input
channels, the 16 points of the transform domain are 16 independent matrix products, so the convolution becomes a
batched GEMM with 16 multiply-adds per tile and channel pair instead of 36 (2.25x fewer):

    %y = te.compute "conv" (%n, %h, %w, %f) reduce sum (%c : 64, %kh : 3, %kw : 3) -> tensor<1x28x28x64xf32> {
      x[n, h + kh, w + kw, c] * w[f, c, kh, kw] }                   // x: the padded input, channels-last
    // becomes
    %v = te.compute "winograd_input" (%e, %t, %c) -> tensor<16x196x64xf32> { B^T d B at point e of tile t }
    %u = te.compute "winograd_weight" (%e, %c, %f) -> tensor<16x64x64xf32> { G g G^T at point e }
    %m = te.compute "winograd_gemm" (%e, %t, %f) reduce sum (%c : 64) -> tensor<16x196x64xf32> { v * u }
    %y = te.compute "winograd_output" (%n, %h, %w, %f) -> tensor<1x28x28x64xf32> { A^T m A at the pixel's tile }

The transforms' matrices have few non-zero entries (two of four in each row of B^T, three of four in A^T), so each
transformed value is a sum of four input reads and each output pixel one of nine GEMM results, with +-1
coefficients looked up from the transform point (`_row_terms`); every compute is vectorized over the channels,
innermost. The weight transform reads weights alone: at O3 it runs once at load time. te-inline folds the input's
padding (and the ReLU before it) into the input transform, and the output transform into an elementwise consumer
(a bias, a ReLU). The GEMM is default-schedule's batched GEMM, so the tuner searches its tiles.

The transform domain costs memory traffic (the transformed input and the GEMM result are each 4x the output's size)
and rounding (the output transform adds nine products: results differ from the direct sum by a few ulps of the
largest term). `convolutions` chooses: `all` eligible ones, `none`, or `auto`: where `tuning-db=PATH` names a
database with algorithm records for the convolution's shape (`minimlc tune` measures both algorithms), the faster,
else what `prefers_winograd` picks.
Under a run-time batch (`conv_batch.py`) the convolution is planned as one image and the batch stays the outer axis
of the transformed input, the GEMM and the output (`tensor<?x16x196x64xf32>`: per image the computes of batch 1).
Eligible: a group-1 "conv" compute stored channels-last, 3x3, stride 1, no dilation, padding made explicit
(`graph-pad-conv`). An odd output side takes one more tile, whose second row (column) of outputs lies beyond the
map: computed in the transform domain, never stored (a 7x7 map: 16 tiles, 64 outputs for 49). Run after
te-channels-last (a convolution whose output stays NCHW would read the GEMM result across channels) and before
te-inline. A convolution of the shape of one rewritten before (ResNet-50 has 11 for 3 shapes) gets clones of
that one's computes, reading its own input and weight: cloning is a fraction of building.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, f32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import graph, te
from minimlc.lowering.generic import built_ops
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    build_compute,
    f32_constant,
    index_constant,
    read,
    split_index,
)
from minimlc.lowering.graph_to_te.extents import Extent
from minimlc.lowering.strategy.conv import ConvShape, prefers_winograd, winograd_tiles
from minimlc.lowering.strategy.tuning_db import TuningDatabase, algorithm_key, target_key
from minimlc.lowering.target import Target, target_of
from minimlc.lowering.te.compute_rewriting import rewrite_computes
from minimlc.lowering.te.conv_batch import batch_extent, has_only_a_run_time_batch

CHOICES = ("auto", "all", "none")

TILE = 2
"""Output pixels per tile side: F(2x2, 3x3)."""
POINTS = 4
"""Transform-domain points per side (tile + kernel - 1)."""
INPUT_TRANSFORM = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
"""B^T: row a gives point a of a 4-input row."""
WEIGHT_TRANSFORM = ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1))
"""G: row a gives point a of a 3-tap filter row."""
OUTPUT_TRANSFORM = ((1, 1, 1, 0), (0, 1, -1, -1))
"""A^T: row p gives output p of a 4-point row."""
OUTPUT_TAG = "winograd_output"
"""The tag of the output transform, which takes the convolution's place (channels-last, as it was)."""


def _lookup(index: SSAValue, values: tuple[int | float, ...], as_float: bool) -> SSAValue:
    """`values[index]` for an index known to lie in range: the most frequent value, with a select for each position
    that holds another (`(1, 1, -1, 1)` is `select(index == 2, -1, 1)`)."""
    make = f32_constant if as_float else index_constant
    usual = max(values, key=values.count)
    result = make(usual)
    for position, value in enumerate(values):
        if value != usual:
            is_position = built_ops.cmpi(index, index_constant(position), "eq").result
            result = built_ops.select(is_position, make(value), result).result
    return result


def _row_terms(matrix: tuple[tuple[int | float, ...], ...], row: SSAValue) -> list[tuple[SSAValue, SSAValue]]:
    """The non-zero entries of `matrix`'s row `row` as (column, coefficient) values, the same number for every row
    (rows with fewer end in zero coefficients at column 0)."""
    width = max(sum(1 for v in r if v) for r in matrix)
    entries = [[(j, v) for j, v in enumerate(r) if v] for r in matrix]
    padded = [e + [(0, 0.0)] * (width - len(e)) for e in entries]
    return [
        (_lookup(row, tuple(e[k][0] for e in padded), False), _lookup(row, tuple(float(e[k][1]) for e in padded), True))
        for k in range(width)
    ]


def _point(e: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(row, column) of transform point `e` in its 4x4 block."""
    return arith.DivUIOp(e, index_constant(POINTS)).result, arith.RemUIOp(e, index_constant(POINTS)).result


def _sum_of_terms(terms: list[SSAValue]) -> SSAValue:
    total = terms[0]
    for term in terms[1:]:
        total = arith.AddfOp(total, term).result
    return total


def _clamped(index: SSAValue, last: int | None) -> SSAValue:
    return index if last is None else arith.MinUIOp(index, index_constant(last)).result


def _is_sum_of(value: SSAValue, a: SSAValue, b: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, arith.AddiOp) and {owner.lhs, owner.rhs} == {a, b}


@dataclass(frozen=True)
class _Convolution:
    """An eligible convolution's operands: its padded input `x[n, h, w, c]` and its weight `w[f, c, kh, kw]`."""

    data: SSAValue
    weight: SSAValue


def eligible_convolution(op: te.ComputeOp) -> _Convolution | None:
    """The operands of a stride-1 3x3 group-1 f32 "conv" compute stored channels-last,
    `y[n, h, w, f] = sum_{c, kh, kw} x[n, h + kh, w + kw, c] * w[f, c, kh, kw]`, or None. (Other float types keep the
    direct sum: the transforms' rounding is made for f32, and f16 would lose range.)"""
    if op.tag.data != "conv" or op.combiner is None or op.combiner.data != "sum" or len(op.shape) != 4:
        return None
    if not has_only_a_run_time_batch(op):
        return None
    if op.result.type.element_type != f32:
        return None
    if len(op.body.block.args) != 7 or op.reduce_extents.get_values()[1:] != (3, 3):
        return None
    n, h, w, f, c, kh, kw = op.body.block.args
    product = op.yield_op.value.owner
    if not isinstance(product, arith.MulfOp):
        return None
    data, weight = product.lhs.owner, product.rhs.owner
    if not isinstance(data, te.ReadOp) or not isinstance(weight, te.ReadOp):
        return None
    if list(weight.indices) != [f, c, kh, kw] or len(data.indices) != 4:
        return None
    batch, row, column, channel = data.indices
    if batch is not n or channel is not c or not _is_sum_of(row, h, kh) or not _is_sum_of(column, w, kw):
        return None
    batches, height, width, _ = op.shape
    if graph.shape_of(data.tensor) != (batches, height + 2, width + 2, op.reduce_extents.get_values()[0]):
        return None
    return _Convolution(data.tensor, weight.tensor)


class ConvToWinograd(RewritePattern):
    """Rewrite a chosen convolution into input, weight and output transforms around a batched GEMM."""

    def __init__(self, choice: str, target: Target, database: TuningDatabase | None):
        self.choice = choice
        self.target = target
        self.database = database
        self.built: dict[tuple[object, ...], tuple[list[te.ComputeOp], _Convolution]] = {}
        """The computes built for each static convolution shape (and operand types), with the convolution they
        read: another convolution of that shape gets clones of them, reading its own operands."""

    def _chosen(self, shape: ConvShape) -> bool:
        """`auto`'s choice: the faster algorithm the tuning database measured for the shape, else the rule's."""
        if self.database is not None:
            record = self.database.best(algorithm_key(shape), target_key(self.target))
            if record is not None:
                return record.config.get("algorithm") == "winograd"
        return prefers_winograd(shape, self.target)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: te.ComputeOp, rewriter: PatternRewriter) -> None:
        if self.choice == "none":
            return
        convolution = eligible_convolution(op)
        if convolution is None:
            return
        n, oh, ow, f = op.shape
        c = op.reduce_extents.get_values()[0]
        # A run-time batch (`conv_batch.py`) is planned per image and stays an outer axis of every compute.
        per_image = n == DYNAMIC_INDEX
        if self.choice == "auto" and not self._chosen(ConvShape(1 if per_image else n, c, f, oh, ow, 3, 3)):
            return
        data, weight = convolution.data, convolution.weight
        key = None if per_image else (n, oh, ow, f, c, data.type, weight.type)
        if key in self.built:
            templates, read_by_templates = self.built[key]
            mapping: dict[SSAValue, SSAValue] = {read_by_templates.data: data, read_by_templates.weight: weight}
            clones = [clone_op(template, mapping) for template in templates]
            for clone in clones:
                clone.result.name_hint = None  # the convolution's, as for built computes (`rewriter.replace`)
            rewriter.replace(op, clones, [clones[-1].result])
            return
        tiles_h, tiles_w = winograd_tiles(oh, ow)
        # An odd side's last tiles reach one row (column) past the padded input: clamped, their reads repeat its last
        # row, which only the tile's second output row depends on: beyond the map, never computed.
        last_row, last_col = oh + 1 if oh % TILE else None, ow + 1 if ow % TILE else None
        tiles = (1 if per_image else n) * tiles_h * tiles_w
        points = POINTS * POINTS
        images: tuple[Extent, ...] = (batch_extent(op),) if per_image else ()

        def input_value(indices: Indices) -> SSAValue:
            *image, e, t, channel = indices
            a, b = _point(e)
            if per_image:
                batch, tile_row, tile_col = image[0], *split_index(t, (tiles_h, tiles_w))
            else:
                batch, tile_row, tile_col = split_index(t, (n, tiles_h, tiles_w))
            top = arith.MuliOp(tile_row, index_constant(TILE)).result
            left = arith.MuliOp(tile_col, index_constant(TILE)).result
            terms = []
            columns = _row_terms(INPUT_TRANSFORM, b)
            for row, row_coefficient in _row_terms(INPUT_TRANSFORM, a):
                at_row = _clamped(arith.AddiOp(top, row).result, last_row)
                for col, col_coefficient in columns:
                    at_col = _clamped(arith.AddiOp(left, col).result, last_col)
                    coefficient = arith.MulfOp(row_coefficient, col_coefficient).result
                    value = read(data, [batch, at_row, at_col, channel])
                    terms.append(arith.MulfOp(coefficient, value).result)
            return _sum_of_terms(terms)

        def weight_value(indices: Indices) -> SSAValue:
            e, channel, out_channel = indices
            a, b = _point(e)
            terms = []
            columns = _row_terms(WEIGHT_TRANSFORM, b)
            for tap_h, row_coefficient in _row_terms(WEIGHT_TRANSFORM, a):
                for tap_w, col_coefficient in columns:
                    coefficient = arith.MulfOp(row_coefficient, col_coefficient).result
                    value = read(weight, [out_channel, channel, tap_h, tap_w])
                    terms.append(arith.MulfOp(coefficient, value).result)
            return _sum_of_terms(terms)

        transformed_input = build_compute("winograd_input", (*images, points, tiles, c), input_value)
        transformed_weight = build_compute("winograd_weight", (points, c, f), weight_value)

        def gemm_value(indices: Indices) -> SSAValue:
            *image, e, t, out_channel, channel = indices
            lhs = read(transformed_input.result, [*image, e, t, channel])
            return arith.MulfOp(lhs, read(transformed_weight.result, [e, channel, out_channel])).result

        gemm = build_compute("winograd_gemm", (*images, points, tiles, f), gemm_value, (c,), "sum")

        def output_value(indices: Indices) -> SSAValue:
            batch, row, col, out_channel = indices
            tile_row = arith.DivUIOp(row, index_constant(TILE)).result
            tile_col = arith.DivUIOp(col, index_constant(TILE)).result
            p = arith.RemUIOp(row, index_constant(TILE)).result
            q = arith.RemUIOp(col, index_constant(TILE)).result
            t = arith.AddiOp(arith.MuliOp(tile_row, index_constant(tiles_w)).result, tile_col).result
            if not per_image and n > 1:
                t = arith.AddiOp(t, arith.MuliOp(batch, index_constant(tiles_h * tiles_w)).result).result
            image = [batch] if per_image else []
            terms = []
            columns = _row_terms(OUTPUT_TRANSFORM, q)
            for a, row_coefficient in _row_terms(OUTPUT_TRANSFORM, p):
                for b, col_coefficient in columns:
                    e = arith.AddiOp(arith.MuliOp(a, index_constant(POINTS)).result, b).result
                    coefficient = arith.MulfOp(row_coefficient, col_coefficient).result
                    terms.append(arith.MulfOp(coefficient, read(gemm.result, [*image, e, t, out_channel])).result)
            return _sum_of_terms(terms)

        output = build_compute(OUTPUT_TAG, (batch_extent(op), oh, ow, f), output_value)
        computes = [transformed_input, transformed_weight, gemm, output]
        if key is not None:
            self.built[key] = (computes, convolution)
        rewriter.replace(op, computes, [output.result])


@dataclass(frozen=True)
class TeConvWinogradPass(ModulePass):
    """Compute the chosen stride-1 3x3 convolutions with Winograd F(2x2, 3x3) (see the module docstring)."""

    name = "te-conv-winograd"

    convolutions: str = "auto"
    """Which eligible convolutions: `all`, `none` or `auto` (those the tuning database or `prefers_winograd` picks)."""
    tuning_db: str = ""
    """A tuning database whose algorithm records (`minimlc tune`) decide `auto` for the shapes they measured."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.convolutions not in CHOICES:
            raise PassFailedException(
                f"{self.name}: convolutions must be one of {', '.join(CHOICES)}, got '{self.convolutions}'"
            )
        database = TuningDatabase(self.tuning_db) if self.tuning_db else None
        pattern = ConvToWinograd(self.convolutions, target_of(op), database)
        rewrite_computes(op, pattern)
