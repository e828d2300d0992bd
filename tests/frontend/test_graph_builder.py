"""`GraphBuilder`: graph ops, te-level kernels and external calls built from Python compile like an imported model."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from minimlc import GraphBuilder, InferenceSession
from minimlc.dialects import graph
from minimlc.frontend.graph_builder import GraphBuildError
from minimlc.lowering.graph_to_te.builder import build_compute, f32_constant, read
from minimlc.lowering.graph_to_te.graph_to_te import GraphToTePass
from minimlc.lowering.pipeline import make_context

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

TE_SCALE_ADD = """
func.func @scale_add(%a: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %y = te.compute "scale_add" (%i, %j) -> tensor<4x6xf32> {
    %x = te.read %a[%i, %j] : tensor<4x6xf32>
    %c = te.read %b[%j] : tensor<6xf32>
    %two = arith.constant 2.0 : f32
    %s = arith.mulf %x, %two : f32
    %r = arith.addf %s, %c : f32
    te.yield %r : f32
  }
  func.return %y : tensor<4x6xf32>
}
"""


GRAPH_WITH_WEIGHT = """
func.func @add_scale(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = graph.weight "scale" : tensor<2x3xf32>
  %y = graph.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def test_seed_mlp_with_registered_external_functions_matches_numpy() -> None:
    namespace = runpy.run_path(str(EXAMPLES / "graph_builder_mlp.py"))
    assert namespace["main"]() < 1e-4


@pytest.mark.parametrize("opt_level", [0, 3])
def test_graph_ops_by_name_and_class_with_attributes_and_array_operands(opt_level: int) -> None:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    bb = GraphBuilder()
    x = bb.input("x", (2, 3))
    y = bb.emit("gemm", x, w, None, trans_b=True)
    y = bb.emit(graph.SoftmaxOp, bb.emit("graph.relu", y), 1)
    bb.output(y, "probabilities")
    model = bb.finish()
    assert [info.name for info in model.outputs] == ["probabilities"]
    feed = rng.standard_normal((2, 3)).astype(np.float32)
    (result,) = InferenceSession.from_imported(model, opt_level=opt_level).run(None, {"x": feed})
    logits = np.maximum(feed @ w.T, 0)
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


def te_function_from_builder() -> func.FuncOp:
    """`relu(a) + 1` as a te-level function built with lowering/graph_to_te/builder.py."""
    tensor = TensorType(f32, [4, 6])
    block = Block(arg_types=[tensor])
    compute = build_compute(
        "relu_plus_one",
        (4, 6),
        lambda idx: arith.AddfOp(
            arith.MaximumfOp(read(block.args[0], idx), f32_constant(0.0)), f32_constant(1.0)
        ).result,
    )
    block.add_ops([compute, func.ReturnOp(compute.result)])
    return func.FuncOp("relu_plus_one", ([tensor], [tensor]), Region(block))


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_emit_te_uses_te_functions_as_kernels(opt_level: int) -> None:
    parsed = Parser(make_context(), TE_SCALE_ADD).parse_module()
    rng = np.random.default_rng(2)
    bias = rng.standard_normal(6).astype(np.float32)
    bb = GraphBuilder()
    x = bb.input("x", (4, 6))
    h = bb.emit_te(parsed, bb.emit("neg", x), bias)
    y = bb.emit_te(te_function_from_builder(), h)
    bb.output(bb.emit("exp", y))
    feed = rng.standard_normal((4, 6)).astype(np.float32)
    (result,) = InferenceSession.from_imported(bb.finish(), opt_level=opt_level).run(None, {"x": feed})
    np.testing.assert_allclose(result, np.exp(np.maximum(-2 * feed + bias, 0) + 1), rtol=1e-5)


def test_errors_name_what_is_wrong() -> None:
    bb = GraphBuilder()
    x = bb.input("x", (2, 3))
    with pytest.raises(GraphBuildError, match="no graph op named 'frobnicate'"):
        bb.emit("frobnicate", x)
    with pytest.raises(GraphBuildError, match="graph.gemm: cannot build it"):
        bb.emit("gemm", x)
    with pytest.raises(GraphBuildError, match="dtype complex64 is not supported"):
        bb.input("h", (2,), np.complex64)
    with pytest.raises(GraphBuildError, match="emit_te @scale_add: operand 0 is tensor<2x3xf32>"):
        bb.emit_te(Parser(make_context(), TE_SCALE_ADD).parse_module(), x, np.zeros(6, np.float32))
    with pytest.raises(GraphBuildError, match="the graph has no output"):
        bb.finish()
    with pytest.raises(GraphBuildError, match="the module holds 0 functions"):
        bb.emit_te(ModuleOp([]), x)
    lowered = Parser(make_context(), GRAPH_WITH_WEIGHT).parse_module()
    GraphToTePass().apply(make_context(), lowered)  # a te-level function as graph-to-te makes it, weight handle kept
    with pytest.raises(GraphBuildError, match="reads weight 'scale', which this builder does not hold"):
        bb.emit_te(lowered, x)
    bb.weight("scale", np.ones((2, 3), np.float32))
    bb.output(bb.emit_te(lowered, x))
    (result,) = InferenceSession.from_imported(bb.finish()).run(None, {"x": np.full((2, 3), 2, np.float32)})
    np.testing.assert_array_equal(result, np.full((2, 3), 3, np.float32))


def test_call_extern_with_several_results_builds_one_call() -> None:
    bb = GraphBuilder()
    x = bb.input("x", (4,), np.int64)
    low, mask = bb.call_extern("env.split", [x], [(4,), (4,)], [np.int64, np.bool_])
    bb.output(low)
    bb.output(mask)
    model = bb.finish()
    calls = [op for op in model.module.walk() if isinstance(op, graph.CallExternOp)]
    assert len(calls) == 1 and [info.dtype for info in model.outputs] == [np.dtype(np.int64), np.dtype(np.bool_)]
