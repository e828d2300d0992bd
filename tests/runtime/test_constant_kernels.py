"""Kernels that read only weights run once, at load time (loop-hoist-constants + the init entry)."""

from __future__ import annotations

import re

import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering.pipeline import make_context

GRAPH = """
func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w1 = graph.weight "w1" : tensor<3x4xf32>
  %w2 = graph.weight "w2" : tensor<4xf32>
  %p = graph.mul %w1, %w2 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %e = graph.exp %p : tensor<3x4xf32>
  %y = graph.add %x, %e : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
"""


def test_weight_only_subgraph_is_precomputed_once() -> None:
    rng = np.random.default_rng(0)
    weights = {
        "w1": rng.standard_normal((3, 4)).astype(np.float32),
        "w2": rng.standard_normal(4).astype(np.float32),
    }
    float32 = np.dtype("float32")
    imported = ImportedModel(
        Parser(make_context(), GRAPH).parse_module(),
        weights,
        [TensorInfo("x", (3, 4), float32)],
        [TensorInfo("y", (3, 4), float32)],
    )
    session = InferenceSession.from_imported(imported)
    main = session.llvm_ir.split("define void @main_packed(")[1].split("\n}\n")[0]
    init = session.llvm_ir.split("define void @main_init_packed(")[1].split("\n}\n")[0]
    assert re.findall(r"call \w* ?void @(\w+?)_\d+\(", main) == ["add"], "only the add kernel may run per call"
    assert re.findall(r"call \w* ?void @(\w+?)_\d+\(", init) == ["exp"], "mul fused into exp, run at load time"
    x = rng.standard_normal((3, 4)).astype(np.float32)
    expected = x + np.exp(weights["w1"] * weights["w2"])
    for _ in range(3):
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)


def test_batch_norm_factor_is_computed_at_load_time() -> None:
    """A batch normalisation no convolution absorbs (after a ReLU): its per-channel `scale / sqrt(var + eps)` is a
    kernel of weights alone, run by the init entry; the per-run kernel only centres, scales and shifts."""
    rng = np.random.default_rng(1)
    channels = 24
    statistics = {
        "scale": rng.uniform(0.5, 2.0, channels),
        "bias": rng.standard_normal(channels),
        "mean": rng.standard_normal(channels),
        "var": rng.uniform(0.5, 2.0, channels),
    }
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("BatchNormalization", ["r", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3),
        ],
        "bn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 5, 5])],
        [numpy_helper.from_array(value.astype(np.float32), name) for name, value in statistics.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=9)
    session = InferenceSession(model, cache=False)
    main = session.llvm_ir.split("define void @main_packed(")[1].split("\n}\n")[0]
    init = session.llvm_ir.split("define void @main_init_packed(")[1].split("\n}\n")[0]
    assert re.findall(r"call \w* ?void @(\w+?)_\d+\(", main) == ["batch_norm"], "only the normalisation per run"
    assert re.findall(r"call \w* ?void @(\w+?)_\d+\(", init) == ["batch_norm_factor"]
    x = rng.standard_normal((1, channels, 5, 5)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)
