"""repeat_kv of a decoder's key/value cache (issue #49): the ONNX importer gives its reshapes -1 targets
(`{0, 4, -1, 8}`), and graph-to-te's `Extents.reshape_rest` makes each -1 the cache's own length extent, so the
reshape to all heads is a static merge (div/mod by 2 only). Numbers against onnxruntime at two past lengths and two
batch sizes, from one compile."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from dynamic_decoders import repeat_kv
from llama_decode import LlamaDims
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from xdsl.dialects import arith

from minimlc import InferenceSession
from minimlc.dialects import te
from minimlc.frontend.onnx import import_model
from minimlc.lowering.graph_to_te.graph_to_te import GraphToTePass
from minimlc.lowering.pipeline import make_context

DIMS = LlamaDims(hidden=32, heads=4, kv_heads=2, ffn=8, vocab=8, layers=1)


def cache_model() -> onnx.ModelProto:
    """present = Concat(past, new) on the length axis ([batch, 2, past + sequence, 8]), then repeat_kv to 4 heads."""
    b = ModelBuilder()
    b.node("Concat", ["past", "new"], "present", axis=2)
    output = repeat_kv(b, "present", DIMS, "repeated")
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", DIMS.kv_heads, length, DIMS.head_size])
        for name, length in (("past", "past_length"), ("new", "sequence"))
    ]
    outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)]
    graph = helper.make_graph(b.nodes, "repeat_kv", inputs, outputs, b.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def divisors(compute: te.ComputeOp) -> list[object]:
    """The divisors of every unsigned division and remainder in `compute`'s body: constants or run-time values."""
    found = []
    for op in compute.body.walk():
        if isinstance(op, arith.DivUIOp | arith.RemUIOp):
            owner = op.rhs.owner
            found.append(owner.value.value.data if isinstance(owner, arith.ConstantOp) else op.rhs)
    return found


def test_repeat_kv_reshape_divides_by_constants_only():
    module = import_model(cache_model(), symbolic=True).module
    GraphToTePass().apply(make_context(), module)
    reshapes = [op for op in module.walk() if isinstance(op, te.ComputeOp) and op.tag.data == "reshape"]
    heads = [op for op in reshapes if op.results[0].type.get_shape()[1] == DIMS.heads]
    assert len(heads) == 1
    assert divisors(heads[0]) == [2, 2]
    length_extents = {op.output_extents()[-1] for op in reshapes}
    assert len(length_extents) == 1, "the unsqueeze and the reshape to heads have different length extents"


@pytest.mark.parametrize("batch", [1, 2])
def test_repeat_kv_matches_onnxruntime(batch: int):
    model = cache_model()
    session = InferenceSession(model, num_threads=1, cache=False)
    oracle = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(batch)
    for past_length, sequence in ((0, 3), (37, 1)):
        feed = {
            "past": rng.standard_normal((batch, DIMS.kv_heads, past_length, DIMS.head_size)).astype(np.float32),
            "new": rng.standard_normal((batch, DIMS.kv_heads, sequence, DIMS.head_size)).astype(np.float32),
        }
        (ours,), (theirs,) = session.run(None, feed), oracle.run(None, feed)
        assert ours.shape == (batch, DIMS.heads, past_length + sequence, DIMS.head_size)
        np.testing.assert_array_equal(ours, theirs)
    assert "symbolic_fallback" not in session.stats
    assert session.stats["compiles"] == 1
