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

Which computes: every group-1 convolution ("conv", and the NCHW output of an im2col GEMM, "conv_output", or of an
integer convolution, "conv_integer_output"), every depthwise convolution whose channels fill the `depthwise`
schedule's vectors (it vectorizes over them; its input is read channels-last, from a copy if that input stays NCHW:
te-inline folds the padding and the producers, such as ShuffleNet's concatenation and channel shuffle, into that
copy), and then,
in program order, every image compute (rank 4, more than one pixel) whose image reads are all of channels-last
tensors, each at the compute's own batch and its channel plus a constant (elementwise ops, padding, channel slices,
and pooling: reductions over one input; a concatenation, whose reads are that channel offset clamped into each input
and selected by channel; not a reduction across channels such as LRN's window sum, nor what reads it). Of those,
only the ones that reach a convolution's channels-last copy (`conv_input_nhwc`, from te-conv-layout, or the integer
convolution's packed input `conv_integer_input`) through channels-last computes, or an im2col GEMM reading them
directly (a 1x1 convolution's A operand, then row-major), or a global pool (a reduction to one pixel per channel,
itself then stored [n, 1, 1, c]: the same bytes, its channels innermost for the pool rule), stay channels-last: a
chain that ends in NCHW readers (a model's output, a channel shuffle's reshape) would only move its transposition to
the end. Tensors of one pixel per
channel stay as they are (both layouts are the same bytes). A channels-last copy of a tensor that is now
channels-last is that tensor. A channels-last result used other than by a read (a function result) is copied back
to NCHW once.
A run-time batch stays axis 0 in either layout (its extent operand unchanged: `conv_batch.py`).
Run after te-conv-layout and before te-inline.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import build_compute, read
from minimlc.lowering.strategy.conv import channel_vectors
from minimlc.lowering.target import Target, target_of
from minimlc.lowering.te.conv_batch import batch_extent, has_only_a_run_time_batch
from minimlc.lowering.te.te_conv_layout import COPY_TAG

CHANNELS_LAST = (0, 2, 3, 1)
"""Dimension d of a channels-last tensor is dimension `CHANNELS_LAST[d]` of its NCHW form."""
NCHW_POSITION = (0, 3, 1, 2)
"""Dimension d of an NCHW tensor is dimension `NCHW_POSITION[d]` of its channels-last form."""
CONVOLUTIONS = ("conv", "conv_output", "conv_integer_output", "depthwise_conv")
"""Tags of the computes stored channels-last whatever their inputs (a depthwise convolution: where its channels
fill whole vectors of the `depthwise` schedule, which vectorizes over them)."""
GEMM_TAG = "conv_gemm"
"""Tag of an im2col GEMM: one reading an image directly (a 1x1 convolution's A operand) reads it channels-last as a
row-major [pixels, channels] matrix."""
CHANNELS_LAST_READERS = (COPY_TAG, "conv_integer_input", "conv_bf16_input", GEMM_TAG)
"""Tags of the computes that read a convolution input channels-last (a chain reaching one stays channels-last):
te-conv-layout's copy, the integer convolution's words of four channels (`graph_to_te/quantized.py`), the bfloat16
convolution's words of two (`graph_to_te/bfloat16_conv.py`), and an im2col GEMM."""
CONCAT_TAG = "concat"
"""The tag of a concatenation (graph-to-te's), stored channels-last when all its inputs are."""


def _offset_of(value: SSAValue, index: SSAValue) -> bool:
    """Whether `value` is block argument `index` plus or minus constants (a channel slice's offset)."""
    while value is not index:
        op = value.owner
        if not isinstance(op, arith.AddiOp | arith.SubiOp):
            return False
        constant = [v for v in op.operands if isinstance(v.owner, arith.ConstantOp)]
        if len(constant) != 1 or (isinstance(op, arith.SubiOp) and constant[0] is not op.rhs):
            return False
        value = op.lhs if constant[0] is op.rhs else op.rhs
    return True


def _clamped_offset_of(value: SSAValue, index: SSAValue) -> bool:
    """Whether `value` is `index` plus a constant, clamped between constants (a concatenation's read of one input)."""
    while isinstance(op := value.owner, arith.MinSIOp | arith.MaxSIOp):
        constant = [v for v in op.operands if isinstance(v.owner, arith.ConstantOp)]
        if len(constant) != 1:
            return False
        value = op.lhs if constant[0] is op.rhs else op.rhs
    return _offset_of(value, index)


