"""Repeated graph ops lowered once (lowering/graph_to_te/repeated.py): the first op of each signature is built, the
others cloned, and the module is the one building every op gives, names and kernel groups included."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriter

from minimlc import InferenceSession
from minimlc.dialects import graph
from minimlc.lowering.graph_to_te.builder import KernelGroups
from minimlc.lowering.graph_to_te.graph_to_te import lowering_patterns
from minimlc.lowering.graph_to_te.repeated import RepeatedOps
from minimlc.lowering.pipeline import make_context

LAYERS = """
func.func @layers(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %n0 = graph.layer_norm %x, %w, %v {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (T, W, W) -> T
  %n1 = graph.layer_norm %n0, %v, %w {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (T, W, W) -> T
  %n2 = graph.layer_norm %n1, %v, %w {axis = 1 : i64, epsilon = 1.0e-06 : f32} : (T, W, W) -> T
  %square = graph.mul %n2, %n2 : (T, T) -> T
  %again = graph.mul %n1, %n1 : (T, T) -> T
  %product = graph.mul %again, %square : (T, T) -> T
  func.return %product, %n0 : tensor<2x8xf32>, tensor<2x8xf32>
}
""".replace("(T, W, W) -> T", "(tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>").replace(
    "T", "tensor<2x8xf32>"
)


def lowered(clone_repeated: bool) -> tuple[str, list[str]]:
    """`LAYERS` with every graph op built, or with `RepeatedOps` cloning repeated ones; the ops built."""
    module = Parser(make_context(), LAYERS).parse_module()
    groups = KernelGroups()
    patterns = lowering_patterns(module, groups)
    repeated = RepeatedOps(groups)
    built: list[str] = []

    def build(op: Operation, rewriter: PatternRewriter) -> None:
        built.append(op.name)
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return

    for op in [op for op in module.walk() if op.name.startswith("graph.")]:
        rewriter = PatternRewriter(op)
        if clone_repeated:
            repeated.lower(op, rewriter, lambda op=op, rewriter=rewriter: build(op, rewriter))
        else:
            build(op, rewriter)
    return str(module), built


def test_repeated_ops_are_cloned_into_the_module_building_every_op_gives() -> None:
    expected, _ = lowered(clone_repeated=False)
    got, built = lowered(clone_repeated=True)
    # %n1 is %n0's signature; %n2 differs in epsilon; %again is %square's (one value twice), %product reads two
    assert built == ["graph.layer_norm", "graph.layer_norm", "graph.mul", "graph.mul"]
    assert "kernel_group = 2" in got
    assert got == expected


def test_an_op_of_another_signature_is_built() -> None:
    """Operands that are one value, and result names, are in the signature: each of these is built."""
    repeated = RepeatedOps(KernelGroups())
    module = Parser(make_context(), LAYERS).parse_module()
    square, again, product = [op for op in module.walk() if isinstance(op, graph.MulOp)]
    assert repeated._signature(square) == repeated._signature(again)
    assert repeated._signature(square) != repeated._signature(product)
    again.results[0].name_hint = None
    assert repeated._signature(square) != repeated._signature(again)


def encoder(layers: int) -> onnx.ModelProto:
    """`layers` times LayerNorm(x @ W + b) + x, then Softmax: every layer the same ops, with its own weights."""
    rng = np.random.default_rng(0)
    nodes, weights, x = [], [], "x"
    for n in range(layers):
        weights += [
            numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32) / 4, f"w{n}"),
            numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), f"b{n}"),
            numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), f"g{n}"),
        ]
        nodes += [
            helper.make_node("MatMul", [x, f"w{n}"], [f"m{n}"]),
            helper.make_node("Add", [f"m{n}", f"b{n}"], [f"a{n}"]),
            helper.make_node("LayerNormalization", [f"a{n}", f"g{n}", f"b{n}"], [f"n{n}"], axis=-1),
            helper.make_node("Add", [f"n{n}", x], [f"y{n}"]),
        ]
        x = f"y{n}"
    nodes.append(helper.make_node("Softmax", [x], ["out"], axis=-1))
    graph_proto = helper.make_graph(
        nodes,
        "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4, 16])],
        weights,
    )
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 17)])


def test_a_model_of_repeated_layers_computes_as_onnxruntime() -> None:
    import onnxruntime

    model = encoder(2)
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(InferenceSession(model).run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)
