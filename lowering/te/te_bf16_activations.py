"""`te-bf16-activations`: store in bfloat16 the float32 activations that bfloat16 inner products read.

A bfloat16 build (`graph-bf16-products`) rounds the operands of its convolutions and GEMMs to bfloat16 where it packs
them into words (`graph_to_te/bfloat16.py`), but the activations those packs read are written and read in float32:
twice the bytes the products use. This pass, run in bfloat16 builds after `te-inline`, stores such an activation in
bfloat16 (as OpenVINO's bf16 inference does) where it is larger than the L2 cache (`Target.cache_bytes`): there
half the bytes go to and come back from L3 or memory. A smaller one comes back from L2 either way, and the rounding
and widening then cost more than they save (ViT-style's attention probabilities and FFN activations, 0.15-0.6 MB:
1.02x its time with them stored in bfloat16; Zen 4, one thread). The pass option `min-bytes` sets another size.

An elementwise activation that a 1x1 convolution reads in place (`te-bf16-word-views`, which runs first: a
"bf16_channels" compute that copies it in bfloat16, the view of that the convolution's words) is stored in bfloat16
whatever its size, and the copy replaced by it: the copy's pass over the activation goes. Convolution sums read so
(their bias and ReLU in the "bf16_channels" compute) stay float32: that compute becomes their write-back, and rounds
once.

A compute whose result a word pack reads (`BF16_WORD_TAGS`) yields its value rounded to bfloat16 as the packs round
it (the low half of an `llvmx.pack_bf16` word), and every read of it is widened back to float32 (the bits moved up,
exact). The packs then read what they would have rounded themselves (rounding twice to bfloat16 is rounding once);
the other readers (a residual add, a normalisation's statistics) read the rounded value.

An elementwise compute changes its own element type. A contraction (a convolution or GEMM summing products) keeps
its float32 sums and gets a rounding compute ("to_bf16") after it, which `loop-fuse-kernels` moves into its register
tiles' write-back (`program/epilogue.py`), so the float32 tensor is never stored. Other reductions (pools, a
softmax's sums) stay float32, as do weights and what is computed from them alone (biases a pack adds), the
function's results and what a result copies (a model output in another layout), and tensors used anywhere but in
te bodies.

    %c = te.compute "relu" (%i, %j) -> tensor<512x1024xf32> { ... te.yield %r : f32 }
    %w = te.compute "matmul_bf16_lhs" (%i, %k) -> tensor<512x512xi32> { %a = te.read %c[%i, %k] ... }
    // becomes
    %c = te.compute "relu" (%i, %j) -> tensor<512x1024xbf16> {
      ... %p = llvmx.pack_bf16 %r, %zero ; %b = arith.trunci %p : i32 to i16 ; %h = arith.bitcast %b : i16 to bf16
      te.yield %h : bf16
    }
    %w = te.compute "matmul_bf16_lhs" (%i, %k) -> tensor<512x512xi32> {
      %h = te.read %c[%i, %k] : tensor<512x1024xbf16> ; %a = (bits of %h, shifted up 16, as f32) ...
    }
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.dialects.builtin import BFloat16Type, IndexType, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import graph, llvm_ext, te
from minimlc.lowering.graph_to_te.builder import build_compute, read
from minimlc.lowering.graph_to_te.small_floats import rounded_operand, rounded_to_bf16, to_f32
from minimlc.lowering.strategy.data_layout import byte_size
from minimlc.lowering.target import target_of
from minimlc.lowering.te.compute_rewriting import computes_of
from minimlc.lowering.te.te_bf16_word_views import CHANNELS_TAG
from minimlc.lowering.te.te_inline import is_constant

BF16_WORD_TAGS = frozenset({"conv_bf16_input", "matmul_bf16_lhs", "matmul_bf16_rhs", "gemm_bf16_lhs"})
"""The computes that pack float32 activations into words of two bfloat16 values (`graph_to_te/bfloat16.py`,
`bfloat16_conv.py`)."""

ROUNDING_TAG = "to_bf16"
"""The compute that rounds a contraction's float32 sums to bfloat16, fused into its write-back."""


def _readers(tensor: SSAValue) -> list[te.ComputeOp] | None:
    """The computes that read `tensor`, or None where it is used anywhere but in a te.read of a compute body."""
    readers: list[te.ComputeOp] = []
    for use in tensor.uses:
        reader = use.operation.parent_op()
        if not isinstance(use.operation, te.ReadOp) or not isinstance(reader, te.ComputeOp):
            return None
        readers.append(reader)
    return readers


def _is_contraction(compute: te.ComputeOp) -> bool:
    """A sum of products: a float convolution or GEMM, or a bfloat16 one (`llvmx.dot_bf16`)."""
    combiner = compute.combiner.data if compute.combiner is not None else None
    yielded = compute.body.block.last_op
    assert isinstance(yielded, te.YieldOp)
    return combiner == "sum" and isinstance(yielded.value.owner, arith.MulfOp | llvm_ext.DotBF16Op)


def _copies_into_a_result(reader: te.ComputeOp, tensor: SSAValue) -> bool:
    """Whether `reader` is a result of the function that copies `tensor` (a layout copy of a model output): its body
    reads `tensor` and computes nothing but indices."""
    if not any(isinstance(use.operation, func.ReturnOp) for use in reader.result.uses):
        return False
    for op in reader.body.block.ops:
        if isinstance(op, te.ReadOp) and op.tensor is not tensor:
            return False
        if not isinstance(op, te.ReadOp | te.YieldOp) and not all(isinstance(r.type, IndexType) for r in op.results):
            return False
    return True


