"""Hugging Face architectures as `torch.onnx.export(dynamo=True)` writes them with dynamic batch and sequence axes
(`examples/dynamic_transformers.py`, `examples/dynamic_decoders.py`: dim_params, every shape computed from the
inputs' own) run from one `InferenceSession` each, without input_shapes, compiled once, at (batch, sequence) = (1,
32), (2, 77), (4, 77) (the vision and audio encoders: batch 1, 2, 4), and match ONNX Runtime (issue #46).

Tolerance: rtol 1e-4, atol 1e-5 (outputs are O(1): LayerNorm'd hidden states, logits of a few units). The LLaMA
KV-cache decode step is `test_kv_cache_decode.py`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from dynamic_decoders import clip_text, gpt2, llama
from dynamic_transformers import bert, distilbert, roberta, t5_encoder, vit, whisper_encoder
from llama_decode import LlamaDims
from onnx import TensorProto, helper, numpy_helper
from transformer_models import Dims

from minimlc import InferenceSession
from minimlc.runtime.session import IndexOutOfRangeError

RTOL, ATOL = 1e-4, 1e-5
TEXT_SHAPES = [(1, 32), (2, 77), (4, 77)]
DIMS = Dims(tokens=96, hidden=32, heads=4, ffn=64)
LLAMA = LlamaDims(hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256, layers=2)
def text_feed(rng: np.random.Generator, batch: int, sequence: int, vocab: int, pad_id: int | None = None):
    """Random ids in [2, vocab) and a mask padding the last 5 positions of the last row (ids `pad_id` there)."""
    ids = rng.integers(2, vocab, (batch, sequence)).astype(np.int64)
    mask = np.ones((batch, sequence), np.int64)
    mask[-1, sequence - 5 :] = 0
    if pad_id is not None:
        ids[-1, sequence - 5 :] = pad_id
    return {"input_ids": ids, "attention_mask": mask}


def check_one_compile(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> None:
    session = InferenceSession(model, num_threads=1)
    assert "symbolic_fallback" not in session.stats, session.stats.get("symbolic_fallback")
    oracle = ort.InferenceSession(model.SerializeToString())
    for feed in feeds:
        ours, theirs = session.run(None, feed), oracle.run(None, feed)
        assert [o.shape for o in ours] == [t.shape for t in theirs]
        for actual, expected in zip(ours, theirs):
            np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1


TEXT_MODELS: dict[str, tuple[Callable[[], onnx.ModelProto], int, int | None]] = {
    "bert": (lambda: bert(DIMS, layers=2, vocab=100), 100, None),
    "distilbert": (lambda: distilbert(DIMS, layers=2, vocab=100), 100, None),
    "roberta": (lambda: roberta(DIMS, layers=2, vocab=100), 100, 1),
    "gpt2": (lambda: gpt2(Dims(tokens=96, hidden=32, heads=4, ffn=128), layers=2, vocab=100), 100, None),
    "llama": (lambda: llama(LLAMA), LLAMA.vocab, None),
    "qwen2": (lambda: llama(LLAMA, qwen2=True), LLAMA.vocab, None),
    "t5_encoder": (lambda: t5_encoder(DIMS, layers=2, vocab=100), 100, None),
    "clip_text": (lambda: clip_text(DIMS, layers=2, vocab=100, pooled=False), 100, None),
    "clip_text_pooled": (lambda: clip_text(DIMS, layers=2, vocab=100), 100, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TEXT_MODELS))
def test_text_model_runs_at_every_shape_from_one_compile(name: str) -> None:
    build, vocab, pad_id = TEXT_MODELS[name]
    rng = np.random.default_rng(1)
    check_one_compile(build(), [text_feed(rng, batch, sequence, vocab, pad_id) for batch, sequence in TEXT_SHAPES])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("build", "shape"),
    [
        pytest.param(lambda: vit(Dims(tokens=17, hidden=32, heads=4, ffn=64), layers=2), (3, 32, 32), id="vit"),
        pytest.param(lambda: whisper_encoder(Dims(tokens=40, hidden=32, heads=4, ffn=64), layers=2), (16, 64),
                     id="whisper_encoder"),
    ],
)
def test_encoder_with_dynamic_batch_runs_at_every_batch_from_one_compile(build, shape) -> None:
    model = build()
    rng = np.random.default_rng(2)
    name = model.graph.input[0].name
    check_one_compile(model, [{name: rng.standard_normal((batch, *shape)).astype(np.float32)} for batch in (1, 2, 4)])


def cut_table_model() -> onnx.ModelProto:
    """rows = table[:sequence][idx]: a Gather along an axis of run-time extent (LLaMA's cached rotary tables)."""
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    nodes = [
        helper.make_node("Shape", ["idx"], ["length"], start=1, end=2),
        helper.make_node("Slice", ["table", "zero", "length"], ["cut"]),
        helper.make_node("Gather", ["cut", "idx"], ["rows"]),
    ]
    graph = helper.make_graph(
        nodes, "cut_table", [helper.make_tensor_value_info("idx", TensorProto.INT64, [1, "sequence"])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [1, "sequence", 4])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array([0], np.int64), "zero")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_gather_along_a_run_time_axis_checks_indices_against_its_run_time_extent() -> None:
    model = cut_table_model()
    session = InferenceSession(model, num_threads=1)
    oracle = ort.InferenceSession(model.SerializeToString())
    for idx in ([[2, 0, -1]], [[4, 1, 3, -4, 0]]):
        feed = {"idx": np.array(idx, np.int64)}
        np.testing.assert_array_equal(session.run(None, feed)[0], oracle.run(None, feed)[0])
    assert session.stats["compiles"] == 1
    with pytest.raises(IndexOutOfRangeError, match=r"indices must lie in \[-sequence, sequence\).*: 1 out of range"):
        session.run(None, {"idx": np.array([[0, 3, 1]], np.int64)})  # 3 is past table[:3]
