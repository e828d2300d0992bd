"""ONNX converter for ai.onnx.ml's TreeEnsembleRegressor (domain versions 1 and 3), as scikit-learn's, LightGBM's and
XGBoost's converters write their forests, evaluated in TreeEnsemble-5's tensor form (`onnx_tree_ensemble.evaluate`).

The nodes are listed by (tree id, node id) with a string mode (BRANCH_LEQ ... BRANCH_NEQ, or LEAF), children by
node id within the tree; each tree's root is its one node no other node branches to. A leaf's weights come as target
entries (tree id, node id, target, weight), one per target it scores. X of any number type is compared in its own
float type (float32 for integers; double against float thresholds in double, as ONNX Runtime compares them), the
scores are float32, base_values are added after the aggregation (to the targets some reached leaf scores, as ONNX
Runtime does), then the post-transform:

    TreeEnsembleRegressor(X: f64[N, 4], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], ...) -> ... : tensor<Nx1xf32>
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from onnx import TensorProto

from minimlc.dialects import graph
from minimlc.frontend.onnx_ml import ML_DOMAIN
from minimlc.frontend.onnx_ops import (
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    as_text,
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


def TreeEnsembleRegressor(
    ctx: NodeContext,
    X: Value,
    *,
    aggregate_function: str | bytes = "SUM",
    base_values: Sequence[float] | None = None,
    base_values_as_tensor: TensorProto | None = None,
    n_targets: int | None = None,
    nodes_falsenodeids: Sequence[int] | None = None,
    nodes_featureids: Sequence[int] | None = None,
    nodes_hitrates: Sequence[float] | None = None,
    nodes_hitrates_as_tensor: TensorProto | None = None,
    nodes_missing_value_tracks_true: Sequence[int] | None = None,
    nodes_modes: Sequence[str | bytes] | None = None,
    nodes_nodeids: Sequence[int] | None = None,
    nodes_treeids: Sequence[int] | None = None,
    nodes_truenodeids: Sequence[int] | None = None,
    nodes_values: Sequence[float] | None = None,
    nodes_values_as_tensor: TensorProto | None = None,
    post_transform: str | bytes = "NONE",
    target_ids: Sequence[int] | None = None,
    target_nodeids: Sequence[int] | None = None,
    target_treeids: Sequence[int] | None = None,
    target_weights: Sequence[float] | None = None,
    target_weights_as_tensor: TensorProto | None = None,
) -> Value:
    """The forest's float32 scores [N, n_targets] (see the module docstring); hit rates are informational."""
    del nodes_hitrates, nodes_hitrates_as_tensor
    x = ctx.data(X)
    element = graph.element_type(x)
    if element not in (*graph.FLOATS, *graph.INDICES) or len(graph.shape_of(x)) != 2:
        raise NodeError(f"X must be a 2-D float, double, int32 or int64 tensor, got {x.type}")
    if element not in graph.FLOATS:
        x = ctx.emit(graph.CastOp(x, graph.FLOATS[0]))
    aggregate, transform = AGGREGATES.get(as_text(aggregate_function)), TRANSFORMS.get(as_text(post_transform))
    if aggregate is None:
        raise NodeError(f"aggregate_function '{as_text(aggregate_function)}' is not AVERAGE, SUM, MIN or MAX")
    if transform is None:
        raise UnsupportedNodeError(
            f"post_transform '{as_text(post_transform)}' (only NONE, SOFTMAX and LOGISTIC are computed)"
        )
    modes = [as_text(mode) for mode in attribute_array(nodes_modes, "nodes_modes").tolist()]
    unknown = sorted({mode for mode in modes if mode not in MODES and mode != "LEAF"})
    if unknown:
        raise NodeError(f"nodes_modes holds {unknown}: expected BRANCH_LEQ, BRANCH_LT, ..., BRANCH_NEQ or LEAF")
    trees, ids = (
        attribute_array(v, w).astype(np.int64)
        for v, w in ((nodes_treeids, "nodes_treeids"), (nodes_nodeids, "nodes_nodeids"))
    )
    values = attribute_array(
        nodes_values_as_tensor if nodes_values_as_tensor is not None else nodes_values, "nodes_values"
    )
    lists = {
        "nodes_featureids": attribute_array(nodes_featureids, "nodes_featureids").astype(np.int64),
        "nodes_truenodeids": attribute_array(nodes_truenodeids, "nodes_truenodeids").astype(np.int64),
        "nodes_falsenodeids": attribute_array(nodes_falsenodeids, "nodes_falsenodeids").astype(np.int64),
        "nodes_treeids": trees,
        "nodes_nodeids": ids,
        "nodes_values": values,
        "nodes_missing_value_tracks_true": np.zeros(len(modes), bool)
        if nodes_missing_value_tracks_true is None
        else np.asarray(nodes_missing_value_tracks_true, bool),
    }
    for what, array in lists.items():
        if array.shape != (len(modes),):
            raise NodeError(f"{what} has {array.size} entries for {len(modes)} nodes")
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
    roots = _roots(trees, ids, children)
    paths = tree_paths(
        [(root, bool(leaf[root])) for root in roots],
        true_ids.tolist(),
        false_ids.tolist(),
        leaf[true_ids].tolist(),
        leaf[false_ids].tolist(),
        len(modes),
    )
    targets = attribute_array(target_ids, "target_ids").astype(np.int64)
    weights = attribute_array(
        target_weights_as_tensor if target_weights_as_tensor is not None else target_weights, "target_weights"
    ).astype(np.float32)
    if n_targets is None or n_targets < 1 or (targets.size and not 0 <= targets.min() <= targets.max() < n_targets):
        raise NodeError(f"n_targets must be positive and cover every target id, got {n_targets}")
    entries = zip(attribute_array(target_treeids, "target_treeids"), attribute_array(target_nodeids, "target_nodeids"))
    by_leaf: dict[int, list[int]] = {}
    for entry, key in enumerate(entries):
        node = index.get((int(key[0]), int(key[1])))
        if node is None or not leaf[node]:
            raise NodeError(f"target entry {entry} names node {int(key[1])} of tree {int(key[0])}, which is no leaf")
        by_leaf.setdefault(node, []).append(entry)
    table, scored = np.zeros((n_targets, len(paths.leaves)), np.float32), np.zeros((n_targets, len(paths.leaves)), bool)
    for column, node in enumerate(paths.leaves):
        for entry in by_leaf.get(node, []):
            table[targets[entry], column] += weights[entry]
            scored[targets[entry], column] = True
    split_type = graph.FLOATS.index(graph.element_type(x))
    splits = values.astype((np.float32, np.float64)[split_type])
    codes = np.array([MODES.get(mode, 0) for mode in modes], np.int64)
    base = base_values_as_tensor if base_values_as_tensor is not None else base_values
    offsets = None if base is None else attribute_array(base, "base_values").astype(np.float32)
    if offsets is not None and offsets.shape != (n_targets,):
        raise NodeError(f"base_values has {offsets.size} entries for {n_targets} targets")
    forest = Forest(
        codes,
        splits,
        lists["nodes_featureids"],
        lists["nodes_missing_value_tracks_true"],
        {},
        paths,
        table,
        scored,
        aggregate,
        offsets,
    )
    scores = evaluate(ctx, x, forest, np.dtype(np.float32))
    return apply_post_transform(ctx, scores, transform)


CONVERTERS: dict[str, Converter] = {f"{ML_DOMAIN}.TreeEnsembleRegressor": TreeEnsembleRegressor}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`)."""
