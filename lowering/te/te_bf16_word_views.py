"""`te-bf16-word-views`: a 1x1 bfloat16 convolution reads its input's bfloat16 values in place, as words.

A bfloat16 convolution (`graph_to_te/bfloat16_conv.py`) reads its input as i32 words of two channels that a stage of
its own packs ("conv_bf16_input"): channels `w` and `w + C/2` in word `w`, the packed tensor written and read back
between the stages. Where the pack reads its source at its own indices (a 1x1 convolution without padding, channels
last; a strided one's pack holds the corner its stride reads) and pairs channels `2w` and `2w + 1` instead, its words
are the bytes of the source stored in bfloat16, channels last, read as i32. This pass, which bfloat16 builds run
before `te-bf16-activations`, pairs such a convolution's channels so, in its weight words ("conv_bf16_weight",
computed at load time) and its input, and replaces the pack by a `te.view` of the input in bfloat16 (`te-to-loop`
makes it a `loop.view`: no copy). What the view reads is a "bf16_channels" compute of the pack's per-channel value
rounded to bfloat16, over the whole source:

- of a convolution's sums (its bias and ReLU), it is an epilogue that `loop-fuse-kernels` folds into that
  convolution's write-back: the float32 sums are never stored, and the pack's pass disappears;
- of an activation with other readers (a residual), it is a copy that `te-bf16-activations` replaces by the
  activation itself where it stores that in bfloat16 (a "bf16_channels" reader makes it a candidate as a pack does).

Packs of one input (a ResNet stage's first block and its projection shortcut) share one "bf16_channels" compute. An
input already stored in bfloat16 is viewed as it is. The pack's two halves must compute the same function of the
channel (the second reads `C/2` channels on, checked op by op), the weight words' too; a convolution with an odd
channel count (its last word padded), a pack that reads its source at other indices (padding, a stride inside the
pack) and any other form keep their pack.

    %p = te.compute "conv_bf16_input" (%n, %h, %v, %w) -> tensor<1x56x56x128xi32> {
      %a = te.read %x[%n, %h, %v, %w] : tensor<1x56x56x256xf32>
      %c = arith.constant 128 : index
      %k = arith.addi %w, %c : index
      %b = te.read %x[%n, %h, %v, %k] : tensor<1x56x56x256xf32>
      %word = llvmx.pack_bf16 %a, %b : f32 -> i32
      te.yield %word : i32
    }
    // becomes
    %r = te.compute "bf16_channels" (%n, %h, %v, %c) -> tensor<1x56x56x256xbf16> {
      %a = te.read %x[%n, %h, %v, %c] : tensor<1x56x56x256xf32>
      ... (%a rounded to bfloat16) te.yield %h : bf16
    }
    %p = te.view %r : tensor<1x56x56x256xbf16> to tensor<1x56x56x128xi32>
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, TensorType, i32
from xdsl.ir import Block, BlockArgument, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import graph, llvm_ext, te
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.generic.structural_key import structural_key
from minimlc.lowering.graph_to_te.builder import index_constant
from minimlc.lowering.graph_to_te.small_floats import rounded_to_bf16, widened_operand
from minimlc.lowering.te.compute_rewriting import computes_of

INPUT_TAG, WEIGHT_TAG = "conv_bf16_input", "conv_bf16_weight"
CHANNELS_TAG = "bf16_channels"
"""The compute of a pack's per-channel values in bfloat16 that a view replaces the pack by."""


def _word_halves(compute: te.ComputeOp) -> tuple[SSAValue, SSAValue] | None:
    """The low and high values of the word `compute` yields (`llvmx.pack_bf16`), if it yields one."""
    yielded = compute.body.block.last_op
    assert isinstance(yielded, te.YieldOp)
    word = yielded.value.owner
    return (word.low, word.high) if isinstance(word, llvm_ext.PackBF16Op) else None


def _is_shifted_index(value: SSAValue, index: BlockArgument, offset: int) -> bool:
    """Whether `value` is `index + offset` (an `arith.addi` of the index and an index constant)."""
    add = value.owner
    if not isinstance(add, arith.AddiOp):
        return False
    for mine, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        constant = other.owner
        if mine is index and isinstance(constant, arith.ConstantOp):
            attribute = constant.value
            return isinstance(attribute, IntegerAttr) and attribute.value.data == offset
    return False


def _same_but_shifted(low: SSAValue, high: SSAValue, body: Block, index: BlockArgument, offset: int) -> bool:
    """Whether `high` computes what `low` does with the body argument `index` replaced by `index + offset`: op for op
    the same operations, properties and attributes, on the same outside values (tensors, constants)."""
    checked: dict[tuple[SSAValue, SSAValue], bool] = {}

    def same(mine: SSAValue, other: SSAValue) -> bool:
        if mine is index:
            return _is_shifted_index(other, index, offset)
        if not isinstance(mine, OpResult) or mine.op.parent_block() is not body:
            return mine is other
        if not isinstance(other, OpResult) or other.op.parent_block() is not body or mine.index != other.index:
            return False
        if (mine, other) not in checked:
            a, b = mine.op, other.op
            checked[mine, other] = (
                type(a) is type(b)
                and a.properties == b.properties
                and a.attributes == b.attributes
                and len(a.operands) == len(b.operands)
                and all(same(x, y) for x, y in zip(a.operands, b.operands))
            )
        return checked[mine, other]

    return same(low, high)


