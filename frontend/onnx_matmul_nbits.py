"""ONNX converter for ONNX Runtime's MatMulNBits (domain com.microsoft): float32 A times a weight stored as 4- or
8-bit integers in blocks of `block_size` along K, each block with a float32 scale and a zero point.

B (uint8 `[N, blocks, block_size * bits / 8]`, int4 two values a byte, the lower nibble first) stays packed and
becomes `graph.matmul_nbits`, which unpacks it inside its reduction. Zero points (uint8 `[N, ceil(blocks * bits /
8)]`, packed as B, each row padded to a byte) are unpacked here, one byte per block; absent (or all equal to it),
they are the default `2^(bits-1)` and the op takes none. A K that is not a multiple of the block size pads A with
zeros to whole blocks; the optional bias is added after. `accuracy_level` is the precision ORT may compute A in:
at 4 (int8) the op quantizes A to int8 per block and takes integer dot products, as ORT's CompInt8 kernels do; at
0-3 minimlc computes in float32. `g_idx` (act-order) is refused.

    MatMulNBits(A[1, 64], B[8, 2, 16], scales[16]) {K = 64, N = 8, bits = 4, block_size = 32}
    -> %y = graph.matmul_nbits %a, %b, %s {bits = 4 : i64} : (...) -> tensor<1x8xf32>
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    emit_binary,
    emit_reshape,
)

DOMAIN = "com.microsoft"


def unpack_values(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first `count` unsigned `bits`-bit values along the last axis of `packed` bytes (lower bits first)."""
    if bits == 8:
        return packed[..., :count]
    shifts = np.arange(0, 8, bits, dtype=np.uint8)
    values = (packed[..., :, None] >> shifts) & np.uint8((1 << bits) - 1)
    return values.reshape(*packed.shape[:-1], -1)[..., :count]


def _zero_points(zero_points: Value | None, bits: int, n: int, blocks: int) -> np.ndarray | None:
    """The zero points unpacked to uint8 `[N, blocks]`, or None where they are the default `2^(bits-1)`."""
    if zero_points is None:
        return None
    if not isinstance(zero_points, ConstantValue):
        raise UnsupportedNodeError("zero_points computed at run time are not supported (an initializer is)")
    array = zero_points.array
    if array.dtype != np.uint8:
        raise UnsupportedNodeError(f"zero_points of element type {array.dtype} are not supported (uint8 only)")
    row = -(-blocks * bits // 8)
    if array.size != n * row:
        raise NodeError(f"zero_points hold {array.size} bytes, expected N * ceil(blocks * bits / 8) = {n * row}")
    unpacked = unpack_values(array.reshape(n, row), bits, blocks)
    return None if np.all(unpacked == 1 << (bits - 1)) else np.ascontiguousarray(unpacked)


def MatMulNBits(
    ctx: NodeContext,
    A: Value,
    B: Value,
    scales: Value,
    zero_points: Value | None = None,
    g_idx: Value | None = None,
    bias: Value | None = None,
    *,
    K: int,
    N: int,
    bits: int = 4,
    block_size: int,
    accuracy_level: int = 0,
) -> Value:
    """`A @ dequantized(B)^T (+ bias)` -> graph.matmul_nbits (see the module docstring)."""
    if accuracy_level not in range(5):
        raise NodeError(f"accuracy_level={accuracy_level} must be 0, 1, 2, 3 or 4")
    if bits not in graph.WEIGHT_BITS:
        raise UnsupportedNodeError(f"bits={bits} is not supported (4 or 8)")
    if g_idx is not None:
        raise UnsupportedNodeError("g_idx (act-order block indices) is not supported")
    if block_size < 16 or block_size & (block_size - 1):
        raise NodeError(f"block_size={block_size} must be a power of two, 16 or more")
    if not isinstance(B, ConstantValue):
        raise UnsupportedNodeError("B computed at run time is not supported (an initializer is)")
    blocks, width = -(-K // block_size), block_size * bits // 8
    if B.array.dtype != np.uint8 or B.array.size != N * blocks * width:
        raise NodeError(f"B is {B.array.dtype} of shape {B.array.shape}, expected uint8 [{N}, {blocks}, {width}]")
    a = ctx.data(A)
    if graph.element_type(a) != f32:
        raise UnsupportedNodeError(f"A has element type {graph.element_type(a)}, only float32 is supported")
    a_shape = shape_of(a)
    if not a_shape or a_shape[-1] != K:
        raise NodeError(f"A of shape {a_shape} does not end in K={K}")
    if blocks * block_size != K:
        a = ctx.emit(graph.PadOp(a, [0] * len(a_shape) + [0] * (len(a_shape) - 1) + [blocks * block_size - K]))
    weight = ctx.data(ConstantValue(B.name, np.ascontiguousarray(B.array.reshape(N, blocks, width))))
    if isinstance(scales, ConstantValue) and scales.array.size == N * blocks:  # a weight of its own shape
        scales = ConstantValue(scales.name, np.ascontiguousarray(scales.array.reshape(N, blocks)))
    scale = ctx.data(scales)
    if graph.element_type(scale) != f32:
        raise UnsupportedNodeError(f"scales of element type {graph.element_type(scale)} are not supported (float32)")
    if int(np.prod(shape_of(scale))) != N * blocks:
        raise NodeError(f"scales must hold N * blocks = {N * blocks} values, got shape {shape_of(scale)}")
    scale = emit_reshape(ctx, scale, (N, blocks)) if shape_of(scale) != (N, blocks) else scale
    unpacked = _zero_points(zero_points, bits, N, blocks)
    zero = None if unpacked is None else ctx.data(ConstantValue(f"{ctx.node.output[0]}_zero_points", unpacked))
    level = accuracy_level if accuracy_level == graph.INT8_ACCURACY_LEVEL else 0  # 1-3: float32 here
    result = ctx.emit(graph.MatMulNBitsOp(a, weight, scale, zero, bits, level))
    if bias is None:
        return result
    if shape_of(ctx.data(bias)) != (N,):
        raise NodeError(f"bias must have shape [{N}], got {shape_of(ctx.data(bias))}")
    return emit_binary(ctx, graph.AddOp, result, bias)


CONVERTERS: dict[str, Converter] = {f"{DOMAIN}.MatMulNBits": MatMulNBits}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`)."""
