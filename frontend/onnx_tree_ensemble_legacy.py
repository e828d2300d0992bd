"""ONNX converters for ai.onnx.ml's TreeEnsembleRegressor and TreeEnsembleClassifier (domain versions 1 and 3), as
scikit-learn's, LightGBM's and XGBoost's converters write their forests, evaluated in TreeEnsemble-5's tensor form
(`onnx_tree_ensemble.evaluate`).

The nodes are listed by (tree id, node id) with a string mode (BRANCH_LEQ ... BRANCH_NEQ, or LEAF), children by
node id within the tree; each tree's root is its one node no other node branches to. A leaf's weights come as target
entries (tree id, node id, target, weight), one per target it scores (a classifier's class entries likewise, its label
the class of the highest score; binary classifiers, which ONNX Runtime labels and scores by rules of its own, and
string labels are refused). X of any number type is compared in its own
float type (float32 for integers; double against float thresholds in double, as ONNX Runtime compares them), the
scores are float32, base_values are added after the aggregation (to the targets some reached leaf scores, as ONNX
Runtime does), then the post-transform:

    TreeEnsembleRegressor(X: f64[N, 4], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], ...) -> ... : tensor<Nx1xf32>
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.frontend.onnx_ml import ML_DOMAIN
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
    dtype_of,
)
from minimlc.frontend.onnx_tree_ensemble import (
    AVERAGE,
    LOGISTIC,
    MAX,
    MIN,
    NONE,
    SOFTMAX,
    SUM,
    Forest,
    apply_post_transform,
    attribute_array,
    evaluate,
    tree_paths,
)

MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5}
"""The split modes' names and TreeEnsemble-5's codes for them (`LEAF` marks a leaf)."""
AGGREGATES = {"AVERAGE": AVERAGE, "SUM": SUM, "MIN": MIN, "MAX": MAX}
TRANSFORMS = {"NONE": NONE, "SOFTMAX": SOFTMAX, "LOGISTIC": LOGISTIC}


def _roots(trees: np.ndarray, ids: np.ndarray, children: set[tuple[int, int]]) -> list[int]:
    """Each tree's root: the index of its one node no node of the tree branches to, trees in order of first
    appearance."""
    roots = []
    for tree in dict.fromkeys(trees.tolist()):
        found = [i for i in np.flatnonzero(trees == tree) if (tree, int(ids[i])) not in children]
        if len(found) != 1:
            raise NodeError(f"tree {tree} has {len(found)} nodes no other node branches to, expected one root")
        roots.append(int(found[0]))
    return roots


def _samples(ctx: NodeContext, X: Value) -> SSAValue:
    """X as a 2-D float tensor: floats as they are, integers cast to float32."""
    x = ctx.data(X)
    element = graph.element_type(x)
    if element not in (*graph.FLOATS, *graph.INDICES) or len(graph.shape_of(x)) != 2:
        raise NodeError(f"X must be a 2-D float, double, int32 or int64 tensor, got {x.type}")
    return x if element in graph.FLOATS else ctx.emit(graph.CastOp(x, graph.FLOATS[0]))


def _transform(post_transform: str | bytes) -> int:
    transform = TRANSFORMS.get(as_text(post_transform))
    if transform is None:
        raise UnsupportedNodeError(
            f"post_transform '{as_text(post_transform)}' (only NONE, SOFTMAX and LOGISTIC are computed)"
        )
    return transform


def _tensor_or_list(attributes: Mapping[str, Any], name: str) -> np.ndarray | None:
    """The attribute `name` from its `_as_tensor` form if given, else its list form (None if neither)."""
    value = attributes.get(f"{name}_as_tensor")
    value = attributes.get(name) if value is None else value
    return None if value is None else attribute_array(value, name)


def _forest(attributes: Mapping[str, Any], entry: str, outputs: int, aggregate: int, split_type: np.dtype) -> Forest:
    """The `Forest` of the `nodes_*` attributes, each leaf scoring by the `{entry}_*` entries (`target` or `class`:
    tree id, node id, output index and weight) one of `outputs` scores."""
    modes = [as_text(mode) for mode in attribute_array(attributes.get("nodes_modes"), "nodes_modes").tolist()]
    unknown = sorted({mode for mode in modes if mode not in MODES and mode != "LEAF"})
    if unknown:
        raise NodeError(f"nodes_modes holds {unknown}: expected BRANCH_LEQ, BRANCH_LT, ..., BRANCH_NEQ or LEAF")
    tracks = attributes.get("nodes_missing_value_tracks_true")
    lists = {
        name: attribute_array(attributes.get(name), name).astype(np.int64)
        for name in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids")
    }
    lists["nodes_values"] = _tensor_or_list(attributes, "nodes_values")
    lists["nodes_missing_value_tracks_true"] = (
        np.zeros(len(modes), bool) if tracks is None else np.asarray(tracks, bool)
    )
    for what, array in lists.items():
        if array is None or array.shape != (len(modes),):
            raise NodeError(f"{what} has {0 if array is None else array.size} entries for {len(modes)} nodes")
    trees, ids = lists["nodes_treeids"], lists["nodes_nodeids"]
    index = {(int(t), int(i)): k for k, (t, i) in enumerate(zip(trees, ids))}
    if len(index) != len(modes):
        raise NodeError("two nodes have the same (tree id, node id)")
    leaf = np.array([mode == "LEAF" for mode in modes], bool)

    def child(k: int, side: str) -> int:
        key = (int(trees[k]), int(lists[f"nodes_{side}nodeids"][k]))
        if key not in index:
            raise NodeError(f"node {int(ids[k])} of tree {key[0]} branches to node {key[1]}, which does not exist")
        return index[key]

    branches = [k for k in range(len(modes)) if not leaf[k]]
    true_ids, false_ids = np.zeros(len(modes), np.int64), np.zeros(len(modes), np.int64)
    for k in branches:
        true_ids[k], false_ids[k] = child(k, "true"), child(k, "false")
    children = {(int(trees[k]), int(ids[c])) for k in branches for c in (true_ids[k], false_ids[k])}
    paths = tree_paths(
        [(root, bool(leaf[root])) for root in _roots(trees, ids, children)],
        true_ids.tolist(),
        false_ids.tolist(),
        leaf[true_ids].tolist(),
        leaf[false_ids].tolist(),
        len(modes),
    )
    outs = attribute_array(attributes.get(f"{entry}_ids"), f"{entry}_ids").astype(np.int64)
    weights = _tensor_or_list(attributes, f"{entry}_weights")
    if weights is None:
        raise NodeError(f"attribute {entry}_weights is required")
    if outs.size and not 0 <= outs.min() <= outs.max() < outputs:
        raise NodeError(f"{entry}_ids must lie in [0, {outputs}), got {sorted(set(outs.tolist()))}")
    keys = zip(*(attribute_array(attributes.get(f"{entry}_{k}"), f"{entry}_{k}") for k in ("treeids", "nodeids")))
    by_leaf: dict[int, list[int]] = {}
    for number, (tree, node_id) in enumerate(keys):
        node = index.get((int(tree), int(node_id)))
        if node is None or not leaf[node]:
            raise NodeError(f"{entry} entry {number} names node {int(node_id)} of tree {int(tree)}, which is no leaf")
        by_leaf.setdefault(node, []).append(number)
    table = np.zeros((outputs, len(paths.leaves)), np.float32)
    scored = np.zeros((outputs, len(paths.leaves)), bool)
    for column, node in enumerate(paths.leaves):
        for number in by_leaf.get(node, []):
            table[outs[number], column] += weights[number]
            scored[outs[number], column] = True
    codes = np.array([MODES.get(mode, 0) for mode in modes], np.int64)
    return Forest(
        codes,
        lists["nodes_values"].astype(split_type),
        lists["nodes_featureids"],
        lists["nodes_missing_value_tracks_true"],
        {},
        paths,
        table,
        scored,
        aggregate,
    )


def _base_values(attributes: Mapping[str, Any], outputs: int) -> np.ndarray | None:
    base = _tensor_or_list(attributes, "base_values")
    if base is not None and base.shape != (outputs,):
        raise NodeError(f"base_values has {base.size} entries for {outputs} outputs")
    return None if base is None else base.astype(np.float32)


def TreeEnsembleRegressor(
    ctx: NodeContext,
    X: Value,
    *,
    aggregate_function: str | bytes = "SUM",
    n_targets: int | None = None,
    post_transform: str | bytes = "NONE",
    **attributes: Any,
) -> Value:
    """The forest's float32 scores [N, n_targets] (see the module docstring); hit rates are informational."""
    _check_names(attributes, "target")
    x = _samples(ctx, X)
    aggregate = AGGREGATES.get(as_text(aggregate_function))
    if aggregate is None:
        raise NodeError(f"aggregate_function '{as_text(aggregate_function)}' is not AVERAGE, SUM, MIN or MAX")
    transform = _transform(post_transform)
    if n_targets is None or n_targets < 1:
        raise NodeError(f"n_targets must be positive, got {n_targets}")
    forest = _forest(attributes, "target", n_targets, aggregate, dtype_of(graph.element_type(x)))
    forest = dataclasses.replace(forest, base=_base_values(attributes, n_targets))
    return apply_post_transform(ctx, evaluate(ctx, x, forest, np.dtype(np.float32))[0], transform)


