"""A kernel call's buffers and run-time extents, told apart by type: a kernel takes its buffers (inputs, then its
output) and, in a dynamic model, its buffers' run-time extents as trailing `index` parameters
(`docs/design/symbolic_shapes.md`). Used by `loop-fuse-kernels`; a static kernel has no extents, and its output is
its last parameter as before.

    func.call @matmul_0(%x, %w, %m, %batch, %seq)   // buffers %x %w, output %m, extents %batch %seq
    func.call @relu_1(%m, %b, %y, %batch, %seq)     // only_reader(<call of @matmul_0>, calls) is this call
"""

from __future__ import annotations

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import sparse_form
from minimlc.lowering.loop.kernel_patterns import Pattern, kernel_pattern, reads_along


def is_extent(value: SSAValue) -> bool:
    """Whether a kernel parameter or call argument is a run-time extent (an `index`), not a buffer."""
    return isinstance(value.type, IndexType)


def output_position(call: func.CallOp) -> int:
    """The position of `call`'s output among its arguments: its last buffer."""
    return max(position for position, value in enumerate(call.arguments) if not is_extent(value))


def buffers(call: func.CallOp) -> list[SSAValue]:
    """`call`'s buffer arguments, its output last."""
    return [value for value in call.arguments if not is_extent(value)]


def extents(call: func.CallOp) -> list[SSAValue]:
    """`call`'s run-time extent arguments (none for a static kernel)."""
    return [value for value in call.arguments if is_extent(value)]


def only_reader(call: func.CallOp, calls: set[func.CallOp]) -> func.CallOp | None:
    """The one kernel call that reads `call`'s output, if the output is an intermediate used by nothing else."""
    if not buffers(call):
        return None
    output = call.arguments[output_position(call)]
    alloc = output.owner
    if not isinstance(alloc, loop.AllocOp) or alloc.scope.data != "global":
        return None
    readers: set[Operation] = set()
    for use in output.uses:
        if use.operation is call and use.index == output_position(call):
            continue
        if use.operation not in calls:
            return None
        reader = use.operation
        assert isinstance(reader, func.CallOp)
        if use.index == output_position(reader):
            return None
        readers.add(reader)
    if len(readers) != 1:
        return None
    reader = readers.pop()
    assert isinstance(reader, func.CallOp)
    return reader


def pattern(kernel: func.FuncOp) -> Pattern:
    """`kernel_pattern` of `kernel`, whose buffers may take trailing extents: it is asked on a copy whose accesses
    read the parameters themselves (not their `loop.extents`) and whose extents come first, so its output is last.
    A dynamic kernel's elementwise nest split into a main loop and a remainder (the `dynamic` schedule vectorizes
    `0 to 10` as `0 to 8 step 8` and `8 to 10`) has one store per part: it is elementwise if each part is."""
    block = kernel.body.block
    if not any(is_extent(arg) for arg in block.args):
        return kernel_pattern(kernel)
    copy = kernel.clone()
    body = copy.body.block
    for op in [op for op in body.ops if isinstance(op, loop.ExtentsOp)]:
        op.result.replace_all_uses_with(op.source)
        body.erase_op(op)
    for position, arg in enumerate([arg for arg in body.args if is_extent(arg)]):
        moved = body.insert_arg(arg.type, position)
        arg.replace_all_uses_with(moved)
        body.erase_arg(arg)
    found = kernel_pattern(copy)
    return Pattern.ELEMENTWISE if found == Pattern.INJECTIVE and _parts_elementwise(copy) else found


def _parts_elementwise(kernel: func.FuncOp) -> bool:
    """Whether every store of `kernel` (no reduction) writes its output, and each store's body reads every input at
    that store's indices or at an ordered subset of them."""
    out = kernel.body.block.args[-1]
    ops = list(kernel.walk())
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    if not stores or any(store.memref is not out for store in stores):
        return False
    bodies = {store.parent_block(): store for store in stores}
    if len(bodies) != len(stores):
        return False
    for load in (op for op in ops if isinstance(op, memref.LoadOp)):
        store = bodies.get(load.parent_block())
        if store is None:
            return False
        if not reads_along([sparse_form(i) for i in store.indices], [sparse_form(i) for i in load.indices]):
            return False
    return True


