"""Hypothesis strategies for differential fuzzing: random valid float32 ONNX graphs from minimlc's supported op set.

`onnx_graphs()` grows a chain from one input (NCHW or 2-D): each step applies one op to the newest tensor (binary
ops and Concat sometimes take an earlier tensor of the same shape as their second operand), with attributes drawn so
the node is valid; every intermediate shape comes from onnx shape inference, and the finished model passes
`onnx.checker` and strict shape inference. Weights are seeded uniform values scaled by 1/sqrt(fan-in), so values
stay of order one along the chain.

`symbolic_onnx_graphs()` grows the same chains from `x[batch, d]`, `x[batch, seq, d]` or `x[batch, c, h, w]`:
shape inference runs at each of `SYMBOL_SIZES`, an axis whose size differs between them has a run-time size, and
the steps draw only what is valid at every size (no weight matching a run-time size, slices of such an axis to its
end or with clamped bounds, reshapes keeping it in a -1 or 0). A binary op may take a new graph input that
broadcasts against its other operand, declared with the same symbols.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

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
    """The model under construction: its inputs' declared dimensions (an int or a symbol), and each tensor's shape
    at every symbol assignment of `assignments` (one, `{}`, for a static graph)."""

    rng: np.random.Generator
    inputs: dict[str, tuple[int | str, ...]]
    assignments: list[dict[str, int]] = field(default_factory=lambda: [{}])
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    shapes_at: list[dict[str, tuple[int, ...]]] = field(default_factory=list)
    static_only: set[str] = field(default_factory=set)
    """The graph's ops that are expected to keep it from compiling with run-time dimensions (`STATIC_ONLY`)."""
    run_time_only: bool = False
    """Whether to draw only what compiles with run-time dimensions (no `STATIC_ONLY` op)."""

    def __post_init__(self) -> None:
        self.shapes_at = [
            {name: _concrete(dims, sizes) for name, dims in self.inputs.items()} for sizes in self.assignments
        ]

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Each tensor's shape at the reference assignment (the first), which the steps draw attributes from."""
        return self.shapes_at[0]

    @property
    def symbolic(self) -> bool:
        return any(isinstance(size, str) for dims in self.inputs.values() for size in dims)

    def dynamic(self, name: str) -> tuple[bool, ...]:
        """Per axis of `name`, whether its size depends on a symbol (differs between assignments)."""
        return tuple(
            len({shapes[name][axis] for shapes in self.shapes_at}) > 1 for axis in range(len(self.shapes[name]))
        )

    def symbol_of(self, name: str, axis: int) -> str | None:
        """The symbol that axis `axis` of `name` is exactly (`batch`, not `2*batch`), or None."""
        for symbol in self.assignments[0]:
            if all(shapes[name][axis] == sizes[symbol] for shapes, sizes in zip(self.shapes_at, self.assignments)):
                return symbol
        return None

    def same_shape(self, x: str) -> list[str]:
        """The tensors other than `x` of `x`'s shape at every assignment, sorted."""
        return sorted(
            name for name in self.shapes if name != x and all(shapes[name] == shapes[x] for shapes in self.shapes_at)
        )

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
        """Append the node and return its first output, whose shape onnx shape inference gives at each assignment.
        An assignment of a symbol to 0 under which the node is invalid is dropped (the graph does not take empty
        tensors there); the steps draw nodes valid at every other size."""
        outputs = [f"t{len(self.nodes)}_{i}" for i in range(n_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outputs, **attributes))
        if self.symbolic and op in STATIC_ONLY:
            self.static_only.add(op)
        for index in reversed(range(len(self.assignments))):
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model(None, index), strict_mode=True)
            except onnx.shape_inference.InferenceError:
                if not self.symbolic or 0 not in self.assignments[index].values():
                    raise
                self.drop(index)
                continue
            for info in inferred.graph.value_info:
                self.shapes_at[index][info.name] = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
        return outputs[0]

    def drop(self, index: int) -> None:
        """Run the graph at one assignment fewer."""
        del self.assignments[index], self.shapes_at[index]

    def model(self, output: str | None, assignment: int | None = None) -> onnx.ModelProto:
        """The model computing `output`, its inputs declared at assignment `assignment` (their declared dimensions,
        symbols included, when None)."""
        outputs = (
            [] if output is None else [helper.make_tensor_value_info(output, TensorProto.FLOAT, self._dims(output))]
        )
        inputs = [
            helper.make_tensor_value_info(
                name, TensorProto.FLOAT, dims if assignment is None else self.shapes_at[assignment][name]
            )
            for name, dims in self.inputs.items()
        ]
        graph = helper.make_graph(self.nodes, "fuzz", inputs, outputs, self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)

    def _dims(self, name: str) -> list[int | str | None]:
        """`name`'s dimensions as a graph declares them: static sizes, symbols, None for other run-time sizes."""
        dynamic = self.dynamic(name)
        return [self.symbol_of(name, axis) if dynamic[axis] else size for axis, size in enumerate(self.shapes[name])]


