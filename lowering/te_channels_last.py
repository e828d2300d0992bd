"""`te-channels-last`: store convolution outputs, and the image computes that follow them, channels-last (NHWC).

A direct convolution vectorized over output channels writes a register tile of (columns x channels); into an NCHW
output that tile goes back through a transposing copy, and the next convolution's input is transposed back to
channels-last (`te-conv-layout`). ONNX Runtime keeps a blocked channels-last layout between its convolutions
instead; this pass does the same. A compute stored channels-last has its output indices reordered to
`(n, h, w, c)`, and every read of it is permuted to match, so the values are the same and only the memory order
(and the loop order te-to-loop gives the compute) changes:

    %y = te.compute "conv" (%n, %f, %h, %w) reduce sum (...) -> tensor<1x64x56x56xf32> {...}
    %r = te.compute "relu" (%a, %b, %c, %d) -> tensor<1x64x56x56xf32> { %v = te.read %y[%a, %b, %c, %d] ... }
    // becomes
    %y = te.compute "conv" (%n, %h, %w, %f) reduce sum (...) -> tensor<1x56x56x64xf32> {...}
    %r = te.compute "relu" (%a, %c, %d, %b) -> tensor<1x56x56x64xf32> { %v = te.read %y[%a, %c, %d, %b] ... }

Which computes: every group-1 convolution ("conv", and the NCHW output of an im2col GEMM, "conv_output"), and then,
in program order, every image compute (rank 4, more than one pixel) that reads a channels-last tensor at its own
batch and channel (elementwise ops, padding, concatenation, slices, and pooling: reductions over one input). A
depthwise convolution stays NCHW (its schedule vectorizes along rows, reading weights per channel), as do
tensors of one pixel per channel, whose two layouts are the same bytes. A channels-last copy made for a
convolution (`conv_input_nhwc`, from te-conv-layout) of a tensor that is now channels-last is that tensor. A
channels-last result used other than by a read (returned from the function) is copied back to NCHW once.
Run after te-conv-layout and before te-inline.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import te
from minimlc.lowering.te_builder import build_compute, read

CHANNELS_LAST = (0, 2, 3, 1)
"""Dimension d of a channels-last tensor is dimension `CHANNELS_LAST[d]` of its NCHW form."""
NCHW_POSITION = (0, 3, 1, 2)
"""Dimension d of an NCHW tensor is dimension `NCHW_POSITION[d]` of its channels-last form."""
CONVOLUTIONS = ("conv", "conv_output")
"""Tags of the computes stored channels-last whatever their inputs."""
CHANNELS_LAST_COPY = "conv_input_nhwc"
"""Tag of te-conv-layout's channels-last copy of a convolution's input."""


def _is_image(compute: te.ComputeOp) -> bool:
    shape = compute.shape
    return len(shape) == 4 and shape[2] * shape[3] > 1


def _depends_only_on(value: SSAValue, index: SSAValue, block_args: set[SSAValue]) -> bool:
    """Whether `value` is computed from block argument `index` (and constants) alone."""
    pending, seen = [value], False
    while pending:
        current = pending.pop()
        if current is index:
            seen = True
        elif current in block_args:
            return False
        elif isinstance(current.owner, Operation):
            pending.extend(current.owner.operands)
    return seen


def _keeps_layout(compute: te.ComputeOp, reading: te.ReadOp) -> bool:
    """Whether `reading` (a rank-4 read in `compute`) takes the compute's own batch index and a channel computed
    from the compute's channel index alone: elementwise ops, pads, slices, concatenations, pools."""
    batch, channel = compute.output_indices[:2]
    args = set(compute.body.block.args)
    indices = reading.indices
    return indices[0] is batch and _depends_only_on(indices[1], channel, args)


def _reads(compute: te.ComputeOp) -> list[te.ReadOp]:
    return [op for op in compute.body.walk() if isinstance(op, te.ReadOp)]


