"""Numerics of graph-to-te and te-inline against numpy, via a small reference te interpreter."""

from __future__ import annotations

import operator
from collections import ChainMap
from collections.abc import Callable, Mapping
from string import Template
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import get_all_dialects, graph, te
from minimlc.lowering.graph_to_te.graph_to_te import GraphToTePass
from minimlc.lowering.te.te_inline import TeInlinePass

Shape = tuple[int, ...]

# --- a reference interpreter for te ---------------------------------------------------------

_SCALAR: dict[str, Callable[..., Any]] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.negf": np.negative,
    "math.exp": np.exp,
    "math.tanh": np.tanh,
    "arith.addi": operator.add,
    "arith.muli": operator.mul,
    "arith.divui": operator.floordiv,
    "arith.remui": operator.mod,
}
_COMBINERS: dict[str, tuple[np.float32, Callable[[Any, Any], Any]]] = {
    "sum": (np.float32(0), np.add),
    "max": (np.float32(-np.inf), np.maximum),
    "max_nnan": (np.float32(-np.inf), np.maximum),
}


def _body(compute: te.ComputeOp, indices: Shape, env: Mapping[SSAValue, Any]) -> Any:
    values = ChainMap[SSAValue, Any](dict(zip(compute.body.block.args, indices)), dict(env))
    for op in compute.body.block.ops:
        match op:
            case te.YieldOp():
                return values[op.value]
            case te.ReadOp():
                tensor = values[op.tensor]
                position = tuple(values[index] for index in op.indices)
                assert all(0 <= i < n for i, n in zip(position, tensor.shape)), position
                values[op.result] = tensor[position]
            case _ if op.name == "arith.constant":
                attr = op.properties["value"]
                assert isinstance(attr, builtin.IntegerAttr | builtin.FloatAttr)
                is_float = isinstance(attr, builtin.FloatAttr)
                values[op.results[0]] = np.float32(attr.value.data) if is_float else attr.value.data
            case _:
                values[op.results[0]] = _SCALAR[op.name](*(values[v] for v in op.operands))
    raise AssertionError("te.compute body without te.yield")


def _evaluate(compute: te.ComputeOp, env: Mapping[SSAValue, Any]) -> np.ndarray:
    result = np.empty(compute.shape, np.float32)
    for indices in np.ndindex(*compute.shape):
        if compute.combiner is None:
            result[indices] = _body(compute, indices, env)
            continue
        accumulator, combine = _COMBINERS[compute.combiner.data]
        for axes in np.ndindex(*compute.extents):
            accumulator = combine(accumulator, _body(compute, indices + axes, env))
        result[indices] = accumulator
    return result


def interpret(function: func.FuncOp, inputs: list[np.ndarray], weights: Mapping[str, np.ndarray]) -> np.ndarray:
    """Run a function of te computes and graph.weight handles on numpy inputs; return its result."""
    env: dict[SSAValue, Any] = dict(zip(function.body.block.args, inputs))
    for op in function.body.block.ops:
        match op:
            case te.ComputeOp():
                env[op.result] = _evaluate(op, env)
            case graph.WeightOp():
                env[op.result] = weights[op.weight_name.data]
            case func.ReturnOp():
                return env[op.arguments[0]]
            case _:
                raise AssertionError(f"the interpreter does not run {op.name}")
    raise AssertionError("function without func.return")


# --- cases -----------------------------------------------------------------------------------


def _context() -> Context:
    ctx = Context()
    for name, loader in get_all_dialects().items():
        if name in ("builtin", "func", "arith", "math", "graph", "te"):
            ctx.register_dialect(name, loader)
    return ctx


def _type(shape: Shape) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


def _lower(text: str, inline: bool) -> tuple[builtin.ModuleOp, func.FuncOp]:
    ctx = _context()
    module = Parser(ctx, text).parse_module()
    GraphToTePass().apply(ctx, module)
    if inline:
        TeInlinePass().apply(ctx, module)
    module.verify()
    function = module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    graph_ops = [op for op in module.walk() if op.dialect_name() == "graph"]
    assert all(isinstance(op, graph.WeightOp) for op in graph_ops)
    return module, function


