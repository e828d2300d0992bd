"""The integer convolution rule: the direct convolution schedule (`conv.py`) on i32 sums of i32 products.

Applies to a sum reduction whose update adds (`arith.addi`) the product (`arith.muli`) of two i32 reads: a weight
read at loop indices, one output loop of which (the output channels) does not index the data, its trip count a
multiple of the vector width. `graph-to-te` lowers a group-1 `graph.conv_integer` to this shape, channels last:

    loop.for "i0" n { "i1" oh { "i2" ow { "i3" f { acc = 0; loop.for "k4" kh { "k5" kw { "k6" c {
      acc += w[i3, k6, k4, k5] * x[i0, i1 + k4, i2 + k5, k6] } } } ... } } } }

Same space, default and schedule as the float convolution (`CONV.space`, `CONV.default`, `CONV.apply`): `nr`
output channels in vectors of i32 lanes (the weight packed at load time), `mr` output columns in registers, each
multiply-add a vector `muli` + `addi` (the portable form; LLVM picks the target's i32 multiply).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerType, ModuleOp

from minimlc.lowering.loop.analysis import affine_form, loops_of
from minimlc.lowering.schedule.conv import CONV, ConvWorkload
from minimlc.lowering.schedule.kernel_analysis import (
    accumulator_of,
    is_weight_at_every_call,
    output_and_reduction_loops,
    updates_of,
)
from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class IntegerConvRule:
    """Direct integer convolution: the float convolution's register tile over i32 multiply-adds."""

    name: str = "integer_conv"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> ConvWorkload | None:
        accumulator = accumulator_of(kernel)
        if accumulator is None:
            return None
        updates = updates_of(kernel, accumulator, (arith.AddiOp,))
        if len(updates) != 1 or not isinstance(updates[0], arith.AddiOp):
            return None
        element = updates[0].result.type
        if not isinstance(element, IntegerType) or element.width.data != 32:
            return None
        product = next((v.owner for v in updates[0].operands if isinstance(v.owner, arith.MuliOp)), None)
        if product is None:
            return None
        reads = [product.lhs.owner, product.rhs.owner]
        if not all(isinstance(read, memref.LoadOp) for read in reads):
            return None
        spatial_loops, reduction_loops = output_and_reduction_loops(kernel, accumulator)
        if len(spatial_loops) < 2 or not reduction_loops:
            return None
        params = list(kernel.body.block.args)
        ivs = {lp.induction_var: lp for lp in loops_of(kernel)}
        for weight, data in (reads, reads[::-1]):
            assert isinstance(weight, memref.LoadOp) and isinstance(data, memref.LoadOp)
            if weight.memref not in params or not all(index in ivs for index in weight.indices):
                continue
            operand = params.index(weight.memref)
            if not is_weight_at_every_call(module, kernel.sym_name.data, operand):
                continue
            data_loops = {v for index in data.indices for v in (affine_form(index) or {None: 0}) if v is not None}
            channels = [
                (dim, ivs[index])
                for dim, index in enumerate(weight.indices)
                if ivs[index] in spatial_loops and index not in data_loops
            ]
            if len(channels) != 1:
                continue
            dim, channel_loop = channels[0]
            if channel_loop.trip_count % target.vector_lanes:
                continue
            width = [lp for lp in spatial_loops if lp is not channel_loop][-1]
            innermost = affine_form(data.indices[-1]) or {}
            weight_dims = {ivs[index]: d for d, index in enumerate(weight.indices)}
            return ConvWorkload(
                kernel.sym_name.data,
                tuple(lp.loop_name.data for lp in spatial_loops),
                tuple(lp.loop_name.data for lp in reduction_loops),
                tuple(innermost.get(lp.induction_var, 0) == 1 for lp in reduction_loops),
                tuple(weight_dims.get(lp) for lp in reduction_loops),
                channel_loop.loop_name.data,
                channel_loop.trip_count,
                width.loop_name.data,
                width.trip_count,
                math.prod(lp.trip_count for lp in reduction_loops),
                operand,
                dim,
                len(weight.indices),
            )
        return None

    def space(self, workload: ConvWorkload, target: Target) -> Space:
        return CONV.space(workload, target)

    def default(self, workload: ConvWorkload, target: Target) -> Config:
        return CONV.default(workload, target)

    def apply(self, workload: ConvWorkload, config: Config) -> list[str]:
        return CONV.apply(workload, config)


INTEGER_CONV = IntegerConvRule()
