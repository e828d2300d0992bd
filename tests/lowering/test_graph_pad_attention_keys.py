"""`graph-pad-attention-keys` end to end: an attention whose static key count no vector width divides (13, ViT's 197)
is padded with masked keys at O2 and O3, runs as two scheduled GEMMs and a softmax (no fused attention kernel), and
matches ONNX Runtime at rtol=1e-4, atol=1e-5, with a Mul or Div scale, with no mask, a [queries, keys] mask or a
one-element bias; a run-time key count and an aligned one are left alone."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import run_pipeline

RTOL, ATOL = 1e-4, 1e-5


def attention_model(keys: int | str, scale_by: str = "Mul", bias: str = "none", queries: int = 5) -> onnx.ModelProto:
    """Q [1, 2, queries, 8] and K, V [1, 2, keys, 8] (keys may be a symbol); scores, scaled, maybe biased (`bias`:
    none, "mask" [queries, keys] or "scalar" [1]), Softmax, MatMul."""
    shapes = {"q": [1, 2, queries, 8], "k": [1, 2, keys, 8], "v": [1, 2, keys, 8]}
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in shapes.items()]
    factor = np.array(np.sqrt(8.0) if scale_by == "Div" else 1 / np.sqrt(8.0), np.float32)
    initializers = [numpy_helper.from_array(factor, "factor")]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node(scale_by, ["scores", "factor"], ["logits"]),
    ]
    if bias != "none":
        shape = [queries, keys] if bias == "mask" else [1]
        inputs.append(helper.make_tensor_value_info("bias", TensorProto.FLOAT, shape))
        nodes[-1].output[0] = "scaled"
        nodes.append(helper.make_node("Add", ["bias", "scaled"], ["logits"]))
    nodes += [
        helper.make_node("Softmax", ["logits"], ["weights"], axis=-1),
        helper.make_node("MatMul", ["weights", "v"], ["y"]),
    ]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, queries, 8])
    graph_proto = helper.make_graph(nodes, "scores", inputs, [output], initializers)
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def graph_after_passes(model: onnx.ModelProto, passes: str) -> list[str]:
    """The names of the graph ops `passes` leave (on an 8-lane target); symbols stay run-time extents."""
    module = import_model(model, symbolic=True).module
    run_pipeline(module, passes, target="x86-64-v3")
    return [op.name for op in module.walk() if op.name.startswith("graph.")]


@pytest.mark.parametrize("opt_level", [2, 3])
@pytest.mark.parametrize(
    ("keys", "scale_by", "bias"),
    [(13, "Mul", "none"), (13, "Div", "mask"), (13, "Mul", "scalar"), (197, "Mul", "mask")],
    ids=["mul", "div-mask", "scalar-bias", "vit-197"],
)
def test_padded_attention_matches_onnxruntime(keys: int, scale_by: str, bias: str, opt_level: int) -> None:
    model = attention_model(keys, scale_by, bias)
    rng = np.random.default_rng(0)
    feeds = {
        value.name: rng.standard_normal([d.dim_value for d in value.type.tensor_type.shape.dim]).astype(np.float32)
        for value in model.graph.input
    }
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feeds)
    session = InferenceSession(model, opt_level=opt_level, cache=False)
    kernels = set(re.findall(r"define [^@]*@(\w+)\(", session.llvm_ir))
    assert not [name for name in kernels if "attention" in name], kernels
    assert [name for name in kernels if "pad_matmul" in name], kernels  # the padded keys' and values' products
    (actual,) = session.run(None, feeds)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def test_the_padded_chain_is_two_matmuls_and_a_masked_softmax() -> None:
    ops = graph_after_passes(attention_model(13, bias="mask"), "graph-pad-attention-keys,graph-fuse-attention")
    assert ops.count("graph.matmul") == 2
    assert ops.count("graph.pad") == 4  # keys, values, the bias and the mask
    assert "graph.attention" not in ops
    assert "graph.softmax" in ops


@pytest.mark.parametrize("keys", [16, "sequence"], ids=["aligned", "run-time"])
def test_aligned_and_run_time_key_counts_are_left_alone(keys: int | str) -> None:
    ops = graph_after_passes(attention_model(keys), "graph-pad-attention-keys")
    assert "graph.pad" not in ops
    assert ops.count("graph.matmul") == 2
