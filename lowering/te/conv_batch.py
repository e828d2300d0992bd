"""Run-time batches in the te-level convolution passes (`docs/design/symbolic_shapes.md`).

A convolution, pool or elementwise image compute of a model with a symbolic batch has one run-time extent, its
batch (axis 0 of its result and of the images it reads), and static channels and pixels. The convolution passes
(`te-conv-layout`, `te-channels-last`, `te-conv-winograd`) plan such a compute as they plan a static one of
batch 1, per image, and give the computes they build the same batch extent, outermost:

    %y = te.compute "conv" (%n, %f, %h, %w) [%b] reduce sum (...) -> tensor<?x64x56x56xf32> { ... }
    // te-conv-layout: its input's channels-last copy keeps the batch %b outermost
    %t = te.compute "conv_input_nhwc" (%n, %h, %w, %c) [%b] -> tensor<?x58x58x64xf32> { ... }
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from minimlc.dialects import te
from minimlc.lowering.graph_to_te.extents import Extent


def _batch_only(tensor_type: object) -> bool:
    return not isinstance(tensor_type, TensorType) or DYNAMIC_INDEX not in tensor_type.get_shape()[1:]


def has_only_a_run_time_batch(compute: te.ComputeOp) -> bool:
    """Whether `compute`'s run-time extents, if any, are only a batch: axis 0 of its result and of the tensors it
    reads (static reduction extents, no other `?`)."""
    if te.DYNAMIC_EXTENT in compute.extents or not _batch_only(compute.result.type):
        return False
    return all(_batch_only(op.tensor.type) for op in compute.body.walk() if isinstance(op, te.ReadOp))


def batch_extent(compute: te.ComputeOp) -> Extent:
    """The batch (axis 0) of `compute`'s result: its size, or the operand giving it at run time."""
    return compute.output_extents()[0]