def _joins(compute: te.ComputeOp, channels_last: set[SSAValue]) -> bool:
    """Whether `compute` is stored channels-last, given the tensors before it that are."""
    if not _is_image(compute) or compute.tag.data == CHANNELS_LAST_COPY:
        return False
    if compute.tag.data in CONVOLUTIONS:
        return compute.tag.data != "conv" or len(compute.extents) == 3
    reads = _reads(compute)
    if compute.extents and len({r.tensor for r in reads}) != 1:
        return False
    return any(r.tensor in channels_last and _keeps_layout(compute, r) for r in reads)


def _stored_channels_last(compute: te.ComputeOp) -> te.ComputeOp:
    """`compute` with its output indices in (n, h, w, c) order; the body moves over."""
    shape = compute.shape
    old = compute.body.block
    new_shape = tuple(shape[d] for d in CHANNELS_LAST)
    block = te.ComputeOp.block_for(new_shape, compute.extents)
    for position, arg in enumerate(old.args):
        target = NCHW_POSITION[position] if position < 4 else position
        arg.replace_all_uses_with(block.args[target])
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
    combiner = compute.combiner.data if compute.combiner is not None else None
    assert isinstance(compute.result.type, TensorType)
    element = compute.result.type.element_type
    result = te.ComputeOp(compute.tag.data, TensorType(element, new_shape), block, compute.extents, combiner)
    result.attributes |= compute.attributes
    result.result.name_hint = compute.result.name_hint
    return result


def _nchw_copy(tensor: SSAValue) -> te.ComputeOp:
    n, h, w, c = TensorType.get_shape(tensor.type)  # type: ignore[arg-type]
    assert isinstance(tensor.type, TensorType)
    return build_compute(
        "channels_last_to_nchw",
        (n, c, h, w),
        lambda i: read(tensor, [i[0], i[2], i[3], i[1]]),
        element_type=tensor.type.element_type,
    )


def _convert_function(function: func.FuncOp) -> None:
    rewriter = Rewriter()
    channels_last: set[SSAValue] = set()
    chosen = []
    for op in function.body.block.ops:
        if isinstance(op, te.ComputeOp) and _joins(op, channels_last):
            channels_last.add(op.result)
            chosen.append(op)
    converted: set[SSAValue] = set()
    for compute in chosen:
        new = _stored_channels_last(compute)
        rewriter.insert_op(new, InsertPoint.before(compute))
        converted.add(new.result)
        back: te.ComputeOp | None = None
        for use in list(compute.result.uses):
            user = use.operation
            if isinstance(user, te.ReadOp):
                indices = [user.indices[d] for d in CHANNELS_LAST]
                rewriter.replace_op(user, te.ReadOp(new.result, indices))
                continue
            if back is None:
                back = _nchw_copy(new.result)
                rewriter.insert_op(back, InsertPoint.after(new))
            user.operands[use.index] = back.result
        rewriter.erase_op(compute)
    for op in list(function.body.block.ops):
        if isinstance(op, te.ComputeOp) and (source := _is_copy_of_converted(op, converted)) is not None:
            op.result.replace_all_uses_with(source)
            rewriter.erase_op(op)


def _is_copy_of_converted(compute: te.ComputeOp, converted: set[SSAValue]) -> SSAValue | None:
    """The channels-last tensor `compute` copies unchanged (a te-conv-layout copy of a converted tensor)."""
    if compute.tag.data != CHANNELS_LAST_COPY or compute.extents:
        return None
    body = list(compute.body.block.ops)
    if len(body) != 2 or not isinstance(body[0], te.ReadOp) or tuple(body[1].operands) != (body[0].result,):
        return None
    source = body[0]
    if source.tensor not in converted or tuple(source.indices) != tuple(compute.output_indices):
        return None
    return source.tensor


class TeChannelsLastPass(ModulePass):
    """Store convolutions and the image computes after them channels-last (see the module docstring)."""

    name = "te-channels-last"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _convert_function(function)