def _concrete(dims: tuple[int | str, ...], sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[d] if isinstance(d, str) else d for d in dims)


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
    return g.add("Conv", inputs, kernel_shape=kernel, dilations=dilations, strides=strides, pads=pads, group=groups)


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
    same = g.same_shape(x)
    if same and draw(st.booleans()) and op != "Div":
        other = draw(st.sampled_from(same))
    elif g.symbolic and op != "Div" and draw(st.booleans()):
        other = _new_input(draw, g, x)
    else:  # a broadcast initializer: a suffix of the shape, some dimensions 1 (those of run-time size always)
        rank = draw(st.integers(0, len(shape)))
        tail = zip(shape[len(shape) - rank :], g.dynamic(x)[len(shape) - rank :])
        suffix = tuple(1 if draw(st.booleans()) or run_time else d for d, run_time in tail)
        other = g.weight(suffix, low=0.5) if op == "Div" else g.weight(suffix)
    operands = [x, other] if op == "Div" or draw(st.booleans()) else [other, x]
    return g.add(op, operands)


def _new_input(draw: st.DrawFn, g: _Graph, x: str) -> str:
    """A new graph input broadcasting against `x`: a suffix of its dimensions, some 1, each of `x`'s symbols kept
    (shared with `x`'s inputs) or 1."""
    shape = g.shapes[x]
    rank = draw(st.integers(1, len(shape)))
    dims: list[int | str] = []
    for axis in range(len(shape) - rank, len(shape)):
        if draw(st.booleans()):
            dims.append(1)
        elif g.dynamic(x)[axis]:
            dims.append(g.symbol_of(x, axis) or 1)
        else:
            dims.append(shape[axis])
    name = f"x{len(g.inputs)}"
    g.inputs[name] = tuple(dims)
    for shapes, sizes in zip(g.shapes_at, g.assignments):
        shapes[name] = _concrete(g.inputs[name], sizes)
    return name


