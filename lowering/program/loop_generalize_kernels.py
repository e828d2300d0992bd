"""`loop-generalize-kernels`: kernels that differ only in extents become one kernel that takes them at run time.

A model repeats a layer at many sizes: DenseNet-121's 1x1 convolutions read 64, 96, ..., 1,024 channels with the
same schedule, and each size was a kernel of its own, lowered and compiled by LLVM again (86% of DenseNet-121's ops
at the `program` stage, 75% of Inception v2's, 40% of ResNet-50's were in kernels equal to another but for such
numbers). Kernels equal op for op, attribute for attribute, but for the extents of their buffer arguments and the
upper bounds of their serial loops become the first of them, which takes each differing number as an
`index` argument after its buffers: the buffers get `?` there and are wrapped in `loop.extents`, the loops get a
run-time upper bound (`dynamic_upper`), exactly as te-to-loop builds a kernel over symbolic dimensions. Each call
passes its kernel's numbers, so every call computes what it did:

    func.call @conv_3(%a, %w3, %o3) : (memref<1x56x56x96xf32>, memref<8x96x16xf32>, memref<1x56x56x128xf32>) -> ()
    func.call @conv_4(%b, %w4, %o4) : (memref<1x56x56x128xf32>, memref<8x128x16xf32>, memref<1x56x56x128xf32>) -> ()
    func.func private @conv_3(%in: memref<1x56x56x96xf32>, %w: memref<8x96x16xf32>, %out: ...) {
      loop.for "k" %k = 0 to 96 step 1 serial { ... memref.load %in[%i0, %h, %x, %k] ... }
    // becomes
    %a1 = builtin.unrealized_conversion_cast %a : memref<1x56x56x96xf32> to memref<1x56x56x?xf32>
    func.call @conv_3(%a1, %w1, %o3, %c96) : (memref<1x56x56x?xf32>, memref<8x?x16xf32>, ..., index) -> ()
    func.call @conv_3(%b1, %w2, %o4, %c128) : ...
    func.func private @conv_3(%in: memref<1x56x56x?xf32>, %w: memref<8x?x16xf32>, %out: ..., %n0: index) {
      %in_1 = loop.extents %in[%n0] : memref<1x56x56x?xf32>
      %w_1 = loop.extents %w[%n0] : memref<8x?x16xf32>
      loop.for "k" %k = 0 to %n0 step 1 serial { ... memref.load %in_1[%i0, %h, %x, %k] ... }

Numbers that vary together (a buffer's channel extent and the loop over it) share one argument. Parallel,
unrolled and vectorised loops, local buffers, constants and every other attribute must be equal: those shape the
code LLVM is given and stay static, as do the kernels' attributes (a profiled build's schedule and task notes). A
kernel is generalised only if it takes buffers alone (without layouts), only calls refer to it (not a
`loop.precompute`: load-time code keeps its static sizes) and its buffers are only read and written (`memref` and
`vector` loads and stores, `loop.prefetch`), whose addresses `loop-to-scf` computes from the extents. It runs after
the schedules and the memory plan, before `loop-outline-parallel`, which passes the extents on to the parallel
bodies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.abi import ENTRY_ATTR
from minimlc.lowering.loop.analysis import walk_ops
from minimlc.lowering.program.loop_mark_load_time import referenced_symbols

_RUN_TIME_KINDS = ("serial",)
"""Loops whose upper bound may become a run-time value: `unroll` and `vectorize` loops are copied or widened by
their static extent, and a `parallel` loop with a run-time extent gets a serial remainder nest beside its tasks
(`loop-outline-parallel`), code that its static extent, a whole number of tasks, did without."""

_ACCESSES = (memref.LoadOp, memref.StoreOp, vector.LoadOp, vector.StoreOp, loop.PrefetchOp)


@dataclass(frozen=True)
class LoopGeneralizeKernelsPass(ModulePass):
    """One kernel for each set of kernels equal but for buffer extents and loop bounds (see the module doc)."""

    name = "loop-generalize-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        generalize_kernels(op)


@dataclass
class _Sites:
    """Where a kernel's numbers are: each buffer argument's extents, then each serial loop's upper bound, in walk
    order; `values` gives them in the same order."""

    dims: list[tuple[int, int]] = field(default_factory=list)
    """(argument index, axis) per buffer extent."""
    loops: list[loop.ForOp] = field(default_factory=list)
    values: list[int] = field(default_factory=list)


def generalize_kernels(module: ModuleOp) -> None:
    """Generalise every set of kernels of `module` equal but for their extents (see the module doc)."""
    calls: dict[str, list[func.CallOp]] = {}
    other_references: set[str] = set()
    for op in walk_ops(module):
        if isinstance(op, func.CallOp):
            calls.setdefault(op.callee.root_reference.data, []).append(op)
        else:
            other_references.update(referenced_symbols(op))
    groups: dict[tuple[object, ...], list[tuple[func.FuncOp, _Sites]]] = {}
    for function in module.ops:
        if not _candidate(function, calls, other_references):
            continue
        assert isinstance(function, func.FuncOp)
        outline = _outline(function)
        if outline is not None:
            groups.setdefault(outline[0], []).append((function, outline[1]))
    for members in groups.values():
        if len(members) > 1:
            _generalize(members, calls)


def _candidate(function: Operation, calls: dict[str, list[func.CallOp]], other_references: set[str]) -> bool:
    if not isinstance(function, func.FuncOp) or not function.body.blocks or ENTRY_ATTR in function.attributes:
        return False
    name = function.sym_name.data
    if name not in calls or name in other_references or function.function_type.outputs.data:
        return False
    return all(isinstance(t, MemRefType) for t in function.function_type.inputs.data)


def _outline(function: func.FuncOp) -> tuple[tuple[object, ...], _Sites] | None:
    """`function` with its numbers left out (its key: equal keys, equal kernels but for the numbers) and where the
    numbers are; None where a buffer argument has a layout or is used by anything but loads and stores."""
    sites = _Sites()
    numbers: dict[SSAValue, int] = {}
    key: list[object] = [function.arg_attrs, tuple(sorted(function.attributes.items()))]
    for index, arg in enumerate(function.body.block.args):
        buffer = arg.type
        assert isinstance(buffer, MemRefType)
        if not isinstance(buffer.layout, NoneAttr) or any(not _is_access_of(use.operation, arg) for use in arg.uses):
            return None
        key.append((buffer.element_type, len(buffer.shape), buffer.layout, buffer.memory_space))
        for axis, extent in enumerate(buffer.get_shape()):
            sites.dims.append((index, axis))
            sites.values.append(extent)
        numbers[arg] = len(numbers)
    for op in walk_ops(function)[1:]:
        properties = op.properties
        if isinstance(op, loop.ForOp) and op.kind.data in _RUN_TIME_KINDS and not op.is_dynamic:
            sites.loops.append(op)
            sites.values.append(op.upper.value.data)
            properties = {name: value for name, value in properties.items() if name != "upper"}
        key.append(
            (
                op.name,
                tuple(sorted(properties.items())),
                tuple(sorted(op.attributes.items())),
                tuple(numbers.get(operand, -1) for operand in op.operands),
                tuple(result.type for result in op.results),
                tuple(tuple(arg.type for arg in block.args) for region in op.regions for block in region.blocks),
            )
        )
        for value in (*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.args)):
            numbers[value] = len(numbers)
    return tuple(key), sites


def _is_access_of(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` reads or writes `buffer` (as the buffer it addresses, not as a value stored)."""
    if not isinstance(op, _ACCESSES):
        return False
    addressed = op.operands[1] if isinstance(op, memref.StoreOp | vector.StoreOp) else op.operands[0]
    return addressed is buffer and all(operand is not buffer for operand in op.operands if operand is not addressed)