def _keeps_layout(compute: te.ComputeOp, reading: te.ReadOp) -> bool:
    """Whether `reading` (a rank-4 read in `compute`) takes the compute's own batch index and its channel index plus
    a constant: elementwise ops, pads, channel slices, pools; or, in a concatenation, that channel offset clamped
    into the input's channels. Channels-last, a concatenation's choice among its inputs is made per channel, along
    the vector lanes: `loop-partition` (the concat schedule rule) splits the channel loop at the input boundaries,
    where each piece reads one input contiguously."""
    batch, channel = compute.output_indices[:2]
    indices = reading.indices
    if compute.tag.data == CONCAT_TAG:
        return indices[0] is batch and _clamped_offset_of(indices[1], channel)
    return indices[0] is batch and _offset_of(indices[1], channel)


def _reads(compute: te.ComputeOp) -> list[te.ReadOp]:
    return [op for op in compute.body.walk() if isinstance(op, te.ReadOp)]


def _joins(compute: te.ComputeOp, channels_last: set[SSAValue], target: Target) -> bool:
    """Whether `compute` is stored channels-last, given the tensors before it that are."""
    if not _is_image(compute.result) or compute.tag.data == COPY_TAG or not has_only_a_run_time_batch(compute):
        return False
    if compute.tag.data == "depthwise_conv":
        return bool(channel_vectors(compute.shape[1], target))
    if compute.tag.data in CONVOLUTIONS:
        return compute.tag.data != "conv" or len(compute.extents) == 3
    reads = _reads(compute)
    if compute.extents and len({r.tensor for r in reads}) != 1:
        return False
    images = [r for r in reads if _is_image(r.tensor)]
    return bool(images) and all(r.tensor in channels_last and _keeps_layout(compute, r) for r in images)


def joins_channels_last(compute: te.ComputeOp, target: Target, known: dict[te.ComputeOp, bool] | None = None) -> bool:
    """Whether `compute` would be stored channels-last by its inputs alone (before the pruning of chains that reach no
    convolution): what te-conv-im2col asks of a concatenation before te-channels-last runs. `known`: the answers
    for its producers so far (each compute is visited once)."""
    known = {} if known is None else known
    if compute not in known:
        channels_last: set[SSAValue] = set()
        for reading in _reads(compute):
            producer = reading.tensor.owner
            if isinstance(producer, te.ComputeOp) and joins_channels_last(producer, target, known):
                channels_last.add(reading.tensor)
        known[compute] = _joins(compute, channels_last, target)
    return known[compute]


def _is_image(tensor: SSAValue) -> bool:
    """Whether `tensor` is a run-time image: rank 4, more than one pixel per channel, not a weight (and of static
    shape but for its batch: the layout change is planned per image)."""
    assert isinstance(tensor.type, TensorType)
    shape = tensor.type.get_shape()
    if DYNAMIC_INDEX in shape[1:]:
        return False
    return len(shape) == 4 and shape[2] * shape[3] > 1 and not isinstance(tensor.owner, graph.WeightOp)


def _readers(compute: te.ComputeOp) -> list[te.ComputeOp]:
    """The computes whose bodies read `compute`, each once."""
    readers = [use.operation.parent_op() for use in compute.result.uses if isinstance(use.operation, te.ReadOp)]
    return list(dict.fromkeys(r for r in readers if isinstance(r, te.ComputeOp)))


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
    result = te.ComputeOp(
        compute.tag.data, graph.tensor_type(new_shape, element), block, compute.extents, combiner, compute.dynamic_sizes
    )
    result.attributes |= compute.attributes
    result.result.name_hint = compute.result.name_hint
    return result


def _nchw_copy(compute: te.ComputeOp) -> te.ComputeOp:
    tensor = compute.result
    assert isinstance(tensor.type, TensorType)
    _, h, w, c = tensor.type.get_shape()
    return build_compute(
        "channels_last_to_nchw",
        (batch_extent(compute), c, h, w),
        lambda i: read(tensor, [i[0], i[2], i[3], i[1]]),
        element_type=tensor.type.element_type,
    )


