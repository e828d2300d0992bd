"""Inline elementwise `te.compute`s into the computes that read them (TVM `compute_inline`).

The rule is TVM's, kept simple on purpose: a compute without reduction axes whose every use is a
`te.read` directly inside another `te.compute` body is substituted into each such read (a clone of
its body with its index arguments replaced by the read's indices) and then erased. Applied to a
fixpoint, so elementwise chains collapse into their final consumer.

Reduction computes are never inlined: they stay kernels. An elementwise producer is inlined into a reduction
consumer only when each read's indices depend on every loop index of the consumer, so that no producer element is
computed twice: `sum_k exp(x[i, k] - m[i])` fuses, but a ReLU feeding a GEMM (read at `[i, k]` by a compute over
`(i, j, k)`) stays its own kernel instead of being recomputed for every `j`; and no read coordinate may combine
several consumer indices: a producer read through an overlapping window (`x[i + k]` in a pool) would be recomputed
for every window covering an element, and a -inf pad inlined into a channels-first max pool would put a clamp and a
select that differs per lane back at every window tap. A constant pad that leaves the innermost dimension alone (a
channels-last pool's) is the exception: it is inlined into a max reduction's window taps (`is_padded_row_tap`), its
test one value per row of channels, instead of copying the input padded (ResNet-50's 3x3/2 stem pool over
112x112x64, pad and pool 0.44 ms, read through its padding 0.17 ms; Zen 4). Into elementwise consumers producers are
inlined, as TVM does with injective ops, when there is one consumer: a producer read by several computes (a residual
sum that feeds both the next block and the next residual add) stays its own kernel, written once, instead of being
recomputed by every consumer (and, down a residual chain, by every consumer of those consumers). The exception is a
producer of a few cheap ops read by several stages of one kernel group (attention's scaled and masked logits, read by
its softmax's max and exp): the group runs its stages row by row, so each stage recomputes the row in cache instead of
the whole tensor going to memory and back (`_cheap_for_one_group`; ViT 0.97x in bf16, 0.98x in float32).
A row view (a slice, or a copy at an offset: each coordinate one of its indices plus a constant, the innermost its
innermost, `is_row_view`) is inlined into every consumer, reductions and several consumers included: read in place
it costs nothing, and the consumer's innermost reads stay contiguous (ShuffleNet's grouped 1x1 convolutions read
their group's channels straight from the shuffled tensor instead of copying them out first).
A stage of a multi-stage kernel (`te.KERNEL_GROUP`: softmax's exp, a normalisation's last step) is never inlined:
its group is one kernel, scheduled as a whole. A channels-last copy of a convolution's input
(`conv_input_nhwc`) is never inlined: it exists to be read channels-last (by Winograd's input transform, an
elementwise consumer, too). A compute used anywhere else (returned from the function, for instance) is materialised
and stays. A compute of weights alone is not inlined into one that reads run-time data: as
its own kernel it is computed once, at load time (see `loop-hoist-constants`). A compute that reads no tensor at all
(a `graph.constant` fill) is a literal and is always inlined. No inlining copies more than `MAX_INLINED_OPS` ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from minimlc.dialects import graph, te
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.te.compute_rewriting import computes_of
from minimlc.lowering.te.te_conv_layout import COPY_TAG


def _is_read_in_compute(user: Operation) -> bool:
    return isinstance(user, te.ReadOp) and isinstance(user.parent_op(), te.ComputeOp)


def _recompute_free(read: te.ReadOp) -> bool:
    """Whether inlining at `read` computes each producer element once: always for elementwise consumers, and for
    reductions when the read's indices depend on every index of the consumer that takes more than one value (a
    softmax's row max `[n, h, q, 0]` reads the logits at `[n, h, q, k]`)."""
    consumer = read.parent_op()
    assert isinstance(consumer, te.ComputeOp)
    if not consumer.extents:
        return True
    indices = set(consumer.body.block.args)
    missing = {
        index for index, extent in zip(consumer.body.block.args, (*consumer.shape, *consumer.extents)) if extent != 1
    }
    for coordinate in read.indices:
        used = _indices_used(coordinate, indices)
        if len(used) > 1:
            return False
        missing -= used
    return not missing


def _indices_used(value: SSAValue, indices: set[SSAValue]) -> set[SSAValue]:
    """The consumer indices `value` is computed from."""
    used: set[SSAValue] = set()
    pending = [value]
    while pending:
        value = pending.pop()
        if value in indices:
            used.add(value)
        elif isinstance(value.owner, Operation):
            pending.extend(value.owner.operands)
    return used


