"""ONNX converter for TfIdfVectorizer over integer tokens, as graph ops (string pools are refused).

An n-gram of the pool occurs at position i with skip distance d when `X[i + m d] == pool[m]` for each of its n
tokens. For each gram length n and distance d the importer counts (in onnx's order: unigrams at distance 1 only, other
grams at every distance 1 .. max_skip_count + 1), the windows are one `graph.take` of a constant [positions, n]
index table, compared with the pool's n-grams of that length, all-of'd by a `reduce_min` over the n tokens and
summed over the positions; a matmul by a constant one-hot table sends each n-gram's count to its output column.

    %windows = graph.take %x, %positions {axis = 1 : i64} : (tensor<2x6xi32>, tensor<5x2xi64>) -> tensor<2x5x2xi32>
    %hits = graph.equal %windows_row, %pool : (tensor<2x5x1x2xi32>, tensor<4x2xi32>) -> tensor<2x5x4x2xi1>
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    dtype_of,
    emit_reshape,
)


def _pool_grams(pool: Sequence[int], counts: Sequence[int]) -> list[tuple[int, np.ndarray]]:
    """The pool's n-grams by length: (n, [grams, n] tokens), in pool order (the order of ngram_indexes)."""
    bounds = [*counts, len(pool)]
    grams: list[tuple[int, np.ndarray]] = []
    for length, (start, end) in enumerate(itertools.pairwise(bounds), start=1):
        if (end - start) % length:
            raise NodeError(f"the pool's {length}-grams ({end - start} tokens) are not a whole number of grams")
        grams.append((length, np.asarray(pool[start:end], np.int64).reshape(-1, length)))
    return grams


def TfIdfVectorizer(
    ctx: NodeContext,
    X: Value,
    *,
    max_gram_length: int,
    min_gram_length: int,
    max_skip_count: int,
    mode: str | bytes,
    ngram_counts: Sequence[int],
    ngram_indexes: Sequence[int],
    pool_int64s: Sequence[int] | None = None,
    pool_strings: Sequence[bytes] | None = None,
    weights: Sequence[float] | None = None,
) -> Value:
    """N-gram counts of integer token rows, weighted by `mode` (TF, IDF, TFIDF) -> graph.take, graph.equal,
    reductions and a matmul by a one-hot table."""
    if pool_strings is not None or pool_int64s is None:
        raise UnsupportedNodeError("TfIdfVectorizer over strings (pool_strings) is not supported")
    weighting = as_text(mode)
    if weighting not in ("TF", "IDF", "TFIDF"):
        raise NodeError(f"mode must be TF, IDF or TFIDF, got '{weighting}'")
    x = ctx.data(X)
    shape = shape_of(x)
    token_type = graph.element_type(x)
    if token_type not in graph.INTEGERS:
        raise UnsupportedNodeError(f"tokens must be integers, got {x.type}")
    if len(shape) not in (1, 2) or shape[-1] == 0:
        raise NodeError(f"X must be [C] or [B, C] tokens with C > 0, got shape {shape}")
    rows = x if len(shape) == 2 else emit_reshape(ctx, x, (1, shape[0]))
    batch, length = shape_of(rows)
    pool_grams = _pool_grams(pool_int64s, ngram_counts)
    if len(ngram_indexes) < sum(len(grams) for _, grams in pool_grams) or min(ngram_indexes) < 0:
        raise NodeError(f"ngram_indexes must give each of the pool's n-grams a column, got {list(ngram_indexes)}")
    width = max(ngram_indexes) + 1
    name = ctx.node.output[0]
    total = None
    first = 0
    for size, grams in pool_grams:
        columns = np.zeros((len(grams), width), np.float32)
        columns[np.arange(len(grams)), ngram_indexes[first : first + len(grams)]] = 1
        first += len(grams)
        limits = np.iinfo(dtype_of(token_type))
        matchable = np.all((grams >= limits.min) & (grams <= limits.max), axis=1)  # others never occur
        grams, columns = grams[matchable], columns[matchable]
        if not len(grams) or not min_gram_length <= size <= max_gram_length:
            continue
        pool = ctx.data(ConstantValue(f"{name}.pool{size}", grams.astype(dtype_of(token_type))))
        one_hot = ctx.data(ConstantValue(f"{name}.columns{size}", columns))
        distances = range(1, 2) if size == 1 else range(1, max_skip_count + 2)
        for distance in distances:
            starts = length - (size - 1) * distance
            if starts <= 0:
                continue
            positions = np.arange(starts)[:, None] + distance * np.arange(size)[None, :]
            table = ctx.data(ConstantValue(f"{name}.windows{size}_{distance}", positions.astype(np.int64)))
            windows = emit_reshape(ctx, ctx.emit(graph.TakeOp(rows, table, 1)), (batch, starts, 1, size))
            hits = ctx.emit(graph.CastOp(ctx.emit(graph.EqualOp(windows, pool)), f32))  # [batch, starts, grams, n]
            whole = ctx.emit(graph.ReduceMinOp(hits, [3], keepdims=False))
            counts = ctx.emit(graph.ReduceSumOp(whole, [1], keepdims=False))  # [batch, grams]
            placed = ctx.emit(graph.MatMulOp(counts, one_hot))
            total = placed if total is None else ctx.emit(graph.AddOp(total, placed))
    if total is None:
        raise UnsupportedNodeError("no n-gram of the pool can occur (an all-zero output is not computed natively)")
    scale = np.ones(width, np.float32) if not weights else np.asarray(weights, np.float32)
    if scale.shape != (width,):
        raise NodeError(f"weights has {scale.size} values, but the output has {width} columns")
    weight = ctx.data(ConstantValue(f"{name}.weights", scale))
    if weighting == "TFIDF":
        total = ctx.emit(graph.MulOp(total, weight))
    elif weighting == "IDF":
        zero = ctx.data(ConstantValue(f"{name}.zero", np.zeros((), np.float32)))
        total = ctx.emit(graph.WhereOp(ctx.emit(graph.GreaterOp(total, zero)), weight, zero))
    return total if len(shape) == 2 else emit_reshape(ctx, total, (width,))


CONVERTERS: dict[str, Converter] = {
    "TfIdfVectorizer": TfIdfVectorizer,
}
"""ONNX op type (default domain) -> converter."""