def _stored_in_bf16(compute: te.ComputeOp, known: dict[SSAValue, bool], min_bytes: int) -> bool:
    """Whether `compute`'s float32 result is an activation (computed from run-time data) that a word pack reads, of
    more than `min_bytes` in float32 (a run-time extent counts as 1), or an elementwise one a "bf16_channels" reads."""
    result_type = compute.result.type
    assert isinstance(result_type, TensorType)
    if result_type.element_type != f32 or (compute.extents and not _is_contraction(compute)):
        return False
    readers = _readers(compute.result)
    if is_constant(compute.result, known) or readers is None:
        return False
    if any(_copies_into_a_result(reader, compute.result) for reader in readers):
        return False  # a model output in another layout
    tags = {reader.tag.data for reader in readers}
    if CHANNELS_TAG in tags and not _is_contraction(compute):
        return True  # read in place by a 1x1 convolution: the copy goes, whatever the size
    float32_bytes = math.prod(max(n, 1) for n in result_type.get_shape()) * byte_size(f32)
    return float32_bytes > min_bytes and bool(tags & BF16_WORD_TAGS)


def _copies(reader: te.ComputeOp, tensor: SSAValue) -> bool:
    """Whether `reader` (a "bf16_channels" compute) only rounds `tensor`, read at its own indices, to bfloat16."""
    yielded = reader.body.block.last_op
    assert isinstance(yielded, te.YieldOp)
    value = rounded_operand(yielded.value)
    read = value.owner if value is not None else None
    return (
        isinstance(read, te.ReadOp)
        and read.tensor is tensor
        and list(read.indices) == list(reader.body.block.args)
        and isinstance(tensor.type, TensorType)
        and reader.shape == tuple(tensor.type.get_shape())
    )


def _rounded_in_place(compute: te.ComputeOp) -> te.ComputeOp:
    """`compute` (elementwise) yielding its value rounded to bfloat16: a new compute, the body moved over."""
    yielded = compute.body.block.last_op
    assert isinstance(yielded, te.YieldOp)
    with ImplicitBuilder(compute.body.block):
        narrow = rounded_to_bf16(yielded.value)
    yielded.detach()
    compute.body.block.add_op(yielded)
    yielded.operands[0] = narrow
    result_type = compute.result.type
    assert isinstance(result_type, TensorType)
    block = compute.body.detach_block(0)
    combiner = compute.combiner.data if compute.combiner is not None else None
    stored = te.ComputeOp(
        compute.tag.data,
        graph.tensor_type(result_type.get_shape(), BFloat16Type()),
        block,
        compute.extents,
        combiner,
        compute.dynamic_sizes,
    )
    stored.attributes |= compute.attributes
    return stored


def _rounding(compute: te.ComputeOp) -> te.ComputeOp:
    """A compute after `compute` (a contraction) that rounds its sums to bfloat16."""
    result_type = compute.result.type
    assert isinstance(result_type, TensorType)
    sizes = iter(compute.dynamic_sizes)
    shape = [next(sizes) if extent == builtin.DYNAMIC_INDEX else extent for extent in result_type.get_shape()]
    return build_compute(ROUNDING_TAG, shape, lambda indices: rounded_to_bf16(read(compute.result, indices)))


def _widen_reads(readings: list[Operation], stored: SSAValue) -> None:
    """Each te.read of `readings` reads `stored` (bfloat16) instead, widened to float32."""
    for reading in readings:
        assert isinstance(reading, te.ReadOp)
        narrow = te.ReadOp(stored, reading.indices)
        Rewriter.insert_op(narrow, InsertPoint.before(reading))
        with ImplicitBuilder(Builder(InsertPoint.before(reading))):
            widened = to_f32(narrow.result)
        Rewriter.replace_op(reading, [], [widened])


def _store_in_bf16(compute: te.ComputeOp) -> None:
    """`compute`'s readers read its value rounded to bfloat16 from a bfloat16 tensor; a "bf16_channels" compute that
    only copies it so (`_copies`) is replaced by that tensor."""
    copies = [reader for reader in _readers(compute.result) or [] if _copies(reader, compute.result)]
    readings = [use.operation for use in compute.result.uses if use.operation.parent_op() not in copies]
    if compute.extents:
        stored = _rounding(compute)
        if compute.result.name_hint:
            stored.result.name_hint = f"{compute.result.name_hint}_bf16"
        Rewriter.insert_op(stored, InsertPoint.after(compute))
    else:
        stored = _rounded_in_place(compute)
        stored.result.name_hint = compute.result.name_hint
        Rewriter.insert_op(stored, InsertPoint.before(compute))
    _widen_reads(readings, stored.result)
    for copy in copies:
        Rewriter.replace_op(copy, [], [stored.result])
    if not compute.extents:
        Rewriter.erase_op(compute)


@dataclass(frozen=True)
class TeBF16ActivationsPass(ModulePass):
    """Store in bfloat16 the float32 activations that bfloat16 products read (see the module docstring), those of
    more than `min_bytes` in float32 (-1, the default: the target's L2 cache size)."""

    name = "te-bf16-activations"

    min_bytes: int = -1

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.min_bytes < -1:
            raise PassFailedException(f"te-bf16-activations: min-bytes must be -1 or at least 0, got {self.min_bytes}")
        known: dict[SSAValue, bool] = {}
        min_bytes = target_of(op).cache_bytes[1] if self.min_bytes == -1 else self.min_bytes
        for compute in computes_of(op):
            if _stored_in_bf16(compute, known, min_bytes):
                _store_in_bf16(compute)
