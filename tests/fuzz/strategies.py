"""Hypothesis strategies for differential fuzzing: random valid float32 ONNX graphs from minimlc's supported op set.

`onnx_graphs()` grows a chain from one input (NCHW or 2-D): each step applies one op to the newest tensor (binary
ops and Concat sometimes take an earlier tensor of the same shape as their second operand), with attributes drawn so
the node is valid; every intermediate shape comes from onnx shape inference, and the finished model passes
`onnx.checker` and strict shape inference. Weights are seeded uniform values scaled by 1/sqrt(fan-in), so values
stay of order one along the chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
ACTIVATIONS: dict[str, dict[str, st.SearchStrategy[float]]] = {
    "Relu": {},
    "LeakyRelu": {"alpha": st.sampled_from([0.01, 0.2, 1.5])},
    "Sigmoid": {},
    "Tanh": {},
    "Elu": {"alpha": st.sampled_from([0.5, 1.0, 2.0])},
    "Selu": {"alpha": st.sampled_from([1.67, 2.0]), "gamma": st.sampled_from([1.05, 0.5])},
    "Celu": {"alpha": st.sampled_from([0.5, 1.0])},
    "HardSigmoid": {"alpha": st.sampled_from([0.2, 0.5]), "beta": st.sampled_from([0.5, 0.3])},
    "HardSwish": {},
    "Softplus": {},
    "Softsign": {},
    "ThresholdedRelu": {"alpha": st.sampled_from([0.1, 1.0])},
    "Mish": {},
    "Abs": {},
    "Neg": {},
    "Erf": {},
    "Sin": {},
    "Cos": {},
    "Identity": {},
}
"""Unary ops and their float attributes (with Clip and PRelu, built apart: 21 activations)."""


@dataclass
class _Graph:
    """The model under construction."""

    rng: np.random.Generator
    input_shape: tuple[int, ...]
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def name(self, prefix: str) -> str:
        return f"{prefix}{len(self.nodes)}_{len(self.initializers)}"

    def weight(self, shape: tuple[int, ...], scale: float = 1.0, low: float = -1.0) -> str:
        name = self.name("w")
        values = (self.rng.uniform(low, 1.0, shape) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(values, name))
        return name

    def ints(self, values: list[int]) -> str:
        name = self.name("i")
        self.initializers.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def add(self, op: str, inputs: list[str], n_outputs: int = 1, **attributes: object) -> str:
        """Append the node and return its first output, whose shape onnx shape inference gives."""
        outputs = [f"t{len(self.nodes)}_{i}" for i in range(n_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outputs, **attributes))
        inferred = onnx.shape_inference.infer_shapes(self.model(None), strict_mode=True)
        for info in inferred.graph.value_info:
            self.shapes[info.name] = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
        return outputs[0]

    def model(self, output: str | None) -> onnx.ModelProto:
        shape = None if output is None else self.shapes[output]
        outputs = [] if output is None else [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)]
        graph = helper.make_graph(
            self.nodes,
            "fuzz",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.input_shape)],
            outputs,
            self.initializers,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def _conv(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    _, c, h, w = shape
    groups = draw(st.sampled_from([d for d in (1, 2, 3, c) if c % d == 0]))
    out_channels = groups * draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, min(3, h + 2))), draw(st.integers(1, min(3, w + 2)))]
    dilations = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    strides = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    pads = [draw(st.integers(0, 2)) for _ in range(4)]
    for axis, size in enumerate((h, w)):
        if size + pads[axis] + pads[axis + 2] < (kernel[axis] - 1) * dilations[axis] + 1:
            return None
    fan_in = c // groups * kernel[0] * kernel[1]
    weight = g.weight((out_channels, c // groups, *kernel), 1 / np.sqrt(fan_in))
    inputs = [x, weight] + ([g.weight((out_channels,))] if draw(st.booleans()) else [])
    return g.add(
        "Conv", inputs, kernel_shape=kernel, dilations=dilations, strides=strides, pads=pads, group=groups
    )


def _pool(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
    kernel = [draw(st.integers(1, min(3, shape[2]))), draw(st.integers(1, min(3, shape[3])))]
    pads = [draw(st.integers(0, kernel[i % 2] - 1)) for i in range(4)]
    attributes = {"kernel_shape": kernel, "strides": [draw(st.integers(1, 2)) for _ in range(2)], "pads": pads}
    attributes["ceil_mode"] = draw(st.integers(0, 1)) if not _ceil_window_in_padding(shape, attributes) else 0
    if op == "AveragePool":
        attributes["count_include_pad"] = draw(st.integers(0, 1))
    return g.add(op, [x], **attributes)


def _ceil_window_in_padding(shape: tuple[int, ...], attributes: dict) -> bool:
    """Whether ceil_mode would add a window starting in the end padding: onnx shape inference (opset 13) counts it,
    ONNX Runtime drops it, so the two oracles disagree."""
    for axis, size in enumerate(shape[2:]):
        kernel, stride = attributes["kernel_shape"][axis], attributes["strides"][axis]
        begin, end = attributes["pads"][axis], attributes["pads"][axis + 2]
        windows = -(-(size + begin + end - kernel) // stride) + 1
        if (windows - 1) * stride >= size + begin:
            return True
    return False


def _binary(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    op = draw(st.sampled_from(["Add", "Mul", "Sub", "Div"]))
    same = [name for name, s in g.shapes.items() if s == shape and name != x]
    if same and draw(st.booleans()) and op != "Div":
        other = draw(st.sampled_from(sorted(same)))
    else:  # a broadcast initializer: a suffix of the shape, some dimensions 1
        rank = draw(st.integers(0, len(shape)))
        suffix = tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - rank :])
        other = g.weight(suffix, low=0.5) if op == "Div" else g.weight(suffix)
    operands = [x, other] if op == "Div" or draw(st.booleans()) else [other, x]
    return g.add(op, operands)


def _activation(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    op = draw(st.sampled_from([*ACTIVATIONS, "Clip", "PRelu"]))
    if op == "Clip":
        low = draw(st.sampled_from([-1.0, -0.5, 0.0]))
        high = low + draw(st.sampled_from([0.5, 1.0, 6.0]))
        return g.add("Clip", [x, _scalar(g, low), _scalar(g, high)])
    if op == "PRelu":
        per_channel = len(shape) >= 2 and draw(st.booleans())
        slope = (shape[1],) + (1,) * (len(shape) - 2) if per_channel else (1,)
        return g.add("PRelu", [x, g.weight(slope)])
    attributes = {name: draw(values) for name, values in ACTIVATIONS[op].items()}
    return g.add(op, [x], **attributes)


def _scalar(g: _Graph, value: float) -> str:
    name = g.name("s")
    g.initializers.append(numpy_helper.from_array(np.array(value, np.float32), name))
    return name


def _batch_norm(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    c = (shape[1],)
    epsilon = draw(st.sampled_from([1e-5, 1e-3]))
    inputs = [x, g.weight(c), g.weight(c), g.weight(c), g.weight(c, low=0.5)]
    return g.add("BatchNormalization", inputs, epsilon=epsilon)


def _lrn(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    size = draw(st.sampled_from([1, 3, 5]))
    return g.add("LRN", [x], size=size, alpha=draw(st.sampled_from([1e-4, 0.1])), beta=0.75, bias=1.0)


def _softmax(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return g.add(draw(st.sampled_from(["Softmax", "LogSoftmax"])), [x], axis=axis)


def _concat(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    axis = draw(st.integers(0, len(shape) - 1))
    same = sorted(name for name, s in g.shapes.items() if s == shape and name != x)
    if same and draw(st.booleans()):
        other = draw(st.sampled_from(same))
    else:
        other = g.weight(shape[:axis] + (draw(st.integers(1, 3)),) + shape[axis + 1 :])
    return g.add("Concat", [x, other] if draw(st.booleans()) else [other, x], axis=axis)


def _slice(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    axis = draw(st.integers(0, len(shape) - 1))
    size = shape[axis]
    step = draw(st.sampled_from([1, 1, 2, -1]))
    start = draw(st.integers(0, size - 1))
    if step > 0:
        end = draw(st.integers(start + 1, size + 1))
    else:
        end = draw(st.integers(-size - 1, start - 1)) if start > 0 else -size - 1
    return g.add("Slice", [x, g.ints([start]), g.ints([end]), g.ints([axis]), g.ints([step])])


def _split(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    axis = draw(st.integers(0, len(shape) - 1))
    if shape[axis] < 2:
        return None
    first = draw(st.integers(1, shape[axis] - 1))
    return g.add("Split", [x, g.ints([first, shape[axis] - first])], n_outputs=2, axis=axis)


def _pad(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    mode = draw(st.sampled_from(["constant", "reflect", "edge"]))
    limit = [min(2, d - 1) if mode == "reflect" else 2 for d in shape]
    pads = [draw(st.integers(0, limit[i % len(shape)])) for i in range(2 * len(shape))]
    inputs = [x, g.ints(pads)] + ([_scalar(g, draw(st.sampled_from([0.0, 1.5])))] if mode == "constant" else [])
    return g.add("Pad", inputs, mode=mode)


def _transpose(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    return g.add("Transpose", [x], perm=draw(st.permutations(range(len(shape)))))


def _reshape(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    if draw(st.booleans()):
        return g.add("Flatten", [x], axis=draw(st.integers(0, len(shape))))
    total = int(np.prod(shape))
    first = draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    target = [first, -1] if draw(st.booleans()) else [first, 1, -1, 1]
    return g.add("Reshape", [x, g.ints(target)])


def _gemm(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    k, n = shape[-1], draw(st.integers(1, 12))
    if len(shape) != 2 or draw(st.booleans()):
        return g.add("MatMul", [x, g.weight((k, n), 1 / np.sqrt(k))])
    trans_b = draw(st.integers(0, 1))
    weight = g.weight((n, k) if trans_b else (k, n), 1 / np.sqrt(k))
    bias = [g.weight(draw(st.sampled_from([(n,), (1, n), (shape[0], n)])))] if draw(st.booleans()) else []
    alpha, beta = draw(st.sampled_from([1.0, 0.5])), draw(st.sampled_from([1.0, 2.0]))
    return g.add("Gemm", [x, weight, *bias], transB=trans_b, alpha=alpha, beta=beta)


SPATIAL = [_conv, _pool, _batch_norm, _lrn]
"""Steps for an NCHW tensor only."""
ANY_RANK = [_binary, _activation, _activation, _softmax, _concat, _slice, _split, _pad, _transpose, _reshape, _gemm]
MAX_ELEMENTS = 4096


@st.composite
def onnx_graphs(draw: st.DrawFn, max_nodes: int = 6) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A valid float32 model of 1 to `max_nodes` nodes, and a seeded input for it."""
    g = _Graph(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), ())
    if draw(st.booleans()):
        g.input_shape = tuple(draw(st.integers(1, high)) for high in (2, 6, 9, 9))
    else:
        g.input_shape = (draw(st.integers(1, 4)), draw(st.integers(1, 16)))
    g.shapes["x"] = g.input_shape
    current = "x"
    for _ in range(draw(st.integers(1, max_nodes))):
        shape = g.shapes[current]
        steps = ANY_RANK + (SPATIAL if len(shape) == 4 else [])
        produced = draw(st.sampled_from(steps))(draw, g, current, shape)
        if produced is not None and produced not in g.shapes:  # shape inference could not tell: drop the node
            g.nodes.pop()
            break
        if produced is not None and 0 < int(np.prod(g.shapes[produced])) <= MAX_ELEMENTS:
            current = produced
        elif produced is not None:
            break
    model = g.model(current if current != "x" else g.add("Identity", ["x"]))
    onnx.checker.check_model(model, full_check=True)
    feeds = {"x": g.rng.uniform(-1.0, 1.0, g.input_shape).astype(np.float32)}
    return model, feeds