def _clone_into(value: SSAValue, body: Block, mapping: dict[SSAValue, SSAValue], target: Block) -> SSAValue:
    """`value` of the compute body `body`, recomputed at the end of `target` with `mapping`'s values for the body's
    arguments (the ops it depends on cloned once each)."""
    if value in mapping or not isinstance(value, OpResult) or value.op.parent_block() is not body:
        return mapping.get(value, value)
    for operand in value.op.operands:
        _clone_into(operand, body, mapping, target)
    target.add_op(clone_op(value.op, mapping))
    return mapping[value]


def _only_reader(tensor: SSAValue) -> te.ComputeOp | None:
    """The one compute whose body reads `tensor`, if nothing else uses it."""
    readers = {use.operation.parent_op() for use in tensor.uses}
    if len(readers) != 1 or not all(isinstance(use.operation, te.ReadOp) for use in tensor.uses):
        return None
    reader = readers.pop()
    return reader if isinstance(reader, te.ComputeOp) else None


def _weight_words(conv: te.ComputeOp, pack: te.ComputeOp) -> te.ComputeOp | None:
    """The weight words the convolution `conv` takes the dot product of with the words of `pack`, word `w` of one
    with word `w` of the other (the pack's last index is the weights' second), if only `conv` reads them."""
    yielded = conv.body.block.last_op
    assert isinstance(yielded, te.YieldOp)
    dot = yielded.value.owner
    if not isinstance(dot, llvm_ext.DotBF16Op):
        return None
    reads = [operand.owner for operand in (dot.lhs, dot.rhs)]
    if not all(isinstance(read, te.ReadOp) for read in reads):
        return None
    for data, weight in (reads, reads[::-1]):
        assert isinstance(data, te.ReadOp)
        assert isinstance(weight, te.ReadOp)
        words = weight.tensor.owner
        if data.tensor is pack.result and isinstance(words, te.ComputeOp) and words.tag.data == WEIGHT_TAG:
            same_word = len(weight.indices) > 1 and data.indices[-1] is weight.indices[1]
            return words if same_word and _only_reader(words.result) is conv else None
    return None


def _paired(compute: te.ComputeOp, channel: int) -> tuple[SSAValue, int] | None:
    """The low half of the words `compute` yields and the words' count on axis `channel`, where the high half is the
    low one `count` channels on (channels `w` and `w + count` in word `w`)."""
    halves = _word_halves(compute)
    if compute.extents or compute.dynamic_sizes or halves is None:
        return None
    count = compute.shape[channel]
    index = compute.body.block.args[channel]
    return (halves[0], count) if _same_but_shifted(*halves, compute.body.block, index, count) else None


def _adjacent_pairs(weights: te.ComputeOp, low: SSAValue) -> te.ComputeOp:
    """`weights` (F, C/2, KH, KW) with channels 2w and 2w + 1 in word w: `low` (a function of the channel) at both."""
    block = te.ComputeOp.block_for(weights.shape)
    old = weights.body.block
    halves: list[SSAValue] = []
    for half in (0, 1):
        with ImplicitBuilder(block):
            doubled = arith.MuliOp(block.args[1], index_constant(2)).result
            channel = arith.AddiOp(doubled, index_constant(half)).result if half else doubled
        mapping: dict[SSAValue, SSAValue] = {**dict(zip(old.args, block.args)), old.args[1]: channel}
        halves.append(_clone_into(low, old, mapping, block))
    with ImplicitBuilder(block):
        te.YieldOp(llvm_ext.PackBF16Op(*halves).result)
    return _replacing(weights, block, weights.result.type, WEIGHT_TAG)


def _rounded_channels(pack: te.ComputeOp, low: SSAValue, domain: tuple[int, ...]) -> te.ComputeOp:
    """The per-channel value `low` of `pack`'s words over `domain` and all the words' channels, in bfloat16."""
    shape = [*domain, 2 * pack.shape[-1]]
    block = te.ComputeOp.block_for(shape)
    old = pack.body.block
    value = _clone_into(low, old, dict(zip(old.args, block.args)), block)
    with ImplicitBuilder(block):
        te.YieldOp(rounded_to_bf16(value))
    return _replacing(pack, block, graph.tensor_type(shape, BFloat16Type()), CHANNELS_TAG)


