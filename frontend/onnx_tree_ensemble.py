"""ONNX converter for ai.onnx.ml's TreeEnsemble (domain version 5): every tree of the ensemble evaluated for every
sample at once, as tensor ops, instead of walking nodes one sample at a time.

The trees are fixed at import time, so each root-to-leaf path is known: a path is the list of (node, branch) pairs
it passes. At run time:
1. every split node's decision for every sample: the node's feature (`gather` of X's columns) compared with its
   split by the node's mode (`<=`, `<`, `>=`, `>`, `==`, `!=`, or membership in a set), or'ed with "the feature is
   NaN" where the node's missing value tracks true: a bool tensor D [N, nodes];
2. a path is reached when every node on it took the path's branch: D gathered at the path's nodes [N, paths, depth],
   compared with the path's branches, and'ed over the depth (`reduce_min` of bools);
3. the reached leaves' weights aggregated per target: `where(reached and the path's target is t, weight, neutral)`
   [N, targets, paths] reduced over the paths (sum for SUM and AVERAGE, in tree order as ONNX's reference; min or
   max for MIN and MAX, of the reached leaves only), plus the base values if any; a target no reached leaf scores
   is 0, as in ONNX Runtime (onnx's reference gives MIN/MAX the type's extreme value, and adds base values anyway).

    TreeEnsemble(X: f32[3, 2], nodes_modes=[LEQ, LEQ], ...) -> graph.gather, graph.less_or_equal, graph.or,
        graph.gather, graph.equal, graph.reduce_min, graph.where, graph.reduce_sum : tensor<3x2xf32>

Post-transforms NONE, LOGISTIC and SOFTMAX are computed; SOFTMAX_ZERO and PROBIT are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, numpy_helper
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ml import ML_DOMAIN
from minimlc.frontend.onnx_ops import (
    ConstantValue,
    Converter,
    NodeContext,
    NodeError,
    UnsupportedNodeError,
    Value,
    dtype_of,
)

COMPARISONS = {
    0: graph.LessOrEqualOp,
    1: graph.LessOp,
    2: graph.GreaterOrEqualOp,
    3: graph.GreaterOp,
    4: graph.EqualOp,
}
"""`nodes_modes` values compared by one graph op (BRANCH_LEQ, LT, GTE, GT, EQ); 5 is NEQ, 6 MEMBER."""
NEQ, MEMBER = 5, 6
AVERAGE, SUM, MIN, MAX = 0, 1, 2, 3
NONE, SOFTMAX, LOGISTIC = 0, 1, 2


@dataclass(frozen=True)
class Paths:
    """Every root-to-leaf path of the ensemble, over the split nodes they pass."""

    nodes: list[int]
    """The split nodes on any path (columns of D)."""
    columns: np.ndarray
    """[paths, depth] column of D at each step of each path; padded with `len(nodes)` (an always-true column)."""
    branches: np.ndarray
    """[paths, depth] bool: whether the path takes the true branch at that step (padding: true)."""
    leaves: list[int]
    """The leaf each path ends in."""
    trees: int


def tree_paths(
    roots: Sequence[tuple[int, bool]],
    true_ids: Sequence[int],
    false_ids: Sequence[int],
    true_leafs: Sequence[int],
    false_leafs: Sequence[int],
    leaf_count: int,
) -> Paths:
    """Walk every tree from its root, a (node, is a leaf) pair; node ids index the `nodes_*` lists, leaf ids the
    leaves (`leaf_count` of them)."""
    count = len(true_ids)
    found: list[tuple[int, list[tuple[int, bool]]]] = []
    for root, root_is_leaf in roots:
        if root_is_leaf:
            found.append((root, []))
            continue
        if not 0 <= root < count:
            raise NodeError(f"tree root {root} is not a node (there are {count})")
        stack: list[tuple[int, list[tuple[int, bool]]]] = [(root, [])]
        while stack:
            node, path = stack.pop()
            if len(path) > count:
                raise NodeError(f"the tree at root {root} has a cycle through node {node}")
            for taken, target, is_leaf in (
                (True, true_ids[node], true_leafs[node]),
                (False, false_ids[node], false_leafs[node]),
            ):
                step = [*path, (node, taken)]
                if is_leaf:
                    found.append((target, step))
                elif 0 <= target < count:
                    stack.append((target, step))
                else:
                    raise NodeError(f"node {node} branches to node {target}, which does not exist")
    for leaf, _ in found:
        if not 0 <= leaf < leaf_count:
            raise NodeError(f"a branch leads to leaf {leaf}, which does not exist (there are {leaf_count})")
    nodes = sorted({node for _, path in found for node, _ in path})
    column = {node: index for index, node in enumerate(nodes)}
    depth = max((len(path) for _, path in found), default=0) or 1
    columns = np.full((len(found), depth), len(nodes), np.int64)
    branches = np.ones((len(found), depth), bool)
    for row, (_, path) in enumerate(found):
        for step, (node, taken) in enumerate(path):
            columns[row, step], branches[row, step] = column[node], taken
    return Paths(nodes, columns, branches, [leaf for leaf, _ in found], len(roots))


def attribute_array(value: TensorProto | Sequence[float] | Sequence[str | bytes] | None, what: str) -> np.ndarray:
    """A list or tensor attribute as an array; NodeError naming `what` if it is missing."""
    if value is None:
        raise NodeError(f"attribute {what} is required")
    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


def _member_sets(modes: np.ndarray, values: np.ndarray | None) -> dict[int, list[float]]:
    """Each MEMBER node's set: `membership_values` lists them in node order, each ended by a NaN."""
    members = [int(node) for node in np.flatnonzero(modes == MEMBER)]
    if not members:
        return {}
    if values is None:
        raise NodeError("nodes of mode BRANCH_MEMBER need the attribute membership_values")
    sets: list[list[float]] = [[]]
    for value in values.astype(np.float64):
        if np.isnan(value):
            sets.append([])
        else:
            sets[-1].append(float(value))
    if len(sets) - 1 != len(members) or sets[-1]:
        raise NodeError(f"membership_values holds {len(sets) - 1} NaN-ended sets for {len(members)} member nodes")
    return dict(zip(members, sets))