def _convert_function(function: func.FuncOp, target: Target) -> None:
    rewriter = Rewriter()
    channels_last: set[SSAValue] = set()
    chosen = []
    for op in function.body.block.ops:
        if isinstance(op, te.ComputeOp) and _joins(op, channels_last, target):
            channels_last.add(op.result)
            chosen.append(op)
    kept = _after_integer_convolutions(chosen)
    pools: set[te.ComputeOp] = set()
    for compute in reversed(chosen):
        ending = [reader for reader in _readers(compute) if _pools_to_one_pixel(reader, compute)]
        pools.update(ending)
        if ending or any(reader.tag.data in CHANNELS_LAST_READERS or reader in kept for reader in _readers(compute)):
            kept.add(compute)
    chosen = [op for op in function.body.block.ops if op in kept or op in pools]
    for compute in chosen:
        if compute.tag.data == "depthwise_conv":
            _read_input_channels_last(compute, kept, rewriter)
    for compute in chosen:
        new = _stored_channels_last(compute)
        rewriter.insert_op(new, InsertPoint.before(compute))
        back: te.ComputeOp | None = None
        for use in list(compute.result.uses):
            user = use.operation
            if isinstance(user, te.ReadOp):
                indices = [user.indices[d] for d in CHANNELS_LAST]
                rewriter.replace_op(user, te.ReadOp(new.result, indices))
                continue
            if back is None:
                back = _nchw_copy(new)
                rewriter.insert_op(back, InsertPoint.after(new))
            user.operands[use.index] = back.result
        rewriter.erase_op(compute)
        for copy in _readers(new):
            if copy.tag.data == COPY_TAG and _copies_unchanged(copy):
                copy.result.replace_all_uses_with(new.result)
                rewriter.erase_op(copy)


def _pools_to_one_pixel(reader: te.ComputeOp, compute: te.ComputeOp) -> bool:
    """Whether `reader` reduces `compute`'s image to one pixel per channel, reading it at its own batch and channel
    (a global pool): its result is the same bytes in either layout, so a chain ending there needs no transposition,
    and stored as [n, 1, 1, c] its innermost loop is the channels, which the pool rule vectorizes."""
    assert isinstance(reader.result.type, TensorType)
    shape = reader.result.type.get_shape()
    reads = _reads(reader)
    return (
        bool(reader.extents)
        and has_only_a_run_time_batch(reader)
        and len(shape) == 4
        and shape[2] * shape[3] == 1
        and all(r.tensor is compute.result and _keeps_layout(reader, r) for r in reads)
    )


def _after_integer_convolutions(chosen: list[te.ComputeOp]) -> set[te.ComputeOp]:
    """The chosen computes that read an integer convolution's output, directly or through chosen computes: they
    stay channels-last to the chain's end. Their NCHW order would read the convolution's i32 output across its
    channels, one scalar load per vector lane (a quarter of the quantized ResNet's time), where a channels-last
    chain ends in one copy of 8-bit values back to NCHW, or in a pool's read."""
    after: set[te.ComputeOp] = set()
    for compute in chosen:
        sources = {read.tensor.owner for read in _reads(compute)}
        if compute.tag.data == "conv_integer_output" or any(source in after for source in sources):
            after.add(compute)
    return after


def _read_input_channels_last(depthwise: te.ComputeOp, kept: set[te.ComputeOp], rewriter: Rewriter) -> None:
    """Make a depthwise convolution stored channels-last read its input channels-last too: the input itself if it
    is stored so, else a channels-last copy of it, into which te-inline folds its padding and elementwise producers
    (ShuffleNet's channel shuffle among them: a permutation of each pixel's channels)."""
    (data,) = [r for r in _reads(depthwise) if _keeps_layout(depthwise, r)]
    if data.tensor.owner in kept:
        return
    x = data.tensor
    assert isinstance(x.type, TensorType)
    _, c, h, w = x.type.get_shape()
    copy = build_compute(
        COPY_TAG,
        (batch_extent(depthwise), h, w, c),
        lambda i: read(x, [i[0], i[3], i[1], i[2]]),
        element_type=x.type.element_type,
    )
    rewriter.insert_op(copy, InsertPoint.before(depthwise))
    indices = [data.indices[d] for d in CHANNELS_LAST]
    rewriter.replace_op(data, te.ReadOp(copy.result, indices))


def _copies_unchanged(compute: te.ComputeOp) -> bool:
    """Whether `compute`'s body is one read at its own indices, yielded as it is (a te-conv-layout copy of a tensor
    that is now channels-last)."""
    body = list(compute.body.block.ops)
    if compute.extents or len(body) != 2 or not isinstance(body[0], te.ReadOp):
        return False
    return tuple(body[1].operands) == (body[0].result,) and tuple(body[0].indices) == tuple(compute.output_indices)


@dataclass(frozen=True)
class TeChannelsLastPass(ModulePass):
    """Store convolutions and the image computes after them channels-last (see the module docstring)."""

    name = "te-channels-last"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _convert_function(function, target_of(op))
