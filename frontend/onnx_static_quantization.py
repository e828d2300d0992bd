"""Static int8 quantization of a float ONNX model, as QDQ: given each activation's calibrated range, rewrite Conv,
MatMul and Gemm so that their inputs and weights pass through QuantizeLinear/DequantizeLinear pairs, the format
ONNX Runtime's `quantize_static` writes (QuantFormat.QDQ, uint8 activations, int8 weights).

    x -> Conv(W, b) -> y          becomes
    x -> QuantizeLinear(s_x, z_x: uint8) -> DequantizeLinear -> Conv -> y -> QuantizeLinear -> DequantizeLinear -> ...
         W: int8 initializer -> DequantizeLinear(s_w per output channel, zero 0, axis 0)
         b: int32 initializer -> DequantizeLinear(s_x * s_w, zero 0, axis 0)

Weights are symmetric int8 (`max |w| / 127` per output channel, or per tensor; `reduce_range` keeps 7 bits, [-64, 63],
for x86 kernels without VNNI whose `vpmaddubsw` saturates int16 pair sums); activations asymmetric uint8 over the
range widened to hold 0 (`activation_params`). Every consumer of a quantized tensor reads its DequantizeLinear output,
so Relu, Add and pooling between quantized ops sit inside DQ -> op -> Q chains ONNX Runtime fuses; graph outputs stay
float. The ranges come from running the float model (`driver/calibration.py`); this module is the pure rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper

QUANTIZED_OPS = ("Conv", "MatMul", "Gemm")
"""The ops whose inputs and weights are quantized."""

QDQ_OPSET = 13
"""DequantizeLinear's `axis` (per-channel scales) needs opset 13."""

QDQ_IR_VERSION = 7
"""Opset 13's IR version: initializers need not be listed as graph inputs."""


def prepare_for_quantization(model: onnx.ModelProto) -> onnx.ModelProto:
    """The float model the rewrite quantizes (a copy, computing the same): opset raised to 13 by ONNX's version
    converter where lower (IR version 7), `Constant` tensors as initializers (so that weights held in nodes are
    found), and each BatchNormalization of a Conv output no other node reads folded into the Conv's weight and bias
    (`w * s`, `(b - mean) * s + beta`, s = gamma / sqrt(var + eps)), so that a normalised output is quantized."""
    from onnx import version_converter

    if any(opset.domain in ("", "ai.onnx") and opset.version < QDQ_OPSET for opset in model.opset_import):
        model = version_converter.convert_version(model, QDQ_OPSET)
    result = onnx.ModelProto()
    result.CopyFrom(model)
    result.ir_version = max(result.ir_version, QDQ_IR_VERSION)
    graph = result.graph
    constants = [node for node in graph.node if node.op_type == "Constant" and node.attribute[0].name == "value"]
    for node in constants:
        graph.initializer.append(numpy_helper.from_array(numpy_helper.to_array(node.attribute[0].t), node.output[0]))
        graph.node.remove(node)
    _fold_batch_norms(graph)
    return result


def _fold_batch_norms(graph: onnx.GraphProto) -> None:
    arrays = {tensor.name: tensor for tensor in graph.initializer}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    outputs = {vi.name for vi in graph.output}
    for conv in [node for node in graph.node if node.op_type == "Conv"]:
        users = readers.get(conv.output[0], [])
        if len(users) != 1 or users[0].op_type != "BatchNormalization" or conv.output[0] in outputs:
            continue
        norm = users[0]
        params = [*conv.input[1:], *norm.input[1:5]]
        if any(norm.output[1:]) or any(name not in arrays for name in params):
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(arrays[name]) for name in norm.input[1:5])
        epsilon = next((attr.f for attr in norm.attribute if attr.name == "epsilon"), 1e-5)
        factor = (gamma / np.sqrt(var + epsilon)).astype(np.float32)
        weight = numpy_helper.to_array(arrays[conv.input[1]])
        bias = numpy_helper.to_array(arrays[conv.input[2]]) if len(conv.input) > 2 else np.zeros_like(mean)
        folded_weight = (weight * factor.reshape(-1, *[1] * (weight.ndim - 1))).astype(np.float32)
        folded_bias = ((bias - mean) * factor + beta).astype(np.float32)
        prefix = conv.name or conv.output[0]
        graph.initializer.extend(
            [
                numpy_helper.from_array(folded_weight, f"{prefix}_folded_weight"),
                numpy_helper.from_array(folded_bias, f"{prefix}_folded_bias"),
            ]
        )
        del conv.input[1:]
        conv.input.extend([f"{prefix}_folded_weight", f"{prefix}_folded_bias"])
        conv.output[0] = norm.output[0]
        graph.node.remove(norm)
    used = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used or tensor.name in outputs]
    dropped = {tensor.name for tensor in graph.initializer} - {tensor.name for tensor in kept}
    del graph.initializer[:]
    graph.initializer.extend(kept)
    inputs = [vi for vi in graph.input if vi.name not in dropped]  # older models list initializers as inputs
    del graph.input[:]
    graph.input.extend(inputs)


