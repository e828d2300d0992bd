"""Selects that choose per lane (PReLU, LeakyReLU) vectorize as LLVM vector selects, alone and folded into a GEMM's
write-back; a Gemm -> PRelu -> Tanh model used to fail at O3 ("'arith.select' chooses per lane")."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.runtime.jit import JitModule


def gemm_prelu_tanh_model(features: int = 32) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array(rng.standard_normal((features, 16)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(features).astype(np.float32), "b"),
        numpy_helper.from_array(rng.standard_normal(features).astype(np.float32), "slope"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
        helper.make_node("PRelu", ["g", "slope"], ["p"]),
        helper.make_node("Tanh", ["p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "gemm_prelu_tanh",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, features])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_gemm_prelu_tanh_matches_onnxruntime(opt_level: int) -> None:
    model = gemm_prelu_tanh_model()
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    expected = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )[0]
    (result,) = InferenceSession(model, opt_level=opt_level, num_threads=1).run(None, {"x": x})
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


def test_per_lane_select_is_a_vector_select() -> None:
    compiled = compile_model(import_model(gemm_prelu_tanh_model()), target="x86-64-v3")
    # The GEMM's write-back covers two AVX2 vectors of columns (16 lanes); the PReLU is folded into it.
    assert re.search(r"select\s+<(8|16) x i1>", JitModule(compiled.llvm_ir, target=compiled.jit.target).optimized_ir())