def _check(op: str, shapes: list[Shape], reference: Callable[..., np.ndarray], inline: bool) -> None:
    """Lower `%r = op` on inputs `%x0`.. of `shapes` (`$t0`.. and `$r` in `op` stand for the
    types) and compare with `reference` on random data."""
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-2, 2, shape).astype(np.float32) for shape in shapes]
    expected = np.asarray(reference(*inputs), np.float32)
    types = {f"t{n}": _type(shape) for n, shape in enumerate(shapes)} | {"r": _type(expected.shape)}
    args = ", ".join(f"%x{n}: {_type(shape)}" for n, shape in enumerate(shapes))
    text = (
        f"func.func @main({args}) -> {types['r']} {{\n"
        f"  %r = {Template(op).substitute(types)}\n"
        f"  func.return %r : {types['r']}\n}}"
    )
    _, function = _lower(text, inline)
    np.testing.assert_allclose(interpret(function, inputs, {}), expected, rtol=1e-5, atol=1e-6)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
BINARY_SHAPES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1, 4), (3, 1)),
    ((1,), (2, 3)),
    ((4, 1), (1,)),
]
UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "exp": np.exp,
}
GEMMS = [  # (trans_a, trans_b, alpha, beta, shape of a, b, c)
    (False, False, 1.0, 1.0, (3, 4), (4, 5), None),
    (True, False, 1.0, 1.0, (4, 3), (4, 5), None),
    (False, True, 1.0, 1.0, (3, 4), (5, 4), (5,)),
    (True, True, 1.0, 1.0, (4, 3), (5, 4), (3, 5)),
    (False, False, 0.5, 1.0, (3, 4), (4, 5), (3, 1)),
    (False, False, 2.0, -1.5, (3, 4), (4, 5), (1, 5)),
    (False, True, 1.0, 0.25, (3, 4), (5, 4), (1,)),
]
MATMULS = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
]
SOFTMAXES = [((2, 5), 1), ((2, 5), 0), ((2, 3, 4), 1), ((3,), 0), ((2, 1, 3), 1)]
RESHAPES = [
    ((2, 3, 4), (6, 4)),
    ((2, 3, 4), (4, 6)),
    ((24,), (2, 3, 4)),
    ((2, 3, 4), (24,)),
    ((6, 4), (3, 2, 4)),
    ((2, 3, 4), (3, 2, 4)),
    ((2, 3, 4), (2, 12, 1)),
    ((1, 6), (3, 1, 2)),
    ((1, 1, 6), (6,)),
    ((2, 3), (2, 3)),
]
TRANSPOSES = [
    ((2, 3), (1, 0)),
    ((2, 3, 4), (2, 0, 1)),
    ((1, 2, 3), (0, 2, 1)),
    ((2, 3, 4), (0, 1, 2)),
]
inline_modes = pytest.mark.parametrize("inline", [False, True], ids=["te", "inlined"])


@inline_modes
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
def test_binary(name: str, shapes: tuple[Shape, ...], inline: bool) -> None:
    _check(f"graph.{name} %x0, %x1 : ($t0, $t1) -> $r", list(shapes), BINARY[name], inline)


@inline_modes
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(5,), (2, 3)], ids=str)
def test_unary(name: str, shape: Shape, inline: bool) -> None:
    _check(f"graph.{name} %x0 : $r", [shape], UNARY[name], inline)


