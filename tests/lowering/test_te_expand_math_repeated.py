"""te-expand-math builds each expansion once and clones it: every clone reads its own operand and is the IR that
building it there gives."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from onnx import TensorProto, helper
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import builtin
from xdsl.ir import Block, Operation, SSAValue

from minimlc import InferenceSession
from minimlc.dialects import te
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.te import math_approximations
from minimlc.lowering.te.te_expand_math import TeExpandMathPass
from tests.lowering.dynamic_entry import parse

TWO_EXPS = """
func.func @two(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %s = te.compute "sum" (%i) -> tensor<8xf32> {
    %u = te.read %x[%i] : tensor<8xf32>
    %v = te.read %y[%i] : tensor<8xf32>
    %a = math.exp %u : f32
    %b = math.exp %v : f32
    %c = arith.addf %a, %b : f32
    te.yield %c : f32
  }
  func.return %s : tensor<8xf32>
}
"""


def _form(ops: Sequence[Operation], operand: SSAValue) -> list[tuple[object, ...]]:
    """Each op's name, operands (-1 for `operand`, else the position of the result among `ops`'), result types,
    properties and attributes; a KeyError for an operand from elsewhere."""
    numbers: dict[SSAValue, int] = {operand: -1}
    form: list[tuple[object, ...]] = []
    for op in ops:
        operands = tuple(numbers[value] for value in op.operands)
        form.append((op.name, operands, tuple(op.result_types), dict(op.properties), dict(op.attributes)))
        numbers.update((result, len(numbers)) for result in op.results)
    return form


def test_each_clone_reads_its_own_operand_and_equals_the_built_expansion() -> None:
    module = parse(TWO_EXPS)
    TeExpandMathPass().apply(make_context(), module)
    compute = next(op for op in module.walk() if isinstance(op, te.ComputeOp))
    ops = list(compute.body.block.ops)
    assert not any(op.name == "math.exp" for op in ops)
    u, v = ops[0].results[0], ops[1].results[0]
    add = ops[-2]
    assert add.name == "arith.addf"
    first, second = ops[2 : 2 + (len(ops) - 4) // 2], ops[2 + (len(ops) - 4) // 2 : -2]
    assert add.operands[0] is first[-1].results[0]
    assert add.operands[1] is second[-1].results[0]
    assert {operand for op in first for operand in op.operands} & {u, v} == {u}
    assert {operand for op in second for operand in op.operands} & {u, v} == {v}

    block = Block(arg_types=[builtin.f32])
    with ImplicitBuilder(block):
        math_approximations.exp(block.args[0])
    built = _form(list(block.ops), block.args[0])
    assert _form(first, u) == built
    assert _form(second, v) == built


def test_repeated_expansions_match_numpy() -> None:
    """exp(x) + exp(y) + tanh(x) * tanh(y) + erf(x) - erf(y), inlined into one kernel: two clones of each expansion
    in one body, each on its own operand."""
    nodes = [
        helper.make_node("Exp", ["x"], ["ex"]),
        helper.make_node("Exp", ["y"], ["ey"]),
        helper.make_node("Tanh", ["x"], ["tx"]),
        helper.make_node("Tanh", ["y"], ["ty"]),
        helper.make_node("Erf", ["x"], ["fx"]),
        helper.make_node("Erf", ["y"], ["fy"]),
        helper.make_node("Add", ["ex", "ey"], ["e"]),
        helper.make_node("Mul", ["tx", "ty"], ["t"]),
        helper.make_node("Sub", ["fx", "fy"], ["f"]),
        helper.make_node("Add", ["e", "t"], ["et"]),
        helper.make_node("Add", ["et", "f"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "repeated",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [64]) for name in ("x", "y")],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [64])],
    )
    session = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 64).astype(np.float32)
    y = rng.uniform(-0.5, 0.5, 64).astype(np.float32)
    (z,) = session.run(None, {"x": x, "y": y})
    erf = np.vectorize(math.erf)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    exact = np.exp(x64) + np.exp(y64) + np.tanh(x64) * np.tanh(y64) + erf(x64) - erf(y64)
    np.testing.assert_allclose(z, exact, rtol=1e-5, atol=1e-6)