def weight_axis(node: onnx.NodeProto, rank: int) -> int | None:
    """The axis of the weight's output channels (one scale each), or None for a per-tensor scale: Conv's 0, MatMul's
    last for a 2-D B, Gemm's 0 (transB) or 1."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "Gemm":
        trans_b = next((attr.i for attr in node.attribute if attr.name == "transB"), 0)
        return 0 if trans_b else 1
    return 1 if rank == 2 else None


def weight_scales(weight: np.ndarray, axis: int | None, reduce_range: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantization of `weight`: (int8 values, float32 scales along `axis`, or a scalar scale).

    scale = max |w| / 127 (63 with `reduce_range`) over each channel (1 where a channel is all zero);
    q = clip(round_half_even(w / scale), -127, 127) ([-64, 63] with `reduce_range`)."""
    limit = 63 if reduce_range else 127
    values = weight.astype(np.float32)
    others = tuple(d for d in range(weight.ndim) if d != axis)
    peak = np.abs(values).max(axis=others, keepdims=True, initial=0.0)
    scale = np.where(peak > 0, peak / np.float32(limit), np.float32(1.0)).astype(np.float32)
    low = -64 if reduce_range else -127
    quantized = np.clip(np.rint(values / scale), low, limit).astype(np.int8)
    return quantized, scale.reshape(-1) if axis is not None else scale.reshape(())


def activation_params(low: float, high: float) -> tuple[np.float32, np.uint8]:
    """Asymmetric uint8 quantization of the range [low, high], widened to hold 0 (so that zero padding and Relu's
    zeros are exact): scale = (high - low) / 255 (1 for an empty range), zero point = round(-low / scale)."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"calibration range [{low}, {high}] is not finite")
    scale = np.float32((high - low) / 255.0) if high > low else np.float32(1.0)
    zero_point = np.uint8(np.clip(np.rint(-low / float(scale)), 0, 255))
    return scale, zero_point


def tensors_to_calibrate(model: onnx.ModelProto) -> list[str]:
    """The tensors whose ranges the rewrite needs: every non-constant input of a quantized op, and its output where
    another node reads it (a graph output only read by the caller stays float)."""
    constants = {tensor.name for tensor in model.graph.initializer}
    constants |= {out for node in model.graph.node if node.op_type == "Constant" for out in node.output}
    consumed = {name for node in model.graph.node for name in node.input}
    names: list[str] = []
    for node in model.graph.node:
        if node.op_type not in QUANTIZED_OPS:
            continue
        for name in (*_activation_inputs(node), node.output[0]):
            if name and name in consumed and name not in constants and name not in names:
                names.append(name)
    return names


def _activation_inputs(node: onnx.NodeProto) -> list[str]:
    """The inputs quantized as activations: Conv's and Gemm's first, both of MatMul's (B too when not a weight)."""
    return list(node.input[:2]) if node.op_type == "MatMul" else [node.input[0]]


def quantize_qdq(
    model: onnx.ModelProto,
    ranges: Mapping[str, tuple[float, float]],
    per_channel: bool = True,
    reduce_range: bool = False,
    description: str = "int8 static",
) -> onnx.ModelProto:
    """A QDQ copy of `model`: `ranges` gives [low, high] of each of `tensors_to_calibrate(model)` (a missing one is a
    `ValueError` naming it); float weights of Conv/MatMul/Gemm become int8 (per output channel if `per_channel`),
    Conv/Gemm biases int32. `description` goes in the metadata property `minimlc.quantization`."""
    missing = [name for name in tensors_to_calibrate(model) if name not in ranges]
    if missing:
        raise ValueError(f"no calibration range for tensor '{missing[0]}' ({len(missing)} missing)")
    result = onnx.ModelProto()
    result.CopyFrom(model)
    graph = result.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    rewrite = _Rewrite(initializers, ranges, per_channel, reduce_range)
    original = list(graph.node)
    nodes: list[onnx.NodeProto] = []
    for name in (vi.name for vi in graph.input):
        nodes += rewrite.activation_pair(name)
    for node in graph.node:
        if node.op_type in QUANTIZED_OPS:
            nodes += rewrite.weights_of(node)
        nodes.append(node)
        for name in node.output:
            nodes += rewrite.activation_pair(name)
    for node in original:
        for index, name in enumerate(node.input):
            if name in rewrite.dequantized:
                node.input[index] = rewrite.dequantized[name]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input} | {vi.name for vi in graph.output}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend([*kept, *rewrite.new_initializers])
    _raise_opset(result)
    result.metadata_props.add(key="minimlc.quantization", value=description)
    return result


