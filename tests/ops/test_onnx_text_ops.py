"""Numerics of TfIdfVectorizer over integer tokens at O0 and O3 against ONNX Runtime (every mode, gram lengths,
skip counts, int32 and int64 tokens, [C] and [B, C] inputs), and its refusal of string pools."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

POOL = {
    "ngram_counts": [0, 4, 10],
    "ngram_indexes": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5, 4, 5, 6],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "attributes",
    [
        {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0},
        {"mode": "TF", "min_gram_length": 2, "max_gram_length": 2, "max_skip_count": 3},
        {"mode": "TF", "min_gram_length": 1, "max_gram_length": 3, "max_skip_count": 2},
        {"mode": "IDF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 1},
        {"mode": "IDF", "min_gram_length": 1, "max_gram_length": 3, "max_skip_count": 1, "weights": [0.5] * 12},
        {
            "mode": "TFIDF",
            "min_gram_length": 2,
            "max_gram_length": 3,
            "max_skip_count": 4,
            "weights": [0.1 * i for i in range(12)],
        },
    ],
    ids=["tf-unigrams", "tf-bigrams-skip3", "tf-all", "idf", "idf-weights", "tfidf-weights"],
)
@pytest.mark.parametrize("shape", [(16,), (3, 14)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_tfidf_vectorizer_matches_onnxruntime(attributes: dict[str, Any], shape: tuple[int, ...], dtype: type) -> None:
    feeds = {"X": np.random.default_rng(1).integers(2, 9, shape).astype(dtype)}
    model = one_node_model("TfIdfVectorizer", feeds, {**POOL, **attributes}, opset=9)
    check_against_onnxruntime(InferenceSession, model, feeds)


def test_tfidf_vectorizer_refuses_string_pools() -> None:
    node = helper.make_node(
        "TfIdfVectorizer",
        ["X"],
        ["Y"],
        mode="TF",
        min_gram_length=1,
        max_gram_length=1,
        max_skip_count=0,
        ngram_counts=[0],
        ngram_indexes=[0, 1],
        pool_strings=["a", "b"],
    )
    graph = helper.make_graph(
        [node],
        "text",
        [helper.make_tensor_value_info("X", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=8)
    with pytest.raises(UnsupportedFeatureError, match="over strings"):
        InferenceSession(model, cache=False)


def test_tfidf_vectorizer_pool_tokens_beyond_the_token_type_never_match() -> None:
    attributes = {
        "mode": "TF",
        "min_gram_length": 1,
        "max_gram_length": 1,
        "max_skip_count": 0,
        "ngram_counts": [0],
        "ngram_indexes": [0, 1],
        "pool_int64s": [3, 2**32 + 3],
    }
    feeds = {"X": np.array([[3, 3, 1, 3]], np.int32)}
    model = one_node_model("TfIdfVectorizer", feeds, attributes, opset=9)
    check_against_onnxruntime(InferenceSession, model, feeds)
