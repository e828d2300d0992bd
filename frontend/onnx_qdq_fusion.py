"""QDQ fusion: the quantized ops of a QDQ model onto minimlc's integer kernels, as ONNX Runtime's QDQ transformer
does, before import (ONNX in, ONNX out).

    x_q -> DequantizeLinear -> Conv -> [Relu | Clip] -> QuantizeLinear -> y_q      (Conv's weight: DQ of an int8
           W_q -> DequantizeLinear ----^                                            initializer; bias: DQ of int32)
    becomes
    x_q -> QLinearConv(x_q, s_x, z_x, W_q, s_w, z_w, s_y, z_y, B_q) -> [Max/Min with Q(0) / Q(lo), Q(hi)] -> y_q

and the same for MatMul (-> QLinearMatMul; B a constant weight or a second quantized activation) and Gemm without
transA (-> QLinearConv over the rows as a batch of 1x1 images, between two Reshapes, which keeps Gemm's bias).
QLinearConv and QLinearMatMul import as `graph.conv_integer` / `graph.matmul_integer` (exact int32 sums), the int32
bias added, and one requantization `round(float(acc) * (s_x * s_w) / s_y) + z_y` as ONNX Runtime computes it
(`onnx_qlinear`), so activations stay 8-bit between kernels. A Relu or Clip between the op and the Q folds exactly:
quantization is monotone, so `Q(max(v, lo)) = max(Q(v), Q(lo))` (nothing is emitted where `Q(lo)` is the type's
minimum, ONNX Runtime's `ReluQuantFusion`). The same holds for a Relu outside such a chain (`DQ -> Relu -> Q`, or
a residual `DQ + DQ -> Relu -> Q`) read only by a Q whose `Q(0)` is that minimum: the Relu goes.

A match needs: per-tensor 8-bit x (scale and zero point initializers), a weight DQ per tensor or per output channel
of an 8-bit initializer, an int32 bias with zero point 0 at scale `s_x * s_w` (float32 rounding apart), the op's
output read only by the Q (through the Relu/Clip, read only by the Q), a per-tensor 8-bit Q. Anything else is left
to the float path (DQ folded into the float weights at import, activations' Q/DQ as elementwise arithmetic). A DQ
read by several nodes stays for its other readers (ONNX Runtime duplicates such DQs, `EnsureUniqueDQForNodeUnit`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from minimlc.frontend.onnx_control import names_used, subgraphs

EIGHT_BIT = {TensorProto.UINT8, TensorProto.INT8}
BIAS_SCALE_RTOL = 1e-6
"""How far a bias's DQ scale may be from `s_x * s_w` (float32 products computed in another order or in float64)."""


@dataclass
class _Quantized:
    """A DequantizeLinear's quantized input, scale, zero point and axis."""

    data: str
    scale: str
    zero_point: str
    axis: int


class _Graph:
    """The producers, readers and small initializers of one graph."""

    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.initializers = {tensor.name: tensor for tensor in graph.initializer}
        self.producer = {output: node for node in graph.node for output in node.output}
        self.readers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in set(node.input):
                self.readers.setdefault(name, []).append(node)
        self.kept = {vi.name for vi in graph.output} | {
            name for node in graph.node for subgraph in subgraphs(node) for name in names_used(subgraph)
        }
        """Names that must stay: the graph's outputs and what subgraphs read."""
        self.added: list[onnx.TensorProto] = []

    def array(self, name: str) -> np.ndarray | None:
        """An initializer's value, or None where it is not an initializer held in the model."""
        tensor = self.initializers.get(name)
        if tensor is None or tensor.data_location == TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(tensor)

    def element(self, name: str) -> int | None:
        tensor = self.initializers.get(name)
        return None if tensor is None else tensor.data_type

    def only_reader(self, name: str, op_types: tuple[str, ...]) -> onnx.NodeProto | None:
        """The one node reading `name`, if `name` is no graph output, and that node is one of `op_types`."""
        readers = self.readers.get(name, [])
        if name in self.kept or len(readers) != 1:
            return None
        return readers[0] if readers[0].op_type in op_types else None

    def dequantized(self, name: str) -> _Quantized | None:
        """The DequantizeLinear producing `name` (no block_size, scale and zero point initializers), or None."""
        node = self.producer.get(name)
        if (
            node is None
            or node.op_type != "DequantizeLinear"
            or node.domain not in ("", "ai.onnx")
            or len(node.input) < 3
        ):
            return None
        attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
        if attributes.get("block_size", 0) or node.input[1] not in self.initializers:
            return None
        if node.input[2] not in self.initializers or self.element(node.input[1]) != TensorProto.FLOAT:
            return None
        return _Quantized(node.input[0], node.input[1], node.input[2], int(attributes.get("axis", 1)))

    def per_tensor(self, quantized: _Quantized) -> bool:
        scale, zero = self.initializers[quantized.scale], self.initializers[quantized.zero_point]
        return int(np.prod(scale.dims)) == 1 and int(np.prod(zero.dims)) == 1 and zero.data_type in EIGHT_BIT

    def constant(self, name: str, array: np.ndarray) -> str:
        self.added.append(numpy_helper.from_array(array, name))
        return name


