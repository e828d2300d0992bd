"""graph-to-te of the neural-network ops, run by a te interpreter whose reads assert they are in bounds: padded
windows must clamp before reading. Results are compared with ONNX Runtime on the equivalent ONNX node."""

from __future__ import annotations

import operator
from collections import ChainMap
from collections.abc import Callable, Mapping
from string import Template
from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from minimlc.dialects import get_all_dialects, te
from minimlc.lowering.graph_to_te.graph_to_te import GraphToTePass
from minimlc.lowering.te.te_inline import TeInlinePass

Shape = tuple[int, ...]

_SCALAR: dict[str, Callable[..., Any]] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.select": lambda c, a, b: a if c else b,
    "arith.andi": operator.and_,
    "arith.addi": operator.add,
    "arith.subi": operator.sub,
    "arith.muli": operator.mul,
    "arith.divui": operator.floordiv,
    "arith.remui": operator.mod,
    "arith.maxsi": max,
    "arith.minsi": min,
    "math.sqrt": np.sqrt,
    "math.powf": np.power,
}
_PREDICATES: dict[str, Callable[[Any, Any], bool]] = {
    "sge": operator.ge,
    "slt": operator.lt,
    "olt": operator.lt,
    "ogt": operator.gt,
}
_COMBINERS: dict[str, tuple[np.float32, Callable[[Any, Any], Any]]] = {
    "sum": (np.float32(0), np.add),
    "max": (np.float32(-np.inf), np.maximum),
    "maxnum": (np.float32(np.nan), np.fmax),
}


def _body(compute: te.ComputeOp, indices: tuple[int, ...], env: Mapping[SSAValue, Any]) -> Any:
    values = ChainMap[SSAValue, Any](dict(zip(compute.body.block.args, indices)), dict(env))
    for op in compute.body.block.ops:
        if isinstance(op, te.YieldOp):
            return values[op.value]
        if isinstance(op, te.ReadOp):
            tensor = values[op.tensor]
            position = tuple(values[index] for index in op.indices)
            assert all(0 <= i < n for i, n in zip(position, tensor.shape)), f"out-of-bounds read {position}"
            values[op.result] = tensor[position]
        elif isinstance(op, arith.ConstantOp):
            attr = op.value
            assert isinstance(attr, builtin.IntegerAttr | builtin.FloatAttr)
            is_float = isinstance(attr, builtin.FloatAttr)
            values[op.result] = np.float32(attr.value.data) if is_float else attr.value.data
        elif isinstance(op, arith.CmpiOp | arith.CmpfOp):
            predicate = (
                arith.CMPI_COMPARISON_OPERATIONS if isinstance(op, arith.CmpiOp) else arith.CMPF_COMPARISON_OPERATIONS
            )[op.predicate.value.data]
            values[op.result] = _PREDICATES[predicate](values[op.lhs], values[op.rhs])
        else:
            values[op.results[0]] = _SCALAR[op.name](*(values[v] for v in op.operands))
    raise AssertionError("te.compute body without te.yield")


def _interpret(function: func.FuncOp, inputs: list[np.ndarray]) -> np.ndarray:
    env: dict[SSAValue, Any] = dict(zip(function.body.block.args, inputs))
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return env[op.arguments[0]]
        assert isinstance(op, te.ComputeOp), op.name
        result = np.empty(op.shape, np.float32)
        for indices in np.ndindex(*op.shape):
            if op.combiner is None:
                result[indices] = _body(op, indices, env)
                continue
            accumulator, combine = _COMBINERS[op.combiner.data]
            for axes in np.ndindex(*op.extents):
                accumulator = combine(accumulator, _body(op, indices + axes, env))
            result[indices] = accumulator
        env[op.result] = result
    raise AssertionError("function without func.return")


def _type(shape: Shape) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


def _lower(op: str, shapes: list[Shape], result: Shape, inline: bool) -> func.FuncOp:
    ctx = Context()
    for name, loader in get_all_dialects().items():
        if name in ("builtin", "func", "arith", "math", "graph", "te"):
            ctx.register_dialect(name, loader)
    args = ", ".join(f"%x{n}: {_type(shape)}" for n, shape in enumerate(shapes))
    types = ", ".join(_type(shape) for shape in shapes)
    text = (
        f"func.func @main({args}) -> {_type(result)} {{\n"
        f"  %r = {Template(op).substitute(types=types, r=_type(result))}\n"
        f"  func.return %r : {_type(result)}\n}}"
    )
    module = Parser(ctx, text).parse_module()
    GraphToTePass().apply(ctx, module)
    if inline:
        TeInlinePass().apply(ctx, module)
    module.verify()
    function = module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    return function


def _onnx_runtime(op_type: str, inputs: list[np.ndarray], opset: int = 19, **attributes: Any) -> np.ndarray:
    names = [f"x{n}" for n in range(len(inputs))]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["y"], **attributes)],
        "reference",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, dict(zip(names, inputs)))[0])


