"""Numerics of ai.onnx.ml TreeEnsembleRegressor (domain versions 1 and 3, the form scikit-learn's and LightGBM's
converters write) at O0 and O3 against ONNX Runtime: random forests with node ids in shuffled order, several
targets per leaf, base values, every aggregate, the computed post-transforms, float32/float64/int64 inputs, NaNs
that track true; malformed forests are refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx_cases import check_against_onnxruntime

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError

FEATURES = 3
MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def forest(seed: int, trees: int = 3, depth: int = 3, targets: int = 2) -> dict[str, Any]:
    """A random forest: each tree's node ids a shuffled range (its root not always 0), every leaf scoring one or two
    targets, splits at small integers and halves."""
    rng = np.random.default_rng(seed)
    columns: dict[str, list[Any]] = {
        k: []
        for k in ("tree", "node", "feature", "mode", "value", "true", "false", "nan", "t_tree", "t_node", "t_id", "t_w")
    }
    for tree in range(trees):
        ids = iter(rng.permutation(2 ** (depth + 1)).tolist())

        def grow(level: int) -> int:
            node = next(ids)
            row = len(columns["tree"])
            for key in ("tree", "node", "feature", "mode", "value", "true", "false", "nan"):
                columns[key].append(0)
            columns["tree"][row], columns["node"][row] = tree, node
            if level == depth or (level > 0 and rng.random() < 0.25):
                columns["mode"][row] = "LEAF"
                for target in rng.choice(targets, size=int(rng.integers(1, min(targets, 2) + 1)), replace=False):
                    columns["t_tree"].append(tree)
                    columns["t_node"].append(node)
                    columns["t_id"].append(int(target))
                    columns["t_w"].append(float(rng.normal() * 5))
                return node
            columns["mode"][row] = str(rng.choice(MODES))
            columns["feature"][row] = int(rng.integers(FEATURES))
            columns["value"][row] = float(rng.integers(-2, 3)) + float(rng.choice([0.0, 0.5]))
            columns["nan"][row] = int(rng.random() < 0.3)
            columns["true"][row] = grow(level + 1)
            columns["false"][row] = grow(level + 1)
            return node

        grow(0)
    return {
        "n_targets": targets,
        "nodes_treeids": columns["tree"],
        "nodes_nodeids": columns["node"],
        "nodes_featureids": columns["feature"],
        "nodes_modes": columns["mode"],
        "nodes_values": columns["value"],
        "nodes_truenodeids": columns["true"],
        "nodes_falsenodeids": columns["false"],
        "nodes_missing_value_tracks_true": columns["nan"],
        "target_treeids": columns["t_tree"],
        "target_nodeids": columns["t_node"],
        "target_ids": columns["t_id"],
        "target_weights": columns["t_w"],
    }


def regressor_model(
    attributes: dict[str, Any], element: int = TensorProto.FLOAT, rows: int = 12, ml_opset: int = 3
) -> onnx.ModelProto:
    """One TreeEnsembleRegressor node of domain version `ml_opset`."""
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", name="forest", **attributes)
    graph = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("X", element, [rows, FEATURES])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [rows, attributes["n_targets"]])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", ml_opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def inputs(dtype: Any = np.float32, rows: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=(rows, FEATURES)).astype(np.float64) + rng.choice([0, 0.5], size=(rows, FEATURES))
    if np.dtype(dtype).kind == "f":
        x[rng.random((rows, FEATURES)) < 0.1] = np.nan
    return x.astype(dtype)


def check(model: onnx.ModelProto, x: np.ndarray) -> None:
    check_against_onnxruntime(InferenceSession, model, {"X": x})


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
def test_random_forests_match_onnxruntime(aggregate: str) -> None:
    attributes = {**forest(1, trees=4, depth=4, targets=3), "aggregate_function": aggregate}
    check(regressor_model(attributes), inputs(seed=1))


def test_double_inputs() -> None:
    check(regressor_model(forest(2), TensorProto.DOUBLE), inputs(np.float64, seed=2))


@pytest.mark.parametrize(("dtype", "element"), [(np.int64, TensorProto.INT64), (np.int32, TensorProto.INT32)])
def test_integer_inputs_compare_as_float(dtype: Any, element: int) -> None:
    """ONNX Runtime has no integer kernel: the oracle is its float32 kernel on the same values as floats."""
    attributes, x = forest(2), np.round(np.nan_to_num(inputs(np.float32, seed=2))).astype(dtype)
    (expected,) = ort.InferenceSession(regressor_model(attributes).SerializeToString()).run(
        None, {"X": x.astype(np.float32)}
    )
    session = InferenceSession(regressor_model(attributes, element, ml_opset=1), cache=False)
    (actual,) = session.run(None, {"X": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transform", ["LOGISTIC", "SOFTMAX"])
def test_base_values_and_post_transforms(transform: str) -> None:
    attributes = {**forest(3, targets=3), "base_values": [0.5, -1.0, 2.0], "post_transform": transform}
    check(regressor_model(attributes), inputs(seed=3))


def test_a_one_leaf_tree() -> None:
    attributes = forest(4, trees=2)
    for key, value in (("nodes_treeids", 2), ("nodes_nodeids", 7), ("nodes_featureids", 0), ("nodes_values", 0.0)):
        attributes[key] = [*attributes[key], value]
    for key, value in (("nodes_modes", "LEAF"), ("nodes_truenodeids", 0), ("nodes_falsenodeids", 0)):
        attributes[key] = [*attributes[key], value]
    attributes["nodes_missing_value_tracks_true"] = [*attributes["nodes_missing_value_tracks_true"], 0]
    for key, value in (("target_treeids", 2), ("target_nodeids", 7), ("target_ids", 1), ("target_weights", 4.25)):
        attributes[key] = [*attributes[key], value]
    check(regressor_model(attributes), inputs(seed=4))


def test_malformed_forests_are_refused() -> None:
    attributes = forest(5)
    dangling = {**attributes, "nodes_truenodeids": [99] * len(attributes["nodes_truenodeids"])}
    with pytest.raises(ModelImportError, match=r"'forest' \(TreeEnsembleRegressor\): node \d+ of tree 0 branches to"):
        InferenceSession(regressor_model(dangling), cache=False)
    with pytest.raises(ModelImportError, match=r"target entry 0 names node 12345 of tree 0, which is no leaf"):
        InferenceSession(regressor_model({**attributes, "target_nodeids": [12345] + attributes["target_nodeids"][1:]}))
    with pytest.raises(UnsupportedFeatureError, match=r"post_transform 'PROBIT' \(only NONE, SOFTMAX and LOGISTIC"):
        InferenceSession(regressor_model({**attributes, "post_transform": "PROBIT"}), cache=False)
    with pytest.raises(ModelImportError, match=r"nodes_modes holds \['BRANCH_MEMBER'\]"):
        InferenceSession(
            regressor_model({**attributes, "nodes_modes": ["BRANCH_MEMBER"] * len(attributes["nodes_modes"])})
        )


def classifier_model(attributes: dict[str, Any], labels: list[int], rows: int = 12) -> onnx.ModelProto:
    """One TreeEnsembleClassifier node (domain version 3): the forest's target entries as class entries."""
    attributes = {key.replace("target_", "class_"): value for key, value in attributes.items() if key != "n_targets"}
    node = helper.make_node(
        "TreeEnsembleClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml", name="forest",
        classlabels_int64s=labels, **attributes,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [rows, FEATURES])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, [rows]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [rows, len(labels)]),
        ],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


