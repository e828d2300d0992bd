"""`loop-prefetch`: fetch the next panel of a weight while the current one is being used (software prefetch).

A register-tiled convolution or GEMM walks weight panel `p` once per output tile, and its first walk of each panel
finds it in memory when the model's weights exceed the last-level cache (ResNet-50's 100 MB): stage-4 convolutions
ran at 200-235 GFLOP/s with their weights flushed against 265-280 with them cached (Zen 5, one thread).
`loop-prefetch{kernel=conv_0 loop=k6 operand=1 dim=0 ahead=1}` puts at the head of loop `k6`'s body one
`loop.prefetch` per cache line that an iteration of `k6` reads from parameter `operand`, with the index along
dimension `dim` moved `ahead` further (clamped to the last panel), so memory streams panel `p + 1` during every
walk over panel `p` instead of stalling on each panel's first walk:

    loop.for "k6" %k6 = 0 to 512 step 1 serial {
      loop.for "i3_i" ... { loop.for "i1_i" %i1_i = 0 to 32 step 1 vectorize {
        %w = memref.load %in1[%p, %k4, %k5, %k6, %i1_i] : memref<16x3x3x512x32xf32> ... } }
    }
    // becomes
    loop.for "k6" %k6 = 0 to 512 step 1 serial {
      %next = arith.minui(%p + 1, 15)
      loop.prefetch %in1[%next, %k4, %k5, %k6, %c0] : memref<16x3x3x512x32xf32>
      loop.prefetch %in1[%next, %k4, %k5, %k6, %c16] : memref<16x3x3x512x32xf32>
      loop.for "i3_i" ... (unchanged)
    }

The loops inside `loop` count from their first iteration (index 0) when the prefetched addresses are formed; the
lines cover the span of the last index over them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.abi import buffer_dtype
from minimlc.lowering.loop.analysis import (
    affine_form,
    defined_within,
    find_kernel,
    find_loop,
    form_range,
    index_constant,
    is_movable,
    loop_of,
)

CACHE_LINE_BYTES = 64


@dataclass(frozen=True)
class LoopPrefetchPass(ModulePass):
    """Prefetch parameter `operand`'s reads in loop `loop` of `kernel`, `ahead` steps further along `dim`."""

    name = "loop-prefetch"

    kernel: str
    loop: str
    operand: int
    dim: int = 0
    ahead: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        parameters = kernel.body.block.args
        if not 0 <= self.operand < len(parameters):
            raise DiagnosticException(
                f"{self.name}: kernel '{self.kernel}' has {len(parameters)} parameters, no operand {self.operand}"
            )
        buffer = parameters[self.operand]
        if not isinstance(buffer.type, MemRefType):
            raise DiagnosticException(f"{self.name}: operand {self.operand} of '{self.kernel}' is not a buffer")
        shape = buffer.type.get_shape()
        if not 0 <= self.dim < len(shape):
            raise DiagnosticException(
                f"{self.name}: operand {self.operand} has rank {len(shape)}, no dimension {self.dim}"
            )
        if shape[self.dim] == DYNAMIC_INDEX:
            raise DiagnosticException(
                f"{self.name}: dimension {self.dim} of operand {self.operand} of '{self.kernel}' is a run-time extent: "
                "the prefetch could not be clamped to it"
            )
        if self.ahead < 1:
            raise DiagnosticException(f"{self.name}: ahead must be at least 1, got {self.ahead}")
        loads = [
            load for load in target.body.walk() if isinstance(load, memref.LoadOp) and load.memref == buffer
        ]
        if not loads:
            raise DiagnosticException(f"{self.name}: loop '{self.loop}' reads nothing from operand {self.operand}")
        builder = Builder(InsertPoint.at_start(target.body.block))
        element_bytes = buffer_dtype(buffer.type.element_type).itemsize
        per_line = max(1, CACHE_LINE_BYTES // element_bytes)
        hoisted = _Hoisted(builder, target)
        seen: set[tuple[SSAValue, ...]] = set()
        for load in loads:
            if tuple(load.indices) in seen:
                continue
            seen.add(tuple(load.indices))
            indices = [hoisted.value(index) for index in load.indices]
            forward = builder.insert(arith.AddiOp(indices[self.dim], index_constant(builder, self.ahead))).result
            last = index_constant(builder, shape[self.dim] - 1)
            indices[self.dim] = builder.insert(arith.MinUIOp(forward, last)).result
            for offset in range(0, _inner_span(load.indices[-1], target), per_line):
                line = list(indices)
                if offset:
                    line[-1] = builder.insert(arith.AddiOp(line[-1], index_constant(builder, offset))).result
                builder.insert(loop.PrefetchOp(buffer, line))


def _inner_span(index: SSAValue, target: loop.ForOp) -> int:
    """How many elements index `index` sweeps over the loops nested in `target` (1 if it does not move there)."""
    form = affine_form(index)
    if form is None:
        return 1
    inner = {value: coeff for value, coeff in form.items() if value is not None and _is_inner(value, target)}
    if dynamic := [lp.loop_name.data for value in inner if (lp := loop_of(value)) is not None and lp.is_dynamic]:
        raise DiagnosticException(
            f"loop-prefetch: the prefetched read's last index moves with loop '{dynamic[0]}' inside loop "
            f"'{target.loop_name.data}', which runs a run-time number of iterations"
        )
    low, high = form_range(inner) if inner else (0, 0)
    return high - low + 1


def _is_inner(value: SSAValue, target: loop.ForOp) -> bool:
    owner = loop_of(value)
    return owner is not None and owner is not target and defined_within(value, target.body.block)


class _Hoisted:
    """Index values rebuilt at the head of `target`'s body, with the loops nested in it at their first iteration."""

    def __init__(self, builder: Builder, target: loop.ForOp):
        self.builder, self.target = builder, target
        self.copies: dict[SSAValue, SSAValue] = {}

    def value(self, value: SSAValue) -> SSAValue:
        if not defined_within(value, self.target.body.block) or value is self.target.induction_var:
            return value
        if value in self.copies:
            return self.copies[value]
        owner = loop_of(value)
        if owner is not None:
            copy = index_constant(self.builder, owner.lower.value.data)
        elif is_movable(value.owner):
            op = value.owner
            clone = op.clone(value_mapper={operand: self.value(operand) for operand in op.operands})
            copy = self.builder.insert(clone).results[0]
        else:
            raise DiagnosticException(
                f"loop-prefetch: an index of the prefetched read is computed by '{value.owner.name}', not index "
                "arithmetic"
            )
        self.copies[value] = copy
        return copy