def TreeEnsembleClassifier(
    ctx: NodeContext,
    X: Value,
    *,
    classlabels_int64s: Sequence[int] | None = None,
    classlabels_strings: Sequence[bytes] | None = None,
    post_transform: str | bytes = "NONE",
    **attributes: Any,
) -> tuple[Value, Value]:
    """The label (int64: `classlabels_int64s` at the highest score, the first on ties; as ONNX Runtime, among the
    classes some reached leaf scores unless base_values give every class a score) and the float32 scores
    [N, classes] (the leaves' class weights summed, plus base_values, then the post-transform)."""
    _check_names(attributes, "class")
    if classlabels_strings is not None:
        raise UnsupportedNodeError("string class labels (classlabels_strings): minimlc computes numbers only")
    labels = attribute_array(classlabels_int64s, "classlabels_int64s").astype(np.int64)
    x = _samples(ctx, X)
    transform = _transform(post_transform)
    forest = _forest(attributes, "class", len(labels), SUM, dtype_of(graph.element_type(x)))
    if len(labels) < 3:
        raise UnsupportedNodeError(
            f"a classifier of {len(labels)} classes: ONNX Runtime labels and scores two classes by rules of its own "
            "(the sign of one score, one score derived from the other); three or more classes are computed"
        )
    scores, scored = evaluate(ctx, x, forest, np.dtype(np.float32))
    name, base = ctx.node.output[0], _base_values(attributes, len(labels))
    if base is None:  # the highest score among the classes some reached leaf scores
        lowest = ctx.data(ConstantValue(f"{name}.unscored", np.array(-np.inf, np.float32)))
        candidates = ctx.emit(graph.WhereOp(scored, scores, lowest))
    else:  # every class has its base value as a score
        scores = candidates = ctx.emit(graph.AddOp(scores, ctx.data(ConstantValue(f"{name}.base", base))))
    best = ctx.emit(graph.ArgMaxOp(candidates, 1, keepdims=False))
    table = ctx.data(ConstantValue(f"{ctx.node.output[0]}.labels", labels))
    return ctx.emit(graph.TakeOp(table, best, 0)), apply_post_transform(ctx, scores, transform)


_NODE_ATTRIBUTES = frozenset(
    {
        *("nodes_falsenodeids", "nodes_featureids", "nodes_hitrates", "nodes_hitrates_as_tensor"),
        *("nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids", "nodes_treeids", "nodes_truenodeids"),
        *("nodes_values", "nodes_values_as_tensor", "base_values", "base_values_as_tensor"),
    }
)


def _check_names(attributes: Mapping[str, Any], entry: str) -> None:
    """Refuse an attribute that is neither the nodes' nor the `{entry}_*` entries' (the converters take the long
    attribute lists as `**attributes`)."""
    allowed = _NODE_ATTRIBUTES | {f"{entry}_{k}" for k in ("ids", "nodeids", "treeids", "weights", "weights_as_tensor")}
    unexpected = sorted(attributes.keys() - allowed)
    if unexpected:
        raise UnsupportedNodeError(f"attributes {unexpected} are not supported")


CONVERTERS: dict[str, Converter] = {
    f"{ML_DOMAIN}.TreeEnsembleRegressor": TreeEnsembleRegressor,
    f"{ML_DOMAIN}.TreeEnsembleClassifier": TreeEnsembleClassifier,
}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`)."""