def _replacing(compute: te.ComputeOp, block: Block, result_type: builtin.Attribute, tag: str) -> te.ComputeOp:
    """A compute `tag` of `block` and `result_type` with `compute`'s attributes, inserted before it."""
    new = te.ComputeOp(tag, result_type, block, (), None, [])
    new.attributes |= compute.attributes
    new.result.name_hint = compute.result.name_hint
    Rewriter.insert_op(new, InsertPoint.before(compute))
    return new


def _covers(shape: Sequence[int], pack: te.ComputeOp) -> bool:
    """Whether a channels-last tensor of `shape` holds the pack's pixels (a strided convolution's pack reads a corner)
    and two channels per word."""
    *leading, channels = shape
    return (
        len(shape) == len(pack.shape)
        and all(a >= b for a, b in zip(leading, pack.shape))
        and channels == 2 * pack.shape[-1]
    )


def _stored_source(low: SSAValue, pack: te.ComputeOp) -> SSAValue | None:
    """The bfloat16 tensor whose value `low` widens, read at the pack's own indices, if it is that."""
    narrow = widened_operand(low)
    read = narrow.owner if narrow is not None else None
    if not isinstance(read, te.ReadOp) or list(read.indices) != list(pack.body.block.args):
        return None
    source_type = read.tensor.type
    assert isinstance(source_type, TensorType)
    return read.tensor if _covers(source_type.get_shape(), pack) else None


def _in_place_domain(low: SSAValue, pack: te.ComputeOp) -> tuple[int, ...] | None:
    """Where every tensor `low` reads is read at the pack's indices in order (or at its channel alone: a bias), and
    those read so have one batch and spatial shape that covers the pack (`_covers`): that shape, over which the
    per-channel value is elementwise."""
    body = pack.body.block
    indices, channel = list(body.args), body.args[-1]
    shapes: set[tuple[int, ...]] = set()
    seen: set[SSAValue] = set()
    pending = [low]
    while pending:
        value = pending.pop()
        if value in seen or not isinstance(value, OpResult) or value.op.parent_block() is not body:
            continue
        seen.add(value)
        op = value.op
        if isinstance(op, te.ReadOp):
            if list(op.indices) == indices and isinstance(op.tensor.type, TensorType):
                shapes.add(tuple(op.tensor.type.get_shape()))
            elif list(op.indices) != [channel]:
                return None
        pending.extend(op.operands)
    if len(shapes) != 1 or not _covers(shape := shapes.pop(), pack):
        return None
    return shape[:-1]


def _shared(channels: te.ComputeOp, made: dict[tuple[object, ...], te.ComputeOp]) -> te.ComputeOp:
    """`channels` (a new "bf16_channels" compute), or one made before that computes the same from the same tensors
    (the packs of two 1x1 convolutions reading one input: a ResNet stage's first block and its projection), which
    then replaces it."""
    tensors = [op.tensor for op in channels.body.walk() if isinstance(op, te.ReadOp)]
    key = (structural_key(channels, tensors), *tensors)
    if (earlier := made.setdefault(key, channels)) is not channels:
        Rewriter.erase_op(channels)
    return earlier


def view_words(pack: te.ComputeOp, made: dict[tuple[object, ...], te.ComputeOp]) -> bool:
    """Replace `pack` (a "conv_bf16_input") by a view of its values in bfloat16 where it qualifies (see the module
    docstring), sharing the "bf16_channels" computes `made` holds; whether it did."""
    conv = _only_reader(pack.result)
    weights = _weight_words(conv, pack) if conv is not None else None
    paired, weight_pairs = _paired(pack, len(pack.shape) - 1), _paired(weights, 1) if weights is not None else None
    if weights is None or paired is None or weight_pairs is None or weight_pairs[1] != paired[1]:
        return False
    low = paired[0]
    source = _stored_source(low, pack)
    domain = _in_place_domain(low, pack) if source is None else None
    if source is None and domain is None:
        return False
    new_weights = _adjacent_pairs(weights, weight_pairs[0])
    Rewriter.replace_op(weights, [], [new_weights.result])
    if source is None:
        assert domain is not None
        source = _shared(_rounded_channels(pack, low, domain), made).result
    source_type = source.type
    assert isinstance(source_type, TensorType)
    words = graph.tensor_type([*source_type.get_shape()[:-1], pack.shape[-1]], i32)
    view = te.ViewOp(source, words)  # pyright: ignore[reportArgumentType]
    view.result.name_hint = pack.result.name_hint
    Rewriter.replace_op(pack, view, [view.result])
    return True


@dataclass(frozen=True)
class TeBF16WordViewsPass(ModulePass):
    """Let 1x1 bfloat16 convolutions read their input's bfloat16 values in place (see the module docstring)."""

    name = "te-bf16-word-views"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        made: dict[tuple[object, ...], te.ComputeOp] = {}
        for compute in computes_of(op):
            if compute.tag.data == INPUT_TAG:
                view_words(compute, made)
