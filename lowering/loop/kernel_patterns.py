"""How kernels fuse, read off the loop IR of a kernel and of its callers: a kernel's pattern (TVM's `OpPatternKind`),
the one call that reads a call's output, and the elementwise call that `loop-fuse-kernels` folds into a contraction's
write-back (`epilogue_call`), which the convolution rule asks too (`schedule/kernel_analysis.py`,
`feeds_a_residual_add`) to block its channels for that epilogue.

A kernel `(inputs..., out)` (a dynamic model's kernels take their run-time extents after them, `index` parameters
told apart by type, and reach their buffers through `loop.extents`) is **elementwise** if it has no reduction, one
store (with run-time extents one per part of a loop split into a main part and a remainder), and reads every input at
the store's indices or at an ordered subset of them (broadcast, like a per-channel bias); **injective** if it has no
reduction otherwise (pad, transpose/layout copy, reshape); a **contraction** if it reduces (a `"local"` accumulator or
tile, or reads of its own output) a product of two input reads (convolution, GEMM: `arith.mulf`, or a dot product of
words packed with bfloat16 pairs or int8 quads); else a **reduction** (pooling, softmax's max and sum).

    func.call @conv_1(%p, %w, %c)    // contraction, only @relu_2 reads %c
    func.call @relu_2(%c, %b, %y)    // elementwise: epilogue_call(module, <call of @conv_1>) is this call
"""

from __future__ import annotations

import weakref
from collections.abc import Container
from dataclasses import dataclass
from enum import IntEnum

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from minimlc.dialects import loop
from minimlc.dialects.llvm_ext import DotBF16Op, DotU8S8Op
from minimlc.lowering.loop.analysis import Affine, sparse_form, walk_ops

_PRODUCTS = (arith.MulfOp, DotBF16Op, DotU8S8Op)
"""The products a contraction reduces: a float multiply, or a dot product of packed words (bfloat16 pairs, int8
quads), whose inputs are the kernel's packed operands."""


class Pattern(IntEnum):
    """How a kernel may fuse, weakest first (TVM's kElemWise/kBroadcast, kInjective, kOutEWiseFusable, kCommReduce)."""

    ELEMENTWISE = 0
    INJECTIVE = 1
    CONTRACTION = 2
    REDUCTION = 3


def kernel_pattern(kernel: func.FuncOp) -> Pattern:
    """The pattern of a kernel `(inputs..., out, extents...)` (see the module docstring)."""
    *inputs, out = [arg for arg in kernel.body.block.args if not is_extent(arg)]
    ops = list(walk_ops(kernel))
    reduces = any(isinstance(op, loop.AllocOp) and op.scope.data == "local" for op in ops) or any(
        isinstance(op, memref.LoadOp) and _parameter(op.memref) is out for op in ops
    )
    if reduces:
        contracts = any(
            isinstance(op, _PRODUCTS)
            and all(
                isinstance(v.owner, memref.LoadOp) and _parameter(v.owner.memref) in inputs for v in (op.lhs, op.rhs)
            )
            for op in ops
        )
        return Pattern.CONTRACTION if contracts else Pattern.REDUCTION
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    # With run-time extents the `dynamic` schedule splits an elementwise loop into a main part and a remainder:
    # one store of the output in each.
    most = len(stores) if len(inputs) + 1 < len(kernel.body.block.args) else 1
    if not 1 <= len(stores) <= most or any(_parameter(store.memref) is not out for store in stores):
        return Pattern.INJECTIVE
    bodies = {store.parent_block(): store for store in stores}
    for load in (op for op in ops if isinstance(op, memref.LoadOp)):
        store = stores[0] if len(stores) == 1 else bodies.get(load.parent_block())
        if len(bodies) != len(stores) or store is None:
            return Pattern.INJECTIVE
        if not reads_along([sparse_form(i) for i in store.indices], [sparse_form(i) for i in load.indices]):
            return Pattern.INJECTIVE
    return Pattern.ELEMENTWISE