def fuse_qdq(graph_proto: onnx.GraphProto) -> onnx.GraphProto:
    """The graph with every matching DQ -> Conv/MatMul/Gemm -> [Relu/Clip] -> Q rewritten onto QLinearConv /
    QLinearMatMul, and every other Relu that its Q's saturation applies dropped (a copy); `graph_proto` itself,
    unchanged, when nothing matches."""
    if not any(node.op_type == "QuantizeLinear" for node in graph_proto.node):
        return graph_proto
    graph = _Graph(graph_proto)
    replaced: dict[int, list[onnx.NodeProto]] = {}
    removed: set[int] = set()
    positions = {node.output[0]: index for index, node in enumerate(graph_proto.node) if node.output}
    for index, node in enumerate(graph_proto.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in ("Conv", "MatMul", "Gemm"):
            continue
        fused = _fuse(graph, node)
        if fused is not None:
            nodes, absorbed = fused
            replaced[index] = nodes
            removed |= {positions[other.output[0]] for other in absorbed}
    for index, node in enumerate(graph_proto.node):
        quantize = None if index in removed else _saturating_relu_reader(graph, node)
        if quantize is not None:
            removed.add(index)
            replaced[positions[quantize.output[0]]] = [_reading(quantize, node.input[0])]
    if not replaced:
        return graph_proto
    result = onnx.GraphProto()
    result.CopyFrom(graph_proto)
    nodes = []
    for index, node in enumerate(graph_proto.node):
        if index in replaced:
            nodes += replaced[index]
        elif index not in removed:
            nodes.append(node)
    del result.node[:]
    read = {name for node in nodes for name in node.input} | graph.kept
    result.node.extend(node for node in nodes if node.op_type != "DequantizeLinear" or node.output[0] in read)
    result.initializer.extend(graph.added)
    return result


def _fuse(graph: _Graph, node: onnx.NodeProto) -> tuple[list[onnx.NodeProto], list[onnx.NodeProto]] | None:
    """The nodes replacing `node` and the nodes they absorb (the Relu/Clip and the Q), or None on no match."""
    x = graph.dequantized(node.input[0])
    if x is None or not graph.per_tensor(x) or len(node.input) < 2:
        return None
    tail = _quantized_output(graph, node.output[0])
    if tail is None:
        return None
    output, bounds, absorbed = tail
    y_scale, y_zero = output.input[1], output.input[2]
    clamps = _clamps(graph, output, bounds)
    fused = f"{output.output[0]}_fused" if clamps else output.output[0]
    if node.op_type == "Conv":
        core = _conv(graph, node, x, y_scale, y_zero, fused)
    elif node.op_type == "MatMul":
        core = _matmul(graph, node, x, y_scale, y_zero, fused)
    else:
        core = _gemm(graph, node, x, y_scale, y_zero, fused)
    if core is None:
        return None
    current = fused
    for position, (op_type, bound) in enumerate(clamps):
        last = position == len(clamps) - 1
        result = output.output[0] if last else f"{fused}_{op_type.lower()}"
        core.append(
            helper.make_node(op_type, [current, graph.constant(f"{result}_{op_type.lower()}_bound", bound)], [result])
        )
        current = result
    return core, absorbed


def _saturating_relu_reader(graph: _Graph, node: onnx.NodeProto) -> onnx.NodeProto | None:
    """The QuantizeLinear alone reading a Relu `node` whose zero bound the Q's saturation applies (`Q(0)` is the
    type's minimum: ONNX Runtime's `ReluQuantFusion`), so the Relu can go; None otherwise.

        DQ(r5) -> Relu -> Q(s_6, z_6 = 0: uint8) -> r6_q    becomes    DQ(r5) -> Q(s_6, 0) -> r6_q
    """
    if node.op_type != "Relu" or node.domain not in ("", "ai.onnx"):
        return None
    if graph.only_reader(node.output[0], ("QuantizeLinear",)) is None:
        return None
    tail = _quantized_output(graph, node.output[0])
    if tail is None or _clamps(graph, tail[0], (0.0, None)):
        return None
    return tail[0]


def _reading(node: onnx.NodeProto, name: str) -> onnx.NodeProto:
    """A copy of `node` reading `name` as its first input."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    copy.input[0] = name
    return copy


def _quantized_output(
    graph: _Graph, name: str
) -> tuple[onnx.NodeProto, tuple[float | None, float | None], list[onnx.NodeProto]] | None:
    """The per-tensor 8-bit QuantizeLinear that alone reads `name` (through one Relu or constant Clip), the float
    bounds that Relu/Clip applies, and the nodes absorbed."""
    reader = graph.only_reader(name, ("QuantizeLinear", "Relu", "Clip"))
    bounds: tuple[float | None, float | None] = (None, None)
    absorbed = []
    if reader is not None and reader.op_type in ("Relu", "Clip"):
        if reader.op_type == "Relu":
            bounds = (0.0, None)
        else:
            clip = _clip_bounds(graph, reader)
            if clip is None:
                return None
            bounds = clip
        absorbed.append(reader)
        reader = graph.only_reader(reader.output[0], ("QuantizeLinear",))
    if reader is None or len(reader.input) < 3 or reader.domain not in ("", "ai.onnx"):
        return None
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in reader.attribute}
    if attributes.get("block_size", 0) or attributes.get("saturate", 1) != 1 or attributes.get("precision", 0):
        return None
    scale, zero = graph.initializers.get(reader.input[1]), graph.initializers.get(reader.input[2])
    if graph.array(reader.input[1]) is None or graph.array(reader.input[2]) is None:
        return None
    assert scale is not None
    assert zero is not None
    if scale.data_type != TensorProto.FLOAT or zero.data_type not in EIGHT_BIT:
        return None
    if int(np.prod(scale.dims)) != 1 or int(np.prod(zero.dims)) != 1:
        return None
    return reader, bounds, [*absorbed, reader]


def _clip_bounds(graph: _Graph, clip: onnx.NodeProto) -> tuple[float | None, float | None] | None:
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in clip.attribute}
    if "min" in attributes or "max" in attributes:  # opset < 11
        return attributes.get("min"), attributes.get("max")
    bounds: list[float | None] = []
    for position in (1, 2):
        name = clip.input[position] if len(clip.input) > position else ""
        if not name:
            bounds.append(None)
            continue
        value = graph.array(name)
        if value is None or value.size != 1 or value.dtype != np.float32:
            return None
        bounds.append(float(value.reshape(())))
    return bounds[0], bounds[1]


def _clamps(
    graph: _Graph, output: onnx.NodeProto, bounds: tuple[float | None, float | None]
) -> list[tuple[str, np.ndarray]]:
    """Max/Min (op type, quantized bound) applying the absorbed Relu/Clip bounds to the quantized result: `Q(bound)`
    as QuantizeLinear computes it in float32, left out where it is the type's own extreme."""
    scale, zero = graph.array(output.input[1]), graph.array(output.input[2])
    assert scale is not None
    assert zero is not None
    info = np.iinfo(zero.dtype)
    clamps = []
    for bound, op_type, extreme in ((bounds[0], "Max", info.min), (bounds[1], "Min", info.max)):
        if bound is None:
            continue
        scaled = np.rint(np.float32(bound) / scale.astype(np.float32).reshape(()))
        quantized = int(np.clip(scaled + int(zero.reshape(())), info.min, info.max))
        if quantized != extreme:
            clamps.append((op_type, np.array(quantized, dtype=zero.dtype)))
    return clamps


def _weight(graph: _Graph, name: str, channel_axis: int, channels: int) -> _Quantized | None:
    """The DQ of an 8-bit initializer producing `name`, per tensor or per channel along `channel_axis`."""
    weight = graph.dequantized(name)
    if weight is None or graph.element(weight.data) not in EIGHT_BIT:
        return None
    if graph.per_tensor(weight):
        return weight
    rank = len(graph.initializers[weight.data].dims)
    scale, zero = graph.initializers[weight.scale], graph.initializers[weight.zero_point]
    axis = weight.axis + rank if weight.axis < 0 else weight.axis
    if axis != channel_axis or list(scale.dims) != [channels] or list(zero.dims) not in ([channels], [1], []):
        return None
    return weight


def _bias(graph: _Graph, name: str, x: _Quantized, weight: _Quantized) -> str | None:
    """The int32 initializer behind the DQ producing `name`, if its zero point is 0 and its scale `s_x * s_w`."""
    bias = graph.dequantized(name)
    if (
        bias is None
        or graph.element(bias.data) != TensorProto.INT32
        or graph.element(bias.zero_point) != TensorProto.INT32
    ):
        return None
    zero, scale = graph.array(bias.zero_point), graph.array(bias.scale)
    x_scale, w_scale = graph.array(x.scale), graph.array(weight.scale)
    if zero is None or scale is None or x_scale is None or w_scale is None or zero.any():
        return None
    expected = (x_scale.reshape(()) * w_scale.reshape(-1)).astype(np.float32)
    if not np.allclose(scale.reshape(-1), expected, rtol=BIAS_SCALE_RTOL, atol=0):
        return None
    return bias.data


def _conv(
    graph: _Graph, node: onnx.NodeProto, x: _Quantized, y_scale: str, y_zero: str, fused: str
) -> list[onnx.NodeProto] | None:
    weight_name = node.input[1]
    dequantized = graph.dequantized(weight_name)
    if dequantized is None or dequantized.data not in graph.initializers:
        return None
    channels = graph.initializers[dequantized.data].dims[0]
    weight = _weight(graph, weight_name, 0, channels)
    if weight is None:
        return None
    inputs = [x.data, x.scale, x.zero_point, weight.data, weight.scale, weight.zero_point, y_scale, y_zero]
    if len(node.input) > 2 and node.input[2]:
        bias = _bias(graph, node.input[2], x, weight)
        if bias is None:
            return None
        inputs.append(bias)
    return [helper.make_node("QLinearConv", inputs, [fused], name=f"{node.name}_qlinear", **_attributes(node))]


def _matmul(
    graph: _Graph, node: onnx.NodeProto, x: _Quantized, y_scale: str, y_zero: str, fused: str
) -> list[onnx.NodeProto] | None:
    b = graph.dequantized(node.input[1])
    if b is None:
        return None
    if b.data in graph.initializers:
        dims = graph.initializers[b.data].dims
        if len(dims) < 2 or _weight(graph, node.input[1], len(dims) - 1, dims[-1]) is None:
            return None
    elif not graph.per_tensor(b):
        return None
    inputs = [x.data, x.scale, x.zero_point, b.data, b.scale, b.zero_point, y_scale, y_zero]
    return [helper.make_node("QLinearMatMul", inputs, [fused], name=f"{node.name}_qlinear")]


def _gemm(
    graph: _Graph, node: onnx.NodeProto, x: _Quantized, y_scale: str, y_zero: str, fused: str
) -> list[onnx.NodeProto] | None:
    """Gemm (no transA, alpha = beta = 1, a 2-D weight initializer) as a 1x1 QLinearConv over [M, K, 1, 1]."""
    attributes = _attributes(node)
    if attributes.get("transA", 0) or attributes.get("alpha", 1.0) != 1.0 or attributes.get("beta", 1.0) != 1.0:
        return None
    dequantized = graph.dequantized(node.input[1])
    if dequantized is None or (array := graph.array(dequantized.data)) is None or array.ndim != 2:
        return None
    transposed = bool(attributes.get("transB", 0))
    weight = _weight(graph, node.input[1], 0 if transposed else 1, array.shape[0 if transposed else 1])
    if weight is None:
        return None
    rows = array if transposed else array.T
    inputs = [x.data, x.scale, x.zero_point]
    kernel = graph.constant(f"{fused}_kernel", np.ascontiguousarray(rows).reshape(*rows.shape, 1, 1))
    inputs += [kernel, weight.scale, weight.zero_point, y_scale, y_zero]
    if len(node.input) > 2 and node.input[2]:
        bias = _bias(graph, node.input[2], x, weight)
        if bias is None or list(graph.initializers[bias].dims) != [rows.shape[0]]:
            return None
        inputs.append(bias)
    image = graph.constant(f"{fused}_image_shape", np.array([0, -1, 1, 1], dtype=np.int64))
    matrix = graph.constant(f"{fused}_matrix_shape", np.array([0, -1], dtype=np.int64))
    return [
        helper.make_node("Reshape", [x.data, image], [f"{fused}_image"]),
        helper.make_node(
            "QLinearConv", [f"{fused}_image", *inputs[1:]], [f"{fused}_conv"], name=f"{node.name}_qlinear"
        ),
        helper.make_node("Reshape", [f"{fused}_conv", matrix], [fused]),
    ]


def _attributes(node: onnx.NodeProto) -> dict[str, object]:
    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
