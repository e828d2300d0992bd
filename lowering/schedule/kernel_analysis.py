"""What the schedule rules read off a kernel: its accumulator and update, output and reduction loops, strides.

A kernel is a private function as te-to-loop extracts it; a reduction accumulates in one `loop.alloc "local"`
scalar, initialised inside the output loops and updated inside the reduction loops:

    loop.for "i0" ... { loop.for "i1" ... {                      // output loops
      memref.store %zero, %acc[]
      loop.for "k2" ... { %s = arith.addf %old, %product; memref.store %s, %acc[] }   // reduction loops
    } }
"""

from __future__ import annotations

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import (
    affine_form,
    call_sites,
    is_bool_buffer,
    loops_of,
    nested_ops,
    walk_ops,
    without_unit_tail,
)
from minimlc.lowering.loop.kernel_patterns import epilogue_call
from minimlc.lowering.strategy.vectorization import MAX_INTERLEAVE


def kernels_of(module: ModuleOp) -> list[func.FuncOp]:
    """The private kernel functions (the ones te-to-loop extracts) of `module`."""
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and op.sym_visibility is not None
        and op.sym_visibility.data == "private"
    ]


def accumulator_of(kernel: func.FuncOp) -> loop.AllocOp | None:
    """The kernel's one local scalar accumulator, or None (no reduction, or more than one)."""
    accs = [op for op in nested_ops(kernel, loop.AllocOp) if op.scope.data == "local"]
    return accs[0] if len(accs) == 1 else None


def updates_of(kernel: func.FuncOp, accumulator: loop.AllocOp, kinds: tuple[type[Operation], ...]) -> list[Operation]:
    """The ops of the given kinds that combine a load of `accumulator` with something else."""
    return [op for op in walk_ops(kernel) if isinstance(op, kinds) and accumulator.result in loaded_buffers(op)]


def loaded_buffers(op: Operation) -> list[SSAValue]:
    """The buffers the operands of `op` are loaded from."""
    return [v.owner.memref for v in op.operands if isinstance(v.owner, memref.LoadOp)]


def product_of(update: Operation) -> arith.MulfOp | None:
    """The product an update adds (`acc + a * b`), or None."""
    return next((v.owner for v in update.operands if isinstance(v.owner, arith.MulfOp)), None)


def sum_of_products(kernel: func.FuncOp) -> tuple[loop.AllocOp, arith.AddfOp, arith.MulfOp] | None:
    """A kernel's one accumulator, its one `acc + a * b` update and that product (GEMM and convolution kernels),
    or None."""
    accumulator = accumulator_of(kernel)
    if accumulator is None:
        return None
    updates = updates_of(kernel, accumulator, (arith.AddfOp,))
    if len(updates) != 1:
        return None
    product = product_of(updates[0])
    if product is None:
        return None
    assert isinstance(updates[0], arith.AddfOp)
    return accumulator, updates[0], product


def product_of_loads(kernel: func.FuncOp) -> tuple[loop.AllocOp, list[memref.LoadOp]] | None:
    """`sum_of_products`' accumulator and the two loads its product multiplies, where both factors are loads (the
    direct and depthwise convolutions), or None."""
    found = sum_of_products(kernel)
    if found is None:
        return None
    accumulator, _, product = found
    reads = [product.lhs.owner, product.rhs.owner]
    if not all(isinstance(read, memref.LoadOp) for read in reads):
        return None
    return accumulator, reads  # pyright: ignore[reportReturnType]


def output_and_reduction_loops(
    kernel: func.FuncOp, accumulator: loop.AllocOp
) -> tuple[list[loop.ForOp], list[loop.ForOp]]:
    """The loops around the accumulator's initialisation (the output loops, outermost first) and all other loops of
    `kernel` (the reduction loops)."""
    init = next(op for op in walk_ops(kernel) if isinstance(op, memref.StoreOp) and op.memref is accumulator.result)
    output_loops: list[loop.ForOp] = []
    parent = init.parent_op()
    while isinstance(parent, loop.ForOp):
        output_loops.insert(0, parent)
        parent = parent.parent_op()
    return output_loops, [lp for lp in loops_of(kernel) if lp not in output_loops]


def unit_stride(target: loop.ForOp) -> bool:
    """True if every access in `target` is to one element or walks the buffer's last dimension with stride 1, or, for
    a read, a stride up to `MAX_INTERLEAVE` (one wide load and a shuffle; trailing dimensions of extent 1 aside; other
    strided accesses vectorize lane by lane, slower than LLVM's scalar loop),
    none at an index read from memory in `target` (a gather: each lane has its own) and none to bool (i1) memory,
    which LLVM packs into bits as vectors."""
    iv = target.induction_var
    ops = walk_ops(target)
    inside = set(ops)
    loaded: dict[SSAValue, bool] = {}
    for access in ops:
        if isinstance(access, memref.LoadOp | memref.StoreOp):
            if is_bool_buffer(access.memref) or any(_read_in(index, inside, loaded) for index in access.indices):
                return False
            strides = [(affine_form(index) or {}).get(iv, 0) for index in access.indices]
            strides = without_unit_tail(access.memref, strides)
            limit = MAX_INTERLEAVE if isinstance(access, memref.LoadOp) else 1
            if any(strides[:-1]) or (strides and not 0 <= strides[-1] <= limit):
                return False
    return True


def _read_in(value: SSAValue, inside: set[Operation], loaded: dict[SSAValue, bool]) -> bool:
    """Whether `value` is computed from a value loaded from memory by one of the ops `inside` (a loop's); `loaded`
    remembers the answer for each value asked (index expressions share their terms)."""
    known = loaded.get(value)
    if known is not None:
        return known
    owner = value.owner
    found = owner in inside and (
        isinstance(owner, memref.LoadOp) or any(_read_in(operand, inside, loaded) for operand in owner.operands)
    )
    loaded[value] = found
    return found


def is_weight_at_every_call(module: ModuleOp, name: str, operand: int) -> bool:
    """True if operand `operand` of kernel `name` is a weight (or a load-time computation) at every call."""
    calls = call_sites(module, name)
    return bool(calls) and all(
        isinstance(call.arguments[operand].owner, loop.WeightOp | loop.PrecomputeOp) for call in calls
    )


def _same_shape(buffer: SSAValue, other: SSAValue) -> bool:
    return (
        isinstance(buffer.type, MemRefType)
        and isinstance(other.type, MemRefType)
        and buffer.type.get_shape() == other.type.get_shape()
    )


def feeds_a_residual_add(module: ModuleOp, kernel: func.FuncOp) -> bool:
    """Whether every call of `kernel` writes an intermediate that one kernel call alone reads, beside another buffer of
    the same shape (of any element type: a bfloat16 build may store the shortcut in bfloat16): a residual add after a
    convolution (ResNet's `relu(conv(x) + shortcut)`; a bias or a ReLU reads no such buffer). `loop-fuse-kernels`
    folds it into the convolution's write-back where the tile walks a block of channel panels (`conv.py`, the
    `channel_block` knob).

        %y = loop.alloc "global" ... ; func.call @conv_16(%x, %w, %y)   // each call of @conv_16 ...
        func.call @add_relu_17(%y, %shortcut, %z)                       // ... read only here, beside %shortcut"""
    sites = call_sites(module, kernel.sym_name.data)
    for call in sites:
        reader = epilogue_call(module, call)  # elementwise: a concatenation reads its inputs side by side, not added
        output = call.arguments[-1]
        if reader is None or not any(a is not output and _same_shape(a, output) for a in reader.arguments[:-1]):
            return False
    return bool(sites)