def _over_last_axis(ctx: NodeContext, reduce: type[graph.ReduceOp], flags: SSAValue) -> SSAValue:
    """All (`reduce_min`) or any (`reduce_max`) of the bools `flags` along their last axis, reduced as bytes."""
    rank = len(shape_of(flags))
    as_bytes = ctx.emit(graph.CastOp(flags, graph.UNSIGNED[0]))
    return ctx.emit(graph.CastOp(ctx.emit(reduce(as_bytes, [rank - 1], keepdims=False)), graph.BOOL))


@dataclass(frozen=True)
class Forest:
    """A tree ensemble in the form `evaluate` computes: split nodes (by index), paths, and each path's weight for
    each target."""

    modes: np.ndarray
    """Per node: `COMPARISONS` keys, NEQ or MEMBER (TreeEnsemble-5's codes)."""
    splits: np.ndarray
    features: np.ndarray
    tracks: np.ndarray
    """Per node: whether a NaN feature takes the true branch."""
    sets: dict[int, list[float]]
    """MEMBER nodes' sets."""
    paths: Paths
    weights: np.ndarray
    """[targets, paths]: what reaching the path adds to the target (in X's type)."""
    scored: np.ndarray
    """[targets, paths] bool: whether the path gives the target a score (for MIN and MAX)."""
    aggregate: int
    base: np.ndarray | None = None
    """[targets]: added to the aggregated scores (TreeEnsembleRegressor's base_values)."""


def evaluate(
    ctx: NodeContext, x: SSAValue, forest: Forest, scores_type: np.dtype | None = None
) -> tuple[SSAValue, SSAValue]:
    """The aggregated scores [N, targets] of `forest` on the samples `x` [N, features] (see the module docstring), of
    `scores_type` (default: x's type), and which targets some reached leaf scores (bool [N, targets])."""
    n = shape_of(x)[0]
    dtype = scores_type or dtype_of(graph.element_type(x))
    name, paths = ctx.node.output[0], forest.paths
    if paths.nodes:
        decisions = _decisions(ctx, x, forest)
    else:  # every tree is one leaf
        decisions = ctx.data(ConstantValue(f"{name}.always", np.ones((n, 1), bool)))
    steps = ctx.emit(graph.GatherOp(decisions, 1, paths.columns.reshape(-1).tolist(), paths.columns.shape))
    agree = ctx.emit(graph.EqualOp(steps, ctx.data(ConstantValue(f"{name}.branches", paths.branches))))
    reached = _over_last_axis(ctx, graph.ReduceMinOp, agree)
    wide = ctx.emit(graph.ReshapeOp(reached, (n, 1, len(paths.leaves))))
    chosen = ctx.emit(graph.AndOp(wide, ctx.data(ConstantValue(f"{name}.target_mask", forest.scored))))
    neutral = {SUM: 0, AVERAGE: 0, MIN: np.finfo(dtype).max, MAX: np.finfo(dtype).min}[forest.aggregate]
    bound = ctx.data(ConstantValue(f"{name}.neutral", np.array(neutral, dtype)))
    weight = ctx.data(ConstantValue(f"{name}.leaf_weight", forest.weights.astype(dtype)))
    candidates = ctx.emit(graph.WhereOp(chosen, weight, bound))
    reduce = {SUM: graph.ReduceSumOp, AVERAGE: graph.ReduceSumOp, MIN: graph.ReduceMinOp, MAX: graph.ReduceMaxOp}
    scores = ctx.emit(reduce[forest.aggregate](candidates, [2], keepdims=False))
    if forest.aggregate == AVERAGE:
        trees = ctx.data(ConstantValue(f"{name}.trees", np.array(paths.trees, dtype)))
        scores = ctx.emit(graph.DivOp(scores, trees))
    if forest.base is not None:
        scores = ctx.emit(graph.AddOp(scores, ctx.data(ConstantValue(f"{name}.base", forest.base.astype(dtype)))))
    scored = _over_last_axis(ctx, graph.ReduceMaxOp, chosen)
    if forest.aggregate in (MIN, MAX) or forest.base is not None:  # as ONNX Runtime: 0 where no leaf scores
        zero = ctx.data(ConstantValue(f"{name}.zero", np.array(0, dtype)))
        scores = ctx.emit(graph.WhereOp(scored, scores, zero))
    return scores, scored


