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
from attention_models import attention_model, random_feeds

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import run_pipeline

RTOL, ATOL = 1e-4, 1e-5


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
    feeds = random_feeds(model)
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
