"""Weight-only quantization of an ONNX model: every MatMul whose B is a float32 rank-2 initializer becomes ONNX
Runtime's com.microsoft MatMulNBits, its weight stored as int8 or int4 in blocks of `block_size` along K, each block
with a float32 scale (and, with `zero_points`, a zero point); activations stay float32.

    model = quantize_model(onnx.load("mlp.onnx"), bits=4, block_size=32)  # MatMul(x, W[K, N]) -> MatMulNBits

Rounding (per block of B's column `n`, values `w` of `block_size` consecutive rows; K padded with zeros to whole
blocks): symmetric (default) `scale = max|w| / (2^(bits-1) - 1)`, `q = rint(w / scale) + 2^(bits-1)` (round half to
even; codes 1 .. 2^bits - 1, the zero point implicit: MatMulNBits' default `2^(bits-1)`); with zero points,
`scale = (max(w, 0) - min(w, 0)) / (2^bits - 1)`, `zero = rint(-min(w, 0) / scale)`, `q = clip(rint(w / scale) +
zero, 0, 2^bits - 1)` (the range holds 0, so 0 is exact). An all-zero block takes scale 1. Each value is off by at
most half its block's scale. Packing is MatMulNBits': B `[N, blocks, block_size * bits / 8]` uint8, int4 two values a
byte with the lower K first in the lower nibble; zero points `[N * ceil(blocks * bits / 8)]` packed alike.

`accuracy_level` (MatMulNBits' attribute, written when given) tells a runtime what it may compute A in: 4 lets
minimlc and ONNX Runtime quantize A to int8 per block and take integer dot products (faster, less exact); 0 or
absent keeps A in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

MATMUL_NBITS_DOMAIN = "com.microsoft"
BITS = (4, 8)
ACCURACY_LEVELS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class QuantizedWeight:
    """A weight in MatMulNBits' layout: packed codes, scales and (maybe) packed zero points."""

    codes: np.ndarray
    scales: np.ndarray
    zero_points: np.ndarray | None


def pack_values(values: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned `bits`-bit values (uint8) packed along the last axis, lower bits first (an odd count padded with 0)."""
    if bits == 8:
        return values.astype(np.uint8)
    if values.shape[-1] % 2:
        values = np.concatenate([values, np.zeros((*values.shape[:-1], 1), np.uint8)], axis=-1)
    return (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)


def quantize_weight(weight: np.ndarray, bits: int, block_size: int, zero_points: bool = False) -> QuantizedWeight:
    """`weight` (float32 `[K, N]`) quantized per block of `block_size` rows of each column (see the module
    docstring for the rounding)."""
    if bits not in BITS:
        raise ValueError(f"bits={bits}: 4 or 8 only")
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError(f"block_size={block_size} must be a power of two, 16 or more")
    k, n = weight.shape
    blocks = -(-k // block_size)
    padded = np.zeros((blocks * block_size, n), np.float64)
    padded[:k] = weight
    columns = padded.T.reshape(n, blocks, block_size)  # [N, blocks, block_size]
    levels = (1 << bits) - 1
    if zero_points:
        low, high = np.minimum(columns.min(axis=2), 0.0), np.maximum(columns.max(axis=2), 0.0)
        scale = (high - low) / levels
        scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
        zero = np.clip(np.rint(-low / scale), 0, levels)
    else:
        scale = np.abs(columns).max(axis=2) / ((1 << (bits - 1)) - 1)
        scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
        zero = np.full(scale.shape, 1 << (bits - 1), np.float64)
    codes = np.clip(np.rint(columns / scale[..., None].astype(np.float64)) + zero[..., None], 0, levels)
    packed_zero = pack_values(zero.astype(np.uint8), bits).reshape(-1) if zero_points else None
    return QuantizedWeight(pack_values(codes.astype(np.uint8), bits), scale.reshape(-1), packed_zero)


def dequantize_weight(quantized: QuantizedWeight, bits: int, k: int) -> np.ndarray:
    """The float32 `[K, N]` weight that `quantized` stands for (as MatMulNBits computes it)."""
    n, blocks, width = quantized.codes.shape
    block_size = width * 8 // bits
    codes = _unpack(quantized.codes, bits).astype(np.float32)
    if quantized.zero_points is None:
        zero = np.full((n, blocks), 1 << (bits - 1), np.float32)
    else:
        zero = _unpack(quantized.zero_points.reshape(n, -1), bits)[:, :blocks].astype(np.float32)
    values = (codes - zero[..., None]) * quantized.scales.reshape(n, blocks)[..., None]
    return values.reshape(n, blocks * block_size)[:, :k].T


def _unpack(packed: np.ndarray, bits: int) -> np.ndarray:
    if bits == 8:
        return packed
    return np.stack([packed & 15, packed >> 4], axis=-1).reshape(*packed.shape[:-1], -1)


def quantize_model(
    model: onnx.ModelProto,
    bits: int,
    block_size: int = 32,
    zero_points: bool = False,
    read_array: Callable[[onnx.TensorProto], np.ndarray] = numpy_helper.to_array,
    accuracy_level: int | None = None,
) -> onnx.ModelProto:
    """A copy of `model` whose MatMuls with a float32 rank-2 initializer B are MatMulNBits (see the module
    docstring); an initializer no other node reads is dropped. Subgraphs are left as they are. `read_array` reads an
    initializer (one stored outside the model: `onnx_model_file.ExternalData.array`); `accuracy_level`, when given,
    is written on every new node."""
    if accuracy_level is not None and accuracy_level not in ACCURACY_LEVELS:
        raise ValueError(f"accuracy_level={accuracy_level}: one of {', '.join(map(str, ACCURACY_LEVELS))}")
    quantized = onnx.ModelProto()
    quantized.CopyFrom(model)
    graph = quantized.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    outputs = {value.name for value in graph.output}
    nodes: list[onnx.NodeProto] = []
    for index, node in enumerate(graph.node):
        tensor = (
            initializers.get(node.input[1]) if node.op_type == "MatMul" and node.domain in ("", "ai.onnx") else None
        )
        if tensor is None or tensor.data_type != onnx.TensorProto.FLOAT or len(tensor.dims) != 2:
            nodes.append(node)
            continue
        weight = read_array(tensor)
        k, n = weight.shape
        packed = quantize_weight(weight, bits, block_size, zero_points)
        prefix = f"{node.input[1]}_q{bits}"
        new = [
            numpy_helper.from_array(packed.codes, f"{prefix}"),
            numpy_helper.from_array(packed.scales, f"{prefix}_scales"),
        ]
        if packed.zero_points is not None:
            new.append(numpy_helper.from_array(packed.zero_points, f"{prefix}_zero_points"))
        graph.initializer.extend(new)
        name = node.name or f"matmul_nbits_{index}"
        nodes.append(
            helper.make_node(
                "MatMulNBits",
                [node.input[0], *(t.name for t in new)],
                list(node.output),
                name=name,
                domain=MATMUL_NBITS_DOMAIN,
                K=k,
                N=n,
                bits=bits,
                block_size=block_size,
                **({} if accuracy_level is None else {"accuracy_level": accuracy_level}),
            )
        )
        readers[node.input[1]] -= 1
        if readers[node.input[1]] == 0 and node.input[1] not in outputs:
            graph.initializer.remove(initializers.pop(node.input[1]))
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(opset.domain == MATMUL_NBITS_DOMAIN for opset in quantized.opset_import):
        quantized.opset_import.append(helper.make_opsetid(MATMUL_NBITS_DOMAIN, 1))
    return quantized