class _Rewrite:
    """The pieces `quantize_qdq` inserts: activation Q/DQ pairs (memoised by tensor) and weight/bias DQs."""

    def __init__(
        self,
        initializers: Mapping[str, onnx.TensorProto],
        ranges: Mapping[str, tuple[float, float]],
        per_channel: bool,
        reduce_range: bool,
    ):
        self.initializers = initializers
        self.ranges = ranges
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.dequantized: dict[str, str] = {}
        self.activation_scale: dict[str, np.float32] = {}
        self.new_initializers: list[onnx.TensorProto] = []

    def _constant(self, name: str, value: np.ndarray) -> str:
        self.new_initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def activation_pair(self, name: str) -> list[onnx.NodeProto]:
        """QuantizeLinear -> DequantizeLinear of activation `name`, if it is calibrated (else nothing)."""
        if name not in self.ranges or name in self.dequantized or name in self.initializers:
            return []
        scale, zero_point = activation_params(*self.ranges[name])
        self.activation_scale[name] = scale
        scale_name = self._constant(f"{name}_scale", np.array(scale, dtype=np.float32))
        zero_name = self._constant(f"{name}_zero_point", np.array(zero_point, dtype=np.uint8))
        quantized, dequantized = f"{name}_quantized", f"{name}_dequantized"
        self.dequantized[name] = dequantized
        return [
            helper.make_node(
                "QuantizeLinear", [name, scale_name, zero_name], [quantized], name=f"{name}_QuantizeLinear"
            ),
            helper.make_node(
                "DequantizeLinear", [quantized, scale_name, zero_name], [dequantized], name=f"{name}_DequantizeLinear"
            ),
        ]

    def weights_of(self, node: onnx.NodeProto) -> list[onnx.NodeProto]:
        """DequantizeLinear nodes for `node`'s float weight (input 1) and, for Conv/Gemm, bias (input 2); the node's
        inputs are pointed at them."""
        if len(node.input) < 2 or node.input[1] not in self.initializers:
            return []
        weight = numpy_helper.to_array(self.initializers[node.input[1]])
        if weight.dtype != np.float32 or (node.op_type == "MatMul" and weight.ndim != 2):
            return []
        axis = weight_axis(node, weight.ndim) if self.per_channel else None
        quantized, scale = weight_scales(weight, axis, self.reduce_range)
        prefix = f"{node.input[1]}_{node.name or node.output[0]}"
        nodes = [self._dequantize(node, 1, prefix, quantized, scale, np.zeros(scale.shape, np.int8), axis)]
        bias = self._bias(node, scale)
        if bias is not None:
            bias_scale = (self.activation_scale[node.input[0]] * scale).astype(np.float32)
            values = np.rint(bias / bias_scale).astype(np.int32)
            bias_prefix = f"{node.input[2]}_{node.name or node.output[0]}"
            zeros = np.zeros(bias_scale.shape, np.int32)
            nodes.append(self._dequantize(node, 2, bias_prefix, values, bias_scale, zeros, 0 if scale.ndim else None))
        return nodes

    def _bias(self, node: onnx.NodeProto, scale: np.ndarray) -> np.ndarray | None:
        """Conv's or Gemm's float bias when it can be int32 at scale s_x * s_w (1-D, one value per channel)."""
        if node.op_type == "MatMul" or len(node.input) < 3 or node.input[2] not in self.initializers:
            return None
        if node.input[0] not in self.activation_scale:
            return None
        bias = numpy_helper.to_array(self.initializers[node.input[2]])
        channels = scale.shape[0] if scale.ndim else None
        if bias.dtype != np.float32 or bias.ndim != 1 or (channels is not None and bias.shape[0] != channels):
            return None
        return bias

    def _dequantize(
        self,
        node: onnx.NodeProto,
        index: int,
        prefix: str,
        values: np.ndarray,
        scale: np.ndarray,
        zero_point: np.ndarray,
        axis: int | None,
    ) -> onnx.NodeProto:
        inputs = [
            self._constant(f"{prefix}_quantized", values),
            self._constant(f"{prefix}_scale", scale),
            self._constant(f"{prefix}_zero_point", zero_point),
        ]
        output = f"{prefix}_dequantized"
        node.input[index] = output
        attributes = {} if axis is None else {"axis": axis}
        return helper.make_node("DequantizeLinear", inputs, [output], name=f"{prefix}_DequantizeLinear", **attributes)


def _raise_opset(model: onnx.ModelProto) -> None:
    """Per-channel DequantizeLinear needs the default domain at opset 13 or later."""
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version < QDQ_OPSET:
            opset.version = QDQ_OPSET