def _activation(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    op = draw(st.sampled_from([*ACTIVATIONS, "Clip", "PRelu"]))
    if op == "Clip":
        low = draw(st.sampled_from([-1.0, -0.5, 0.0]))
        high = low + draw(st.sampled_from([0.5, 1.0, 6.0]))
        return g.add("Clip", [x, _scalar(g, low), _scalar(g, high)])
    if op == "PRelu":
        per_channel = len(shape) >= 2 and not g.dynamic(x)[1] and draw(st.booleans())
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


def _concat(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    axis = draw(st.integers(0, len(shape) - 1))
    same = g.same_shape(x)
    if same and draw(st.booleans()):
        other = draw(st.sampled_from(same))
    elif any(run_time for other_axis, run_time in enumerate(g.dynamic(x)) if other_axis != axis):
        return None  # a weight cannot match a run-time size
    else:
        other = g.weight((*shape[:axis], draw(st.integers(1, 3)), *shape[axis + 1 :]))
    return g.add("Concat", [x, other] if draw(st.booleans()) else [other, x], axis=axis)


def _slice(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    axis = draw(st.integers(0, len(shape) - 1))
    if g.dynamic(x)[axis]:
        return _slice_run_time_axis(draw, g, x, axis)
    size = shape[axis]
    step = draw(st.sampled_from([1, 1, 2, -1]))
    start = draw(st.integers(0, size - 1))
    if step > 0:
        end = draw(st.integers(start + 1, size + 1))
    else:
        end = draw(st.integers(-size - 1, start - 1)) if start > 0 else -size - 1
    return g.add("Slice", [x, g.ints([start]), g.ints([end]), g.ints([axis]), g.ints([step])])


END = 2**63 - 1
"""A Slice end past any size: to the end of the axis."""


def _slice_run_time_axis(draw: st.DrawFn, g: _Graph, x: str, axis: int) -> str:
    """Slice an axis of run-time size: to its end (what compiles with run-time extents), else with any bounds, which
    ONNX clamps to the axis (the graph then compiles per shapes: `Slice` joins `g.static_only`)."""
    if g.run_time_only or draw(st.booleans()):
        start, end, step = draw(st.integers(0, 2)), END, 1  # empty where the run's size is at most `start`
    else:
        step = draw(st.sampled_from([1, 2, -1]))
        start = draw(st.integers(-3, 3))
        end = draw(st.sampled_from([-END, -2, 1, 3, END]))
        g.static_only.add("Slice")
    return g.add("Slice", [x, g.ints([start]), g.ints([end]), g.ints([axis]), g.ints([step])])


def _split(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    axis = draw(st.integers(0, len(shape) - 1))
    if shape[axis] < 2 or g.dynamic(x)[axis]:
        return None
    first = draw(st.integers(1, shape[axis] - 1))
    return g.add("Split", [x, g.ints([first, shape[axis] - first])], n_outputs=2, axis=axis)


def _pad(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    mode = draw(st.sampled_from(["constant", "reflect", "edge"]))
    limit = [min(2, d - 1) if mode == "reflect" else 2 for d in shape]
    limit = [0 if run_time and mode != "constant" else size for size, run_time in zip(limit, g.dynamic(x))]
    pads = [draw(st.integers(0, limit[i % len(shape)])) for i in range(2 * len(shape))]
    inputs = [x, g.ints(pads)] + ([_scalar(g, draw(st.sampled_from([0.0, 1.5])))] if mode == "constant" else [])
    return g.add("Pad", inputs, mode=mode)


def _transpose(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    return g.add("Transpose", [x], perm=draw(st.permutations(range(len(shape)))))


def _reshape(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str:
    if draw(st.booleans()):
        return g.add("Flatten", [x], axis=draw(st.integers(0, len(shape))))
    if g.symbolic and draw(st.booleans()):  # keep the leading dimension
        return g.add("Reshape", [x, g.ints([0, -1] if len(shape) > 1 else [-1, 1])])
    total = int(np.prod([d for d, run_time in zip(shape, g.dynamic(x)) if not run_time]))
    first = draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    target = [first, -1] if draw(st.booleans()) else [first, 1, -1, 1]
    return g.add("Reshape", [x, g.ints(target)])


def _gemm(draw: st.DrawFn, g: _Graph, x: str, shape: tuple[int, ...]) -> str | None:
    if g.dynamic(x)[-1]:
        return None  # the weight's rows cannot match a run-time size
    k, n = shape[-1], draw(st.integers(1, 12))
    if len(shape) != 2 or draw(st.booleans()):
        return g.add("MatMul", [x, g.weight((k, n), 1 / np.sqrt(k))])
    trans_b = draw(st.integers(0, 1))
    weight = g.weight((n, k) if trans_b else (k, n), 1 / np.sqrt(k))
    bias_shapes = [(n,), (1, n)] + ([] if g.dynamic(x)[0] else [(shape[0], n)])
    bias = [g.weight(draw(st.sampled_from(bias_shapes)))] if draw(st.booleans()) else []
    alpha, beta = draw(st.sampled_from([1.0, 0.5])), draw(st.sampled_from([1.0, 2.0]))
    return g.add("Gemm", [x, weight, *bias], transB=trans_b, alpha=alpha, beta=beta)


SPATIAL = [_conv, _pool, _batch_norm, _lrn]
"""Steps for an NCHW tensor only."""
ANY_RANK = [_binary, _activation, _activation, _softmax, _concat, _slice, _split, _pad, _transpose, _reshape, _gemm]
RUN_TIME_STEPS = [step for step in ANY_RANK if step not in (_split, _pad)]
"""The steps that compile with run-time dimensions."""
MAX_ELEMENTS = 4096
STATIC_ONLY = {"Conv", "MaxPool", "AveragePool", "BatchNormalization", "LRN", "Pad", "Split"}
"""The drawn ops that keep a graph from compiling with run-time dimensions (as does a Slice of a run-time axis to
other than its end, `_slice_run_time_axis`): their graph ops lack `RUN_TIME_DIMS` or the importer has no symbolic
shape rule for them."""
SYMBOL_SIZES = [
    {"batch": 2, "seq": 5},
    {"batch": 1, "seq": 1},
    {"batch": 7, "seq": 3},
    {"batch": 17, "seq": 17},
    {"batch": 0, "seq": 3},
    {"batch": 3, "seq": 0},
]
"""The sizes each symbolic graph runs at: the first is the reference the steps draw attributes from; 1, sizes that
are no multiple of a vector width, a larger one, and 0 (dropped where the graph takes no empty tensor)."""
MAX_RUN_ELEMENTS = 32 * MAX_ELEMENTS
"""A symbolic graph's tensors at the largest sizes (17 for a symbol of reference size 2 or 5)."""


class SymbolicCase(NamedTuple):
    """A model whose inputs have symbolic dimensions, its feeds at each of its sizes, and the `STATIC_ONLY` ops
    (and Slice) it holds."""

    model: onnx.ModelProto
    feeds: list[dict[str, np.ndarray]]
    static_only: frozenset[str]


@st.composite
def onnx_graphs(draw: st.DrawFn, max_nodes: int = 6) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A valid float32 model of 1 to `max_nodes` nodes, and a seeded input for it."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        shape = tuple(draw(st.integers(1, high)) for high in (2, 6, 9, 9))
    else:
        shape = (draw(st.integers(1, 4)), draw(st.integers(1, 16)))
    g = _Graph(rng, {"x": shape})
    model = _grow(draw, g, max_nodes)
    return model, _feeds(g, 0)


@st.composite
def symbolic_onnx_graphs(draw: st.DrawFn, max_nodes: int = 6) -> SymbolicCase:
    """A valid float32 model of 1 to `max_nodes` nodes whose input `x` is `[batch, d]`, `[batch, seq, d]` or
    `[batch, c, h, w]` (and whose other inputs, if any, share those symbols where they broadcast against `x`), with
    seeded feeds at each of `SYMBOL_SIZES` that it takes. Three in four draw only ops that compile with run-time
    dimensions; the others draw any step, and a `STATIC_ONLY` op makes the model compile per shapes."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rank = draw(st.sampled_from([2, 3, 4]))
    if rank == 4:
        dims: tuple[int | str, ...] = ("batch", *(draw(st.integers(1, high)) for high in (6, 9, 9)))
    else:
        dims = (*("batch", "seq")[: rank - 1], draw(st.integers(1, 16)))
    g = _Graph(rng, {"x": dims}, [dict(sizes) for sizes in SYMBOL_SIZES])
    g.run_time_only = draw(st.sampled_from([True, True, True, False]))
    model = _grow(draw, g, max_nodes)
    return SymbolicCase(model, [_feeds(g, index) for index in range(len(g.assignments))], frozenset(g.static_only))


def _grow(draw: st.DrawFn, g: _Graph, max_nodes: int) -> onnx.ModelProto:
    """Grow a chain of 1 to `max_nodes` steps from input `x`; the checked model computing its last tensor."""
    current = "x"
    for _ in range(draw(st.integers(1, max_nodes))):
        shape = g.shapes[current]
        steps = RUN_TIME_STEPS if g.run_time_only else ANY_RANK + (SPATIAL if len(shape) == 4 else [])
        produced = draw(st.sampled_from(steps))(draw, g, current, shape)
        if produced is not None and any(produced not in shapes for shapes in g.shapes_at):
            g.nodes.pop()  # shape inference could not tell: drop the node
            break
        if produced is not None and _within_limits(g, produced):
            current = produced
        elif produced is not None:
            break
    model = g.model(current if current != "x" else g.add("Identity", ["x"]))
    onnx.checker.check_model(model, full_check=True)
    return model


def _within_limits(g: _Graph, name: str) -> bool:
    """Whether `name` is not empty at the reference sizes and not too large at any."""
    sizes = [int(np.prod(shapes[name])) for shapes in g.shapes_at]
    return 0 < sizes[0] <= MAX_ELEMENTS and max(sizes) <= MAX_RUN_ELEMENTS


def _feeds(g: _Graph, assignment: int) -> dict[str, np.ndarray]:
    shapes = g.shapes_at[assignment]
    return {name: g.rng.uniform(-1.0, 1.0, shapes[name]).astype(np.float32) for name in g.inputs}
