"""Numerics of ai.onnx.ml TreeEnsemble (domain version 5) at O0 and O3 against ONNX Runtime: random forests of
every split mode, missing values that track true, set membership, one-leaf trees, every aggregate function, the
computed post-transforms, float32 and float64; malformed trees are refused with the node named."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnx_cases import check_against_onnxruntime

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

FEATURES = 4


def forest(
    seed: int, trees: int = 3, depth: int = 3, targets: int = 2, modes: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6)
) -> dict[str, Any]:
    """Attributes of a random forest: full binary trees of `depth` levels (some subtrees cut into leaves), splits
    on small integers (so that EQ/NEQ and membership hit), every third node tracking missing values as true."""
    rng = np.random.default_rng(seed)
    nodes: dict[str, list[Any]] = {
        k: [] for k in ("feature", "mode", "split", "true", "false", "tleaf", "fleaf", "nan")
    }
    leaves: dict[str, list[Any]] = {"target": [], "weight": []}
    members: list[float] = []
    roots: list[int] = []

    def leaf() -> int:
        leaves["target"].append(int(rng.integers(targets)))
        leaves["weight"].append(float(rng.normal() * 10))
        return len(leaves["target"]) - 1

    def node(level: int) -> tuple[int, bool]:
        if level == depth or (level > 0 and rng.random() < 0.2):
            return leaf(), True
        index = len(nodes["mode"])
        mode = int(rng.choice(modes))
        for key in nodes:
            nodes[key].append(0)
        nodes["feature"][index], nodes["mode"][index] = int(rng.integers(FEATURES)), mode
        nodes["split"][index], nodes["nan"][index] = float(rng.integers(-2, 3)), int(index % 3 == 0)
        if mode == 6:
            members.extend([*rng.integers(-2, 3, size=2).astype(float).tolist(), float("nan")])
        for side, is_leaf in (("true", "tleaf"), ("false", "fleaf")):
            target, leafy = node(level + 1)
            nodes[side][index], nodes[is_leaf][index] = target, int(leafy)
        return index, False

    for _ in range(trees):
        root, is_leaf = node(0)
        if is_leaf:  # cannot happen at level 0; kept for clarity
            raise AssertionError
        roots.append(root)
    attributes: dict[str, Any] = {
        "n_targets": targets,
        "tree_roots": roots,
        "nodes_featureids": nodes["feature"],
        "nodes_modes": numpy_helper.from_array(np.array(nodes["mode"], np.uint8), "nodes_modes"),
        "nodes_splits": numpy_helper.from_array(np.array(nodes["split"], np.float32), "nodes_splits"),
        "nodes_truenodeids": nodes["true"],
        "nodes_trueleafs": nodes["tleaf"],
        "nodes_falsenodeids": nodes["false"],
        "nodes_falseleafs": nodes["fleaf"],
        "nodes_missing_value_tracks_true": nodes["nan"],
        "leaf_targetids": leaves["target"],
        "leaf_weights": numpy_helper.from_array(np.array(leaves["weight"], np.float32), "leaf_weights"),
    }
    if members:
        attributes["membership_values"] = numpy_helper.from_array(np.array(members, np.float32), "membership_values")
    return attributes


def ensemble_model(attributes: dict[str, Any], dtype: Any = np.float32, rows: int = 16) -> onnx.ModelProto:
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    attributes = dict(attributes)
    for key in ("nodes_splits", "leaf_weights", "membership_values"):
        if key in attributes:
            array = numpy_helper.to_array(attributes[key]).astype(dtype)
            attributes[key] = numpy_helper.from_array(array, key)
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", name="forest", **attributes)
    graph = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("X", element, [rows, FEATURES])],
        [helper.make_tensor_value_info("Y", element, [rows, attributes["n_targets"]])],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def inputs(dtype: Any = np.float32, rows: int = 16, seed: int = 0, halves: bool = True) -> np.ndarray:
    """Small integers (ties with the splits), with `halves` some of them plus 0.5, and NaNs. Set membership is tested
    on whole numbers only: ONNX Runtime's test of a fractional value is not ONNX's (it finds -2.5 in {-2}, not 2.5
    in {2}), while minimlc tests exact membership as ONNX defines it."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=(rows, FEATURES)).astype(dtype)
    if halves:
        x += rng.choice([0, 0.5], size=(rows, FEATURES)).astype(dtype)
    x[rng.random((rows, FEATURES)) < 0.1] = np.nan
    return x.astype(dtype)