def is_row_view(producer: te.ComputeOp) -> bool:
    """Whether `producer` only moves data: its body reads one tensor at coordinates that are each a constant or one of
    its indices plus a constant, the innermost one its own innermost index (a slice, or a copy at an offset). Read
    through in place, such a compute costs its consumers nothing and keeps their innermost reads contiguous, so it is
    inlined into any consumer, reductions included, however many there are:

        %s = te.compute "slice" (%i, %c) -> tensor<8x6xf32> { %o = arith.addi %c, %six ; te.read %x[%i, %o] ... }
    """
    *body, yielded = producer.body.block.ops
    reads = [op for op in body if isinstance(op, te.ReadOp)]
    if len(reads) != 1 or not isinstance(yielded, te.YieldOp) or yielded.value is not reads[0].result:
        return False
    if any(not isinstance(op, te.ReadOp | arith.ConstantOp | arith.AddiOp) for op in body):
        return False
    indices = list(producer.output_indices)

    def base_index(value: SSAValue) -> SSAValue | None:
        """The producer index `value` offsets by a constant (`value` itself when it is one), else None."""
        if value in indices:
            return value
        owner = value.owner
        if isinstance(owner, arith.AddiOp):
            operands = [owner.lhs, owner.rhs]
            constants = [o for o in operands if isinstance(o.owner, arith.ConstantOp)]
            others = [o for o in operands if o not in constants]
            if len(constants) == 1 and len(others) == 1 and others[0] in indices:
                return others[0]
        return None

    coordinates = list(reads[0].indices)
    if not indices or not coordinates or base_index(coordinates[-1]) is not indices[-1]:
        return False
    return all(isinstance(c.owner, arith.ConstantOp) or base_index(c) is not None for c in coordinates)


def is_constant(tensor: SSAValue, known: dict[SSAValue, bool] | None = None) -> bool:
    """Whether `tensor` is a weight or computed from weights alone; `known` remembers the answers for tensors seen
    before (a pass asking about every compute would otherwise walk each one's producers back to the inputs)."""
    known = {} if known is None else known
    if tensor in known:
        return known[tensor]
    owner = tensor.owner
    if isinstance(owner, graph.WeightOp):
        answer = True
    elif not isinstance(owner, te.ComputeOp):
        answer = False
    else:
        answer = all(is_constant(op.tensor, known) for op in owner.body.walk() if isinstance(op, te.ReadOp))
    known[tensor] = answer
    return answer


CHEAP_OPS = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.NegfOp,
    arith.SelectOp,
    arith.CmpiOp,
    arith.AndIOp,
    arith.OrIOp,
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.MaxSIOp,
    arith.MinSIOp,
    arith.ConstantOp,
    te.ReadOp,
)
"""What a padding compute may do to be recomputed at every window tap: reads, index arithmetic and a few vector-cheap
float operations (a batch normalisation's scale and shift, a ReLU), no division or libm call."""


def is_padded_row_tap(read: te.ReadOp) -> bool:
    """Whether `read` is a max reduction's window tap of a constant padding whose bounds test leaves the innermost
    dimension alone (a channels-last pool's pad: the test is one value for a whole row of channels). Inlined there,
    the tap becomes `select(inside, x[clamped], -inf)`, which the pool rule vectorizes across the channels, and the
    padded copy of the input, a pass of its own over memory, goes:

        %p = te.compute "pad" (%n, %h, %w, %c) -> tensor<1x113x113x64xf32> { ...
          %v = te.read %x[%n, (maxsi %h - 1, 0), (maxsi %w - 1, 0), %c] ; arith.select %inside, %v, -inf }
        %y = te.compute "max_pool" (...) reduce max (%kh : 3, %kw : 3) { te.read %p[%n, 2 * %i + %kh, ..., %c] }

    A channels-first pad tests the width, which is the innermost dimension: inlined, the test would differ per lane
    of the pool's vectorized row, so that pad stays its own kernel."""
    producer, consumer = read.tensor.owner, read.parent_op()
    if not isinstance(producer, te.ComputeOp) or not isinstance(consumer, te.ComputeOp):
        return False
    if consumer.combiner is None or consumer.combiner.data not in ("max", "maxnum"):
        return False
    selected = producer.yield_op.value.owner
    if not isinstance(selected, arith.SelectOp) or not isinstance(selected.rhs.owner, arith.ConstantOp):
        return False
    if any(not isinstance(op, CHEAP_OPS) for op in list(producer.body.block.ops)[:-1]):
        return False
    innermost = producer.output_indices[-1]
    consumer_innermost = consumer.output_indices[-1]
    return innermost not in _indices_used(selected.cond, {innermost}) and read.indices[-1] is consumer_innermost