def _parameter(buffer: SSAValue) -> SSAValue:
    """The kernel parameter `buffer` is: itself, or the parameter a `loop.extents` gives its run-time extents."""
    return buffer.owner.source if isinstance(buffer.owner, loop.ExtentsOp) else buffer


def is_extent(value: SSAValue) -> bool:
    """Whether a kernel parameter or call argument is a run-time extent (an `index`), not a buffer."""
    return isinstance(value.type, IndexType)


def buffers(call: func.CallOp) -> list[SSAValue]:
    """`call`'s buffer arguments, its output last (a dynamic kernel takes its extents after them)."""
    return [value for value in call.arguments if not is_extent(value)]


def extents(call: func.CallOp) -> list[SSAValue]:
    """`call`'s run-time extent arguments (none for a static kernel)."""
    return [value for value in call.arguments if is_extent(value)]


def _output_position(call: func.CallOp) -> int:
    return max(position for position, value in enumerate(call.arguments) if not is_extent(value))


def reads_along(out_forms: list[Affine | None], read_forms: list[Affine | None]) -> bool:
    """True if each read index is one of the output's indices, in the output's dimension order."""
    position = 0
    for form in read_forms:
        while position < len(out_forms) and (form is None or out_forms[position] != form):
            position += 1
        if position == len(out_forms):
            return False
        position += 1
    return True


def only_reader(call: func.CallOp, calls: Container[Operation]) -> func.CallOp | None:
    """The one kernel call that reads `call`'s output, if the output is an intermediate used by nothing else."""
    if not buffers(call):
        return None
    output = call.arguments[_output_position(call)]
    alloc = output.owner
    if not isinstance(alloc, loop.AllocOp) or alloc.scope.data != "global":
        return None
    readers: set[func.CallOp] = set()
    for use in output.uses:
        if use.operation is call and use.index == _output_position(call):
            continue
        reader = use.operation
        if reader not in calls or not isinstance(reader, func.CallOp) or use.index == _output_position(reader):
            return None
        readers.add(reader)
    return readers.pop() if len(readers) == 1 else None


def epilogue_call(module: ModuleOp, call: func.CallOp) -> func.CallOp | None:
    """The call of an elementwise kernel that alone reads the intermediate output of `call`, a contraction's call:
    what `loop-fuse-kernels` folds into the contraction's write-back (or runs as the next stage of its fused kernel)."""
    block = call.parent_block()
    assert block is not None
    reader = only_reader(call, _CallsIn(block))
    if reader is None:
        return None
    producer, consumer = (kernel_pattern(callee(module, c)) for c in (call, reader))
    return reader if producer is Pattern.CONTRACTION and consumer is Pattern.ELEMENTWISE else None


@dataclass(frozen=True)
class _CallsIn:
    """The calls in `block`, as a container (`op in calls`) without listing the block's ops."""

    block: Block

    def __contains__(self, op: object) -> bool:
        return isinstance(op, func.CallOp) and op.parent is self.block


def callee(module: ModuleOp, call: func.CallOp) -> func.FuncOp:
    """The kernel `call` calls: from an index of the module's functions by name (`SymbolTable.lookup_symbol` walks
    the module's ops each time), rebuilt where it misses or names a function no longer in the module."""
    name = call.callee.string_value()
    functions = _FUNCTIONS.get(module)
    function = functions.get(name) if functions is not None else None
    if function is None or function.parent is not module.body.block or function.sym_name.data != name:
        functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        _FUNCTIONS[module] = functions
        function = functions.get(name)
    if function is None:
        function = SymbolTable.lookup_symbol(module, call.callee)
    assert isinstance(function, func.FuncOp)
    return function


_FUNCTIONS: weakref.WeakKeyDictionary[ModuleOp, dict[str, func.FuncOp]] = weakref.WeakKeyDictionary()
"""Per module, its functions by name, as `callee` last listed them."""