def apply_post_transform(ctx: NodeContext, scores: SSAValue, post_transform: int) -> SSAValue:
    """NONE, SOFTMAX (over the targets) or LOGISTIC; the others were refused before."""
    if post_transform == SOFTMAX:
        return ctx.emit(graph.SoftmaxOp(scores, 1))
    if post_transform == LOGISTIC:
        return ctx.emit(graph.SigmoidOp(scores))
    return scores


def _decisions(ctx: NodeContext, x: SSAValue, forest: Forest) -> SSAValue:
    """D [N, nodes + 1]: each split node's decision per sample, then an always-true column (the paths' padding)."""
    nodes, modes, splits, tracks, sets, features = (
        forest.paths.nodes,
        forest.modes,
        forest.splits,
        forest.tracks,
        forest.sets,
        forest.features,
    )
    n, width = shape_of(x)
    bad = [int(f) for f in features[nodes] if not 0 <= f < width]
    if bad:
        raise NodeError(f"feature ids {bad} are out of range for X of {width} features")
    dtype = dtype_of(graph.element_type(x))
    name = ctx.node.output[0]

    def constant(label: str, array: np.ndarray) -> SSAValue:
        return ctx.data(ConstantValue(f"{name}.{label}", array))

    values = ctx.emit(graph.GatherOp(x, 1, [int(f) for f in features[nodes]], (len(nodes),)))
    split = constant("splits", splits[nodes].astype(dtype))
    node_modes = modes[nodes]
    decided: SSAValue | None = None
    for mode in sorted(set(int(m) for m in node_modes)):
        if mode in COMPARISONS:
            hit = ctx.emit(COMPARISONS[mode](values, split))
        elif mode == NEQ:
            hit = ctx.emit(graph.NotOp(ctx.emit(graph.EqualOp(values, split))))
        elif mode == MEMBER:
            size = max(len(sets[node]) for node in nodes if modes[node] == MEMBER) or 1
            table = np.full((len(nodes), size), np.nan, dtype)
            for column, node in enumerate(nodes):
                table[column, : len(sets.get(node, []))] = sets.get(node, [])
            wide = ctx.emit(graph.ReshapeOp(values, (n, len(nodes), 1)))
            equal = ctx.emit(graph.EqualOp(wide, constant("members", table)))
            hit = _over_last_axis(ctx, graph.ReduceMaxOp, equal)
        else:
            raise NodeError(f"nodes_modes holds {mode}, which is no mode (0 to 6)")
        if len(set(int(m) for m in node_modes)) > 1:
            hit = ctx.emit(graph.AndOp(hit, constant(f"mode{mode}", node_modes == mode)))
        decided = hit if decided is None else ctx.emit(graph.OrOp(decided, hit))
    assert decided is not None
    if tracks[nodes].any():
        missing = ctx.emit(graph.AndOp(ctx.emit(graph.IsNaNOp(values)), constant("tracks_true", tracks[nodes])))
        decided = ctx.emit(graph.OrOp(decided, missing))
    always = ctx.data(ConstantValue(f"{name}.always", np.ones((n, 1), bool)))
    return ctx.emit(graph.ConcatOp([decided, always], 1))