def _array(values: list[int]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


inline_modes = pytest.mark.parametrize("inline", [False, True], ids=["te", "inlined"])

CONVS = [  # (x, w, strides, pads, dilations, group)
    ((1, 2, 5, 5), (3, 2, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ((1, 2, 6, 5), (2, 2, 2, 3), [2, 2], [0, 2, 1, 0], [2, 1], 1),
    ((1, 4, 4, 4), (4, 1, 3, 3), [2, 1], [1, 1, 1, 1], [1, 1], 4),
    ((1, 4, 5), (6, 2, 3), [1], [2, 1], [1], 2),
]


@inline_modes
@pytest.mark.parametrize(("x", "w", "strides", "pads", "dilations", "group"), CONVS, ids=str)
def test_conv(
    x: Shape,
    w: Shape,
    strides: list[int],
    pads: list[int],
    dilations: list[int],
    group: int,
    inline: bool,
) -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x, w, (w[0],))]
    expected = _onnx_runtime("Conv", inputs, strides=strides, pads=pads, dilations=dilations, group=group)
    attrs = f"strides = {_array(strides)}, pads = {_array(pads)}, dilations = {_array(dilations)}"
    op = f"graph.conv %x0, %x1, %x2 {{{attrs}, group = {group} : i64}} : ($types) -> $r"
    function = _lower(op, [x, w, (w[0],)], expected.shape, inline)
    np.testing.assert_allclose(_interpret(function, inputs), expected, rtol=1e-5, atol=1e-6)


POOLS = [  # (x, kernel, strides, pads, dilations, ceil_mode)
    ((1, 1, 5, 5), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False),
    ((1, 2, 6, 5), [3, 2], [2, 2], [1, 0, 0, 1], [1, 1], True),
    ((1, 1, 7, 7), [2, 2], [1, 2], [1, 1, 1, 1], [2, 2], False),
]


@inline_modes
@pytest.mark.parametrize(("x", "kernel", "strides", "pads", "dilations", "ceil_mode"), POOLS, ids=str)
@pytest.mark.parametrize(
    ("op_type", "name", "extra"),
    [
        ("MaxPool", "max_pool", {}),
        ("AveragePool", "average_pool", {}),
        ("AveragePool", "average_pool", {"count_include_pad": 1}),
    ],
    ids=["max", "avg", "avg-include-pad"],
)
def test_pool(
    x: Shape,
    kernel: list[int],
    strides: list[int],
    pads: list[int],
    dilations: list[int],
    ceil_mode: bool,
    op_type: str,
    name: str,
    extra: dict[str, int],
    inline: bool,
) -> None:
    data = np.random.default_rng(1).uniform(-1, 1, x).astype(np.float32)
    attributes = {"kernel_shape": kernel, "strides": strides, "pads": pads, "dilations": dilations}
    expected = _onnx_runtime(op_type, [data], ceil_mode=int(ceil_mode), **attributes, **extra)
    units = ", ceil_mode" * ceil_mode + ", count_include_pad" * bool(extra)
    attrs = ", ".join(f"{key} = {_array(value)}" for key, value in attributes.items()) + units
    function = _lower(f"graph.{name} %x0 {{{attrs}}} : $types -> $r", [x], expected.shape, inline)
    np.testing.assert_allclose(_interpret(function, [data]), expected, rtol=1e-5, atol=1e-6)


@inline_modes
@pytest.mark.parametrize(
    ("pads", "mode"),
    [
        ([1, 2, 2, 0], "constant"),
        ([2, 2, 1, 1], "reflect"),
        ([3, 0, 1, 4], "edge"),
        ([4, 1, 0, 5], "wrap"),
        ([-1, 1, 1, -2], "constant"),
    ],
    ids=str,
)
def test_pad(pads: list[int], mode: str, inline: bool) -> None:
    data = np.random.default_rng(2).uniform(-1, 1, (3, 4)).astype(np.float32)
    numpy_pads = [(max(pads[0], 0), max(pads[2], 0)), (max(pads[1], 0), max(pads[3], 0))]
    expected = np.pad(
        data,
        numpy_pads,
        mode={"edge": "edge", "wrap": "wrap", "reflect": "reflect"}.get(mode, "constant"),
    )
    crop = [
        slice(-min(pads[0], 0), expected.shape[0] + min(pads[2], 0)),
        slice(-min(pads[1], 0), expected.shape[1] + min(pads[3], 0)),
    ]
    expected = expected[tuple(crop)]
    op = f'graph.pad %x0 {{pads = {_array(pads)}, mode = "{mode}"}} : ($types) -> $r'
    function = _lower(op, [(3, 4)], expected.shape, inline)
    np.testing.assert_allclose(_interpret(function, [data]), expected, rtol=1e-6, atol=0)


@inline_modes
def test_lrn(inline: bool) -> None:
    data = np.random.default_rng(3).uniform(-1, 1, (1, 5, 2, 2)).astype(np.float32)
    expected = _onnx_runtime("LRN", [data], opset=13, size=3, alpha=0.1, beta=0.75, bias=1.5)
    attrs = "size = 3 : i64, alpha = 1.000000e-01 : f32, beta = 7.500000e-01 : f32, bias = 1.500000e+00 : f32"
    function = _lower(f"graph.lrn %x0 {{{attrs}}} : $r", [data.shape], data.shape, inline)
    np.testing.assert_allclose(_interpret(function, [data]), expected, rtol=1e-5, atol=1e-6)