MAX_INLINED_OPS = 4096
"""Most ops an inlining may copy (the producer's body times its reads): past it the producer is computed once, in
memory. A chain of computes each reading the one before at several places (Swin's shifted-window mask, built by slice
assignments into a zero tensor, each a select of the new values or the previous tensor) would otherwise double at
every step; no elementwise chain of the light models or transformers comes near it."""


def _cheap_for_one_group(producer: te.ComputeOp, consumers: set[Operation | None]) -> bool:
    """Whether `producer`, read by several `consumers`, is still inlined into each: they are stages of one kernel
    group (a softmax's max and exp, which run row after row in one loop nest) and its body is a few cheap ops
    (`CHEAP_OPS`), so that recomputing it in a row's second pass costs less than writing the whole tensor to memory
    and reading it back. ViT's attention logits, `scores * scale + key mask`, read by the softmax's max and exp:

        %l = te.compute "add" (...) { %s = te.read %scores[...] ; ... arith.addf %scaled, %mask }
        %m = te.compute "softmax_max" (...) reduce max (...) { te.read %l[...] } {kernel_group = 1}
        %e = te.compute "softmax_exp" (...) { te.read %l[...] ... } {kernel_group = 1}"""
    groups = {
        consumer.attributes.get(te.KERNEL_GROUP) if isinstance(consumer, te.ComputeOp) else None
        for consumer in consumers
    }
    body = list(producer.body.block.ops)[:-1]
    return (
        len(groups) == 1
        and None not in groups
        and len(body) <= MAX_CHEAP_OPS
        and all(isinstance(op, CHEAP_OPS) for op in body)
    )


MAX_CHEAP_OPS = 16
"""Most ops a producer read by several stages of one kernel group may have to be inlined into each."""


def _all_constant_consumers(reads: list[Operation], known: dict[SSAValue, bool]) -> bool:
    """Whether every compute holding one of `reads` is itself computed from weights alone."""
    return all(is_constant(read.parent_op().result, known) for read in reads)  # type: ignore[union-attr]


class _Inliner:
    """Substitutes an elementwise compute's body into every `te.read` of it, then erases it. Inlining never changes
    whether a compute is computed from weights alone, so the answers are kept for the pass (`known`)."""

    def __init__(self) -> None:
        self.known: dict[SSAValue, bool] = {}

    def inline(self, producer: te.ComputeOp) -> bool:
        """Inline `producer` where the rules allow it; whether it did."""
        if producer.extents or te.KERNEL_GROUP in producer.attributes or producer.tag.data == COPY_TAG:
            return False
        reads = [use.operation for use in producer.result.uses]
        if not reads or not all(_is_read_in_compute(read) for read in reads):
            return False
        view = is_row_view(producer)
        if not view and not all(_recompute_free(read) or is_padded_row_tap(read) for read in reads):  # type: ignore[arg-type]
            return False
        is_literal = not any(isinstance(op, te.ReadOp) for op in producer.body.walk())
        consumers = {read.parent_op() for read in reads}
        if not is_literal and not view and len(consumers) > 1 and not _cheap_for_one_group(producer, consumers):
            return False
        if (
            not is_literal
            and is_constant(producer.result, self.known)
            and not _all_constant_consumers(reads, self.known)
        ):
            return False
        body = list(producer.body.block.ops)[:-1]
        if len(body) * len(reads) > MAX_INLINED_OPS and not view:
            return False
        value = producer.yield_op.value
        *copied, last = reads
        for read in copied:
            assert isinstance(read, te.ReadOp)
            mapping: dict[SSAValue, SSAValue] = dict(zip(producer.output_indices, read.indices))
            for body_op in body:
                read.parent_block().insert_op_before(clone_op(body_op, mapping), read)  # type: ignore[union-attr]
            Rewriter.replace_op(read, [], [mapping.get(value, value)])
        # The last read takes the body's own ops (the same IR as a clone), the producer's indices replaced by its own.
        assert isinstance(last, te.ReadOp)
        indices: dict[SSAValue, SSAValue] = dict(zip(producer.output_indices, last.indices))
        for index, replacement in indices.items():
            index.replace_all_uses_with(replacement)
        for body_op in body:
            body_op.detach()
            last.parent_block().insert_op_before(body_op, last)  # type: ignore[union-attr]
        Rewriter.replace_op(last, [], [indices.get(value, value)])
        Rewriter.erase_op(producer)
        return True


@dataclass(frozen=True)
class TeInlinePass(ModulePass):
    """Inline elementwise te.computes into the te.compute bodies that read them, to a fixpoint: the computes are
    visited in program order, producers before their consumers, again while a visit inlines any."""

    name = "te-inline"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        inliner = _Inliner()
        changed = True
        while changed:
            changed = False
            for compute in computes_of(op):
                changed |= inliner.inline(compute)