def TreeEnsemble(
    ctx: NodeContext,
    X: Value,
    *,
    aggregate_function: int = SUM,
    leaf_targetids: Sequence[int] | None = None,
    leaf_weights: TensorProto | None = None,
    membership_values: TensorProto | None = None,
    n_targets: int | None = None,
    nodes_falseleafs: Sequence[int] | None = None,
    nodes_falsenodeids: Sequence[int] | None = None,
    nodes_featureids: Sequence[int] | None = None,
    nodes_hitrates: TensorProto | None = None,
    nodes_missing_value_tracks_true: Sequence[int] | None = None,
    nodes_modes: TensorProto | None = None,
    nodes_splits: TensorProto | None = None,
    nodes_trueleafs: Sequence[int] | None = None,
    nodes_truenodeids: Sequence[int] | None = None,
    post_transform: int = NONE,
    tree_roots: Sequence[int] | None = None,
) -> Value:
    """Every tree's leaf per sample, aggregated per target (see the module docstring); `nodes_hitrates` is
    informational."""
    del nodes_hitrates
    x = ctx.data(X)
    if graph.element_type(x) not in graph.FLOATS or len(shape_of(x)) != 2:
        raise NodeError(f"X must be a 2-D float or double tensor, got {x.type}")
    modes = attribute_array(nodes_modes, "nodes_modes").astype(np.int64)
    count = len(modes)
    lists = {
        "nodes_splits": attribute_array(nodes_splits, "nodes_splits"),
        "nodes_featureids": attribute_array(nodes_featureids, "nodes_featureids").astype(np.int64),
        "nodes_truenodeids": attribute_array(nodes_truenodeids, "nodes_truenodeids").astype(np.int64),
        "nodes_falsenodeids": attribute_array(nodes_falsenodeids, "nodes_falsenodeids").astype(np.int64),
        "nodes_trueleafs": attribute_array(nodes_trueleafs, "nodes_trueleafs").astype(bool),
        "nodes_falseleafs": attribute_array(nodes_falseleafs, "nodes_falseleafs").astype(bool),
    }
    tracks = (
        np.zeros(count, bool)
        if nodes_missing_value_tracks_true is None
        else np.asarray(nodes_missing_value_tracks_true, bool)
    )
    for what, array in [*lists.items(), ("nodes_missing_value_tracks_true", tracks)]:
        if array.shape != (count,):
            raise NodeError(f"{what} has {array.size} entries for {count} nodes")
    weights, targets = (
        attribute_array(leaf_weights, "leaf_weights"),
        attribute_array(leaf_targetids, "leaf_targetids").astype(np.int64),
    )
    if weights.shape != targets.shape:
        raise NodeError(f"leaf_weights has {weights.size} entries, leaf_targetids {targets.size}")
    if n_targets is None or n_targets < 1 or (targets.size and not 0 <= targets.min() <= targets.max() < n_targets):
        raise NodeError(f"n_targets must be positive and cover every leaf target id, got {n_targets}")
    if post_transform not in (NONE, SOFTMAX, LOGISTIC):
        raise UnsupportedNodeError(f"post_transform {post_transform} (only NONE, SOFTMAX and LOGISTIC are computed)")
    if aggregate_function not in (AVERAGE, SUM, MIN, MAX):
        raise NodeError(f"aggregate_function {aggregate_function} is not AVERAGE, SUM, MIN or MAX (0 to 3)")
    roots = attribute_array(tree_roots, "tree_roots").astype(np.int64).tolist()
    true_leafs, false_leafs, true_ids, false_ids = (
        lists[f"nodes_{k}"] for k in ("trueleafs", "falseleafs", "truenodeids", "falsenodeids")
    )
    one_leaf = [0 <= r < count and true_leafs[r] and false_leafs[r] and true_ids[r] == false_ids[r] for r in roots]
    paths = tree_paths(
        [(int(true_ids[r]) if leaf else r, bool(leaf)) for r, leaf in zip(roots, one_leaf)],
        lists["nodes_truenodeids"].tolist(),
        lists["nodes_falsenodeids"].tolist(),
        lists["nodes_trueleafs"].tolist(),
        lists["nodes_falseleafs"].tolist(),
        len(weights),
    )
    sets = _member_sets(
        modes, None if membership_values is None else attribute_array(membership_values, "membership_values")
    )
    dtype = dtype_of(graph.element_type(x))
    leaf_target = targets[paths.leaves]
    scored = leaf_target[None, :] == np.arange(n_targets)[:, None]
    forest = Forest(
        modes,
        lists["nodes_splits"].astype(dtype),
        lists["nodes_featureids"],
        tracks,
        sets,
        paths,
        np.where(scored, weights[paths.leaves].astype(dtype)[None, :], 0).astype(dtype),
        scored,
        aggregate_function,
    )
    return apply_post_transform(ctx, evaluate(ctx, x, forest)[0], post_transform)


CONVERTERS: dict[str, Converter] = {f"{ML_DOMAIN}.TreeEnsemble": TreeEnsemble}
"""`domain.OpType` -> converter (`onnx_operators.converter_key`)."""