@inline_modes
@pytest.mark.parametrize(("trans_a", "trans_b", "alpha", "beta", "a", "b", "c"), GEMMS, ids=str)
def test_gemm(
    trans_a: bool,
    trans_b: bool,
    alpha: float,
    beta: float,
    a: Shape,
    b: Shape,
    c: Shape | None,
    inline: bool,
) -> None:
    def reference(x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        product = alpha * ((x.T if trans_a else x) @ (y.T if trans_b else y))
        return product if z is None else product + beta * z

    attrs = [f"alpha = {alpha} : f32", f"beta = {beta} : f32"]
    attrs += ["trans_a"] * trans_a + ["trans_b"] * trans_b
    operands, types = ("%x0, %x1", "$t0, $t1") if c is None else ("%x0, %x1, %x2", "$t0, $t1, $t2")
    op = f"graph.gemm {operands} {{{', '.join(attrs)}}} : ({types}) -> $r"
    _check(op, [a, b] if c is None else [a, b, c], reference, inline)


@inline_modes
@pytest.mark.parametrize(("a", "b"), MATMULS, ids=str)
def test_matmul(a: Shape, b: Shape, inline: bool) -> None:
    _check("graph.matmul %x0, %x1 : ($t0, $t1) -> $r", [a, b], np.matmul, inline)


@inline_modes
@pytest.mark.parametrize(("shape", "axis"), SOFTMAXES, ids=str)
def test_softmax(shape: Shape, axis: int, inline: bool) -> None:
    op = f"graph.softmax %x0 {{axis = {axis} : i64}} : $r"
    _check(op, [shape], lambda x: _softmax(x, axis), inline)


@inline_modes
def test_softmax_is_numerically_stable(inline: bool) -> None:
    x = np.array([[100.0, 90.0, 95.0], [-100.0, -90.0, -95.0]], np.float32)
    text = """func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %r = graph.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
      func.return %r : tensor<2x3xf32>
    }"""
    _, function = _lower(text, inline)
    np.testing.assert_allclose(interpret(function, [x], {}), _softmax(x, 1), rtol=1e-5, atol=1e-6)


@inline_modes
@pytest.mark.parametrize(("source", "target"), RESHAPES, ids=str)
def test_reshape(source: Shape, target: Shape, inline: bool) -> None:
    _check("graph.reshape %x0 : $t0 -> $r", [source], lambda x: x.reshape(target), inline)


@inline_modes
@pytest.mark.parametrize(("shape", "perm"), TRANSPOSES, ids=str)
def test_transpose(shape: Shape, perm: Shape, inline: bool) -> None:
    perm_text = ", ".join(map(str, perm))
    op = f"graph.transpose %x0 {{perm = array<i64: {perm_text}>}} : $t0 -> $r"
    _check(op, [shape], lambda x: x.transpose(perm), inline)


MLP = """
func.func @main(%x: tensor<2x6xf32>) -> tensor<2x4xf32> {
  %w = graph.weight "fc.weight" : tensor<4x6xf32>
  %b = graph.weight "fc.bias" : tensor<4xf32>
  %h = graph.gemm %x, %w, %b {trans_b}
      : (tensor<2x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %h : tensor<2x4xf32>
  %t = graph.reshape %r : tensor<2x4xf32> -> tensor<2x2x2xf32>
  %p = graph.transpose %t {perm = array<i64: 0, 2, 1>} : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %v = graph.weight "proj" : tensor<2x2x3xf32>
  %m = graph.matmul %p, %v : (tensor<2x2x2xf32>, tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %s = graph.reshape %m : tensor<2x2x3xf32> -> tensor<2x6xf32>
  %e = graph.sigmoid %s : tensor<2x6xf32>
  %y = graph.gemm %e, %w {trans_b} : (tensor<2x6xf32>, tensor<4x6xf32>) -> tensor<2x4xf32>
  %z = graph.softmax %y {axis = 1 : i64} : tensor<2x4xf32>
  %o = graph.reshape %z : tensor<2x4xf32> -> tensor<8xf32>
  %q = graph.reshape %o : tensor<8xf32> -> tensor<2x4xf32>
  %k = graph.transpose %q {perm = array<i64: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32>
  %d = graph.matmul %k, %x : (tensor<4x2xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
  %c = graph.mul %d, %w : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %n = graph.tanh %c : tensor<4x6xf32>
  %nt = graph.transpose %n {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %u = graph.matmul %x, %nt : (tensor<2x6xf32>, tensor<6x4xf32>) -> tensor<2x4xf32>
  %a = graph.add %u, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %a : tensor<2x4xf32>
}
"""


@pytest.mark.parametrize("inline", [False, True], ids=["te", "inlined"])
def test_chain_of_ops(inline: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 6)).astype(np.float32)
    weights = {
        "fc.weight": rng.uniform(-1, 1, (4, 6)).astype(np.float32),
        "fc.bias": rng.uniform(-1, 1, (4,)).astype(np.float32),
        "proj": rng.uniform(-1, 1, (2, 2, 3)).astype(np.float32),
    }
    w = weights["fc.weight"]
    h = np.maximum(x @ w.T + weights["fc.bias"], 0).reshape(2, 2, 2).transpose(0, 2, 1)
    y = _sigmoid((h @ weights["proj"]).reshape(2, 6)) @ w.T
    n = np.tanh((_softmax(y, 1).T @ x) * w)
    _, function = _lower(MLP, inline)
    expected = x @ n.T + weights["fc.bias"]
    np.testing.assert_allclose(interpret(function, [x], weights), expected, rtol=1e-5, atol=1e-6)


@irdl_op_definition
class _FrobnicateOp(IRDLOperation):
    """A graph op that graph-to-te has no lowering for."""

    name = "graph.frobnicate"
    input = operand_def()
    result = result_def()


def test_op_without_lowering_fails_naming_it() -> None:
    t = graph.tensor_type((2,))
    function = func.FuncOp("main", ((t,), (t,)))
    frobnicate = _FrobnicateOp.create(operands=[function.args[0]], result_types=[t])
    function.body.block.add_ops([frobnicate, func.ReturnOp(frobnicate.result)])
    with pytest.raises(PassFailedException, match=r"no lowering for 'graph\.frobnicate'"):
        GraphToTePass().apply(_context(), builtin.ModuleOp([function]))
