"""`graph-fuse-attention` end to end: exporter-written attention chains (scale by Mul or Div, with or without an
additive mask) become one fused kernel where the key count is not a multiple of the vector width (and everywhere
with `aligned=true`), and the compiled model matches ONNX Runtime at rtol=1e-4, atol=1e-5. The O2 and O3 pipelines
run here without `graph-pad-attention-keys`, which pads a static key count before this pass sees it (its own tests:
`test_graph_pad_attention_keys.py`); a run-time key count (generation) reaches this pass as it is."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from attention_models import attention_model, random_feeds

from minimlc.dialects import graph
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import OPT_LEVELS, run_pipeline

RTOL, ATOL = 1e-4, 1e-5


def _fused_count(model: onnx.ModelProto, aligned: bool) -> int:
    """How many graph.attention ops the pass makes of the imported model (on an 8-lane target)."""
    module = import_model(model).module
    run_pipeline(module, f"graph-simplify,graph-fuse-attention{{aligned={str(aligned).lower()}}}", target="x86-64-v3")
    return sum(isinstance(op, graph.AttentionOp) for op in module.walk())


@pytest.mark.parametrize("opt_level", [2, 3])
@pytest.mark.parametrize(("keys", "aligned"), [(13, False), (16, True)], ids=["unaligned", "aligned_forced"])
@pytest.mark.parametrize(("scale_by", "masked"), [("Mul", False), ("Div", True)], ids=["mul", "div_masked"])
def test_fused_attention_matches_onnxruntime(
    keys: int, aligned: bool, scale_by: str, masked: bool, opt_level: int
) -> None:
    model = attention_model(keys, scale_by, "mask" if masked else "none")
    assert _fused_count(model, aligned) == 1
    feeds = random_feeds(model)
    reference = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = reference.run(None, feeds)
    fusion = "graph-fuse-attention{aligned=true}" if aligned else "graph-fuse-attention"
    pipeline = OPT_LEVELS[opt_level].replace("graph-pad-attention-keys,graph-fuse-attention", fusion)
    compiled = compile_model(import_model(model), pipeline)
    assert re.search(r"define [^@]*@\w*attention\w*\(", compiled.llvm_ir)  # the fused kernel
    actual = np.empty(expected.shape, np.float32)
    inputs = [feeds[value.name] for value in model.graph.input]
    addresses = [array.ctypes.data for array in (*inputs, actual)]
    compiled.entry(np.concatenate((np.array(addresses, np.uintp), compiled.weight_addresses)).ctypes.data)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def test_aligned_keys_keep_the_gemms() -> None:
    assert _fused_count(attention_model(16), aligned=False) == 0
