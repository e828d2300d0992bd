"""The weight-only rule: a matmul whose weight is read packed and dequantised in the body (`graph.matmul_nbits`,
`graph_to_te/weight_only.py`), vectorised along the output columns so that every step streams contiguous bytes.

Applies to a sum reduction over one loop (the weight's blocks `kb`) under output loops whose innermost is the columns
`j` (both static; the rows may be a run-time count), whose body reads the bytes of an 8-bit weight parameter at `[j, kb,
c]` (constant `c`: a step takes a whole block); every parameter the columns index (the weight, its scales, its zero
points) must be a weight, to be packed:

    loop.for "i0" { loop.for "i1" { acc = 0; loop.for "k2" { q0 = b[i1, k2, 0] ; q1 = b[i1, k2, 1] ... acc += ... }}}

Schedule: split `j` by `nr` (a multiple of the vector width), order the loops `j_o, kb, j_i`, pack each such
parameter into `nr`-wide panels along `j` at load time (`loop-pack`: the weight `[N, blocks, bytes]` becomes
`[N/nr, blocks, bytes, nr]`, so one vector load takes a byte of `nr` columns and a block's bytes are consecutive),
vectorise `j_i` (each lane unpacks its own byte: the same ops on every lane) and keep the `nr` sums in registers over
the whole reduction (`loop-cache-write`, starting at zero). Knob: `nr` (one, two or four vector widths that divide
the columns; default two where they divide them: K=N=4096, one thread, AVX2 on Zen 3, int8 1.14 / 1.08 / 1.40 ms at
one, two, four vectors, int4 0.97 / 0.99 / 1.47 ms, noisy; four vectors of int4's unpacked pairs spill).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, i8, i32

from minimlc.dialects import loop
from minimlc.lowering.schedule.kernel_analysis import (
    accumulator_of,
    is_weight_at_every_call,
    output_and_reduction_loops,
)
from minimlc.lowering.schedule.space import Config, Knob, Space
from minimlc.lowering.target import Target


@dataclass(frozen=True)
class WeightOnlyWorkload:
    """The kernel, its column loop and its trip count, the reduction loop (blocks), and the parameters to pack:
    (parameter, the dimension the columns index)."""

    kernel: str
    cols: str
    n: int
    blocks: str
    packed: tuple[tuple[int, int], ...]


def _reads_packed_bytes(read: memref.LoadOp, column: loop.ForOp, blocks: loop.ForOp) -> bool:
    """Whether `read` takes a byte of an 8-bit weight (or a word of four: the integer form) at `[column, block,
    constant]`."""
    memory = read.memref.type
    assert isinstance(memory, MemRefType)
    indices = list(read.indices)
    return (
        memory.element_type in (i8, i32)
        and len(indices) == 3
        and indices[:2] == [column.induction_var, blocks.induction_var]
        and isinstance(indices[2].owner, arith.ConstantOp)
    )


def _column_reads(kernel: func.FuncOp, column: loop.ForOp) -> list[memref.LoadOp]:
    iv = column.induction_var
    return [op for op in kernel.walk() if isinstance(op, memref.LoadOp) and iv in op.indices]


@dataclass(frozen=True)
class WeightOnlyRule:
    """Packed low-bit weights streamed in column panels (see the module docstring)."""

    name: str = "weight_only"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> WeightOnlyWorkload | None:
        accumulator = accumulator_of(kernel)
        if accumulator is None:
            return None
        outputs, reductions = output_and_reduction_loops(kernel, accumulator)
        if not outputs or len(reductions) != 1:
            return None
        column, blocks = outputs[-1], reductions[0]
        if column.is_dynamic or blocks.is_dynamic:  # the rows may be a run-time count, not these
            return None
        name, params = kernel.sym_name.data, list(kernel.body.block.args)
        packed: list[tuple[int, int]] = []
        weight_reads = 0
        for read in _column_reads(kernel, column):
            if read.memref not in params or list(read.indices).count(column.induction_var) != 1:
                return None
            operand = params.index(read.memref)
            if not is_weight_at_every_call(module, name, operand):
                return None
            weight_reads += _reads_packed_bytes(read, column, blocks)
            packed.append((operand, list(read.indices).index(column.induction_var)))
        if not weight_reads:
            return None
        return WeightOnlyWorkload(
            name, column.loop_name.data, column.trip_count, blocks.loop_name.data, tuple(sorted(set(packed)))
        )

    def space(self, workload: WeightOnlyWorkload, target: Target) -> Space:
        widths = tuple(f * target.vector_lanes for f in (1, 2, 4) if workload.n % (f * target.vector_lanes) == 0)
        if not widths:
            return Space()
        return Space((Knob("nr", widths, 2 * target.vector_lanes if len(widths) > 1 else widths[0]),))

    def apply(self, workload: WeightOnlyWorkload, config: Config) -> list[str]:
        name, j, nr = workload.kernel, workload.cols, int(config["nr"])
        steps = [
            f"loop-decompose-reduction{{kernel={name}}}",
            f"loop-split{{kernel={name} loop={j}_init factor={nr}}}",
            f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
            f"loop-split{{kernel={name} loop={j} factor={nr}}}",
            f"loop-reorder{{kernel={name} order={j}_o,{workload.blocks},{j}_i}}",
        ]
        steps += [
            f"loop-pack{{kernel={name} operand={operand} dim={dim} factor={nr}}}" for operand, dim in workload.packed
        ]
        return [
            *steps,
            f"loop-vectorize{{kernel={name} loop={j}_i}}",
            f"loop-cache-write{{kernel={name} loop={j}_o fill=true}}",
        ]


WEIGHT_ONLY = WeightOnlyRule()