@pytest.mark.parametrize("transform", ["NONE", "SOFTMAX", "LOGISTIC"])
def test_classifier_labels_and_scores(transform: str) -> None:
    attributes = {**forest(6, trees=3, depth=3, targets=3), "post_transform": transform}
    check_against_onnxruntime(InferenceSession, classifier_model(attributes, [7, -2, 40]), {"X": inputs(seed=6)})


def test_classifier_with_base_values() -> None:
    attributes = {**forest(8, trees=4, depth=3, targets=4), "base_values": [0.25, -0.5, 0.0, 1.0]}
    check_against_onnxruntime(InferenceSession, classifier_model(attributes, [0, 1, 2, 3]), {"X": inputs(seed=8)})


def test_classifier_refusals() -> None:
    attributes = forest(9, targets=2)
    with pytest.raises(UnsupportedFeatureError, match=r"a classifier of 2 classes: ONNX Runtime labels and scores"):
        InferenceSession(classifier_model(attributes, [0, 1]), cache=False)
    model = classifier_model(attributes, [0, 1])
    del model.graph.node[0].attribute[[a.name for a in model.graph.node[0].attribute].index("classlabels_int64s")]
    model.graph.node[0].attribute.append(helper.make_attribute("classlabels_strings", [b"no", b"yes"]))
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.STRING
    with pytest.raises(UnsupportedFeatureError, match=r"string class labels"):
        InferenceSession(model, cache=False)