def check(model: onnx.ModelProto, x: np.ndarray) -> None:
    check_against_onnxruntime(InferenceSession, model, {"X": x})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("aggregate", "dtype"),
    [(0, np.float32), (1, np.float32), (2, np.float32), (3, np.float32), (1, np.float64), (3, np.float64)],
    ids=["average", "sum", "min", "max", "sum-f64", "max-f64"],
)
@pytest.mark.parametrize("seed", [1])
def test_random_forests_match_onnxruntime(aggregate: int, dtype: Any, seed: int) -> None:
    attributes = {**forest(seed, trees=4, depth=4, targets=3), "aggregate_function": aggregate}
    check(ensemble_model(attributes, dtype), inputs(dtype, seed=seed, halves=False))


@pytest.mark.parametrize("mode", range(7), ids=["leq", "lt", "gte", "gt", "eq", "neq", "member"])
def test_each_split_mode(mode: int) -> None:
    check(ensemble_model(forest(10 + mode, trees=2, depth=3, modes=(mode,))), inputs(seed=mode, halves=mode != 6))


@pytest.mark.parametrize("transform", [1, 2], ids=["softmax", "logistic"])
def test_post_transforms(transform: int) -> None:
    """Against the transform (numpy) of ONNX Runtime's untransformed scores: ONNX Runtime's own post-transformed
    TreeEnsemble-5 rows are not the transform of its scores (softmax rows that do not sum to 1)."""
    attributes, x = forest(5, targets=3), inputs(seed=5, halves=False)
    (scores,) = ort.InferenceSession(ensemble_model(attributes).SerializeToString()).run(None, {"X": x})
    if transform == 1:
        shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
        expected = shifted / shifted.sum(axis=1, keepdims=True)
    else:
        expected = 1 / (1 + np.exp(-scores))
    (actual,) = InferenceSession(ensemble_model({**attributes, "post_transform": transform}), cache=False).run(
        None, {"X": x}
    )
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_a_one_leaf_tree_beside_others() -> None:
    attributes = forest(7, trees=2)
    count, leaves = len(attributes["nodes_featureids"]), len(attributes["leaf_targetids"])
    for key, value in (("nodes_featureids", 0), ("nodes_truenodeids", leaves), ("nodes_falsenodeids", leaves)):
        attributes[key] = [*attributes[key], value]
    for key in ("nodes_trueleafs", "nodes_falseleafs"):
        attributes[key] = [*attributes[key], 1]
    attributes["nodes_missing_value_tracks_true"] = [*attributes["nodes_missing_value_tracks_true"], 0]
    for key, value in (("nodes_modes", 0), ("nodes_splits", 0.0), ("leaf_weights", 42.0)):
        array = numpy_helper.to_array(attributes[key])
        attributes[key] = numpy_helper.from_array(np.append(array, array.dtype.type(value)), key)
    attributes["leaf_targetids"] = [*attributes["leaf_targetids"], 1]
    attributes["tree_roots"] = [*attributes["tree_roots"], count]
    check(ensemble_model(attributes), inputs(seed=7, halves=False))


def test_malformed_trees_are_refused() -> None:
    attributes = forest(3)
    cyclic = {**attributes, "nodes_truenodeids": [0] * len(attributes["nodes_truenodeids"])}
    cyclic["nodes_trueleafs"] = [0] * len(cyclic["nodes_truenodeids"])
    with pytest.raises(ModelImportError, match=r"'forest' \(TreeEnsemble\): the tree at root 0 has a cycle"):
        InferenceSession(ensemble_model(cyclic), cache=False)
    short = {**attributes, "nodes_featureids": attributes["nodes_featureids"][:-1]}
    with pytest.raises(ModelImportError, match=r"nodes_featureids has \d+ entries for \d+ nodes"):
        InferenceSession(ensemble_model(short), cache=False)
    with pytest.raises(UnsupportedFeatureError, match=r"post_transform 4 \(only NONE, SOFTMAX and LOGISTIC"):
        InferenceSession(ensemble_model({**attributes, "post_transform": 4}), cache=False)
    wide = {**attributes, "nodes_featureids": [FEATURES] * len(attributes["nodes_featureids"])}
    with pytest.raises(ModelImportError, match=rf"feature ids \[{FEATURES}, .*\] are out of range for X of 4"):
        InferenceSession(ensemble_model(wide), cache=False)