def _generalize(members: Sequence[tuple[func.FuncOp, _Sites]], calls: dict[str, list[func.CallOp]]) -> None:
    """Make the first of `members` take their differing numbers, point every member's calls at it, erase the rest."""
    columns = list(zip(*(sites.values for _, sites in members), strict=True))
    varying = [position for position, column in enumerate(columns) if len(set(column)) > 1]
    if not varying:
        return  # identical kernels: loop-merge-functions' work
    parameters: dict[tuple[int, ...], int] = {}
    parameter_of = {position: parameters.setdefault(columns[position], len(parameters)) for position in varying}
    kept, sites = members[0]
    _add_parameters(kept, sites, parameter_of, len(parameters))
    inputs = kept.function_type.inputs.data
    for member, (function, _) in enumerate(members):
        numbers = [column[member] for column in parameters]
        for call in calls[function.sym_name.data]:
            _redirect(call, kept, inputs, numbers)
    for function, _ in members[1:]:
        Rewriter.erase_op(function)


def _add_parameters(kernel: func.FuncOp, sites: _Sites, parameter_of: dict[int, int], count: int) -> None:
    """Give `kernel` `count` index arguments and use them at the varying positions `parameter_of` names."""
    block = kernel.body.block
    parameters = [block.insert_arg(IndexType(), len(block.args)) for _ in range(count)]
    for number, parameter in enumerate(parameters):
        parameter.name_hint = f"n{number}"
    dims_of: dict[int, dict[int, SSAValue]] = {}
    for position, (arg_index, axis) in enumerate(sites.dims):
        if position in parameter_of:
            dims_of.setdefault(arg_index, {})[axis] = parameters[parameter_of[position]]
    first = block.first_op
    assert first is not None
    for arg_index, dynamic in dims_of.items():
        old = block.args[arg_index]
        assert isinstance(old.type, MemRefType)
        shape = [DYNAMIC_INDEX if axis in dynamic else extent for axis, extent in enumerate(old.type.get_shape())]
        new = block.insert_arg(
            MemRefType(old.type.element_type, shape, old.type.layout, old.type.memory_space), arg_index
        )
        extents = loop.ExtentsOp(new, [dynamic[axis] for axis in sorted(dynamic)])
        new.name_hint, extents.result.name_hint = old.name_hint, f"{old.name_hint}_1" if old.name_hint else None
        Rewriter.insert_op(extents, InsertPoint.before(first))
        old.replace_all_uses_with(extents.result)
        block.erase_arg(old)
    for position, for_op in enumerate(sites.loops, start=len(sites.dims)):
        if position in parameter_of:
            for_op.properties["upper"] = IntegerAttr(loop.DYNAMIC_UPPER, 64)
            for_op.operands = (parameters[parameter_of[position]],)
    kernel.function_type = FunctionType.from_lists([arg.type for arg in block.args], [])
    if kernel.arg_attrs is not None:
        kernel.arg_attrs = ArrayAttr([*kernel.arg_attrs.data, *(DictionaryAttr({}) for _ in range(count))])


def _redirect(call: func.CallOp, kernel: func.FuncOp, inputs: Sequence[Attribute], numbers: list[int]) -> None:
    """Point `call` at `kernel`, its buffers cast to the kernel's types and `numbers` passed after them."""
    operands: list[SSAValue] = []
    before: list[Operation] = []
    for value, wanted in zip(call.arguments, inputs, strict=False):
        if value.type != wanted:
            cast = UnrealizedConversionCastOp.get([value], [wanted])
            before.append(cast)
            value = cast.results[0]
        operands.append(value)
    for number in numbers:
        constant = arith.ConstantOp(IntegerAttr(number, IndexType()))
        before.append(constant)
        operands.append(constant.result)
    Rewriter.insert_op(before, InsertPoint.before(call))
    Rewriter.replace_op(call, func.CallOp(kernel.sym_name.data, operands, []))
