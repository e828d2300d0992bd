"""Numerics of NonMaxSuppression at O0 and O3 against ONNX Runtime: random boxes of both formats (flipped
corners too), score threshold present or not, limits below and above the box count, run-time IoU and score
thresholds; the output is trimmed to the run-time count. And its refusals."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError
from minimlc.frontend.onnx_nms import MAX_BOXES


def _model(limit: int | None, *, score_threshold: bool, center_point_box: int) -> onnx.ModelProto:
    inputs = ["boxes", "scores", "limit" if limit is not None else "", "iou", "score" if score_threshold else ""]
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"], center_point_box=center_point_box)
    graph_inputs = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
    ]
    if score_threshold:
        graph_inputs.append(helper.make_tensor_value_info("score", TensorProto.FLOAT, [1]))
    constants = [] if limit is None else [onnx.numpy_helper.from_array(np.array([limit], np.int64), "limit")]
    graph = helper.make_graph(
        [node],
        "nms",
        graph_inputs,
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])],
        constants,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


def _feeds(batches: int, classes: int, count: int, center_point_box: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if center_point_box:
        boxes = np.concatenate([rng.uniform(0, 10, (batches, count, 2)), rng.uniform(0.5, 4, (batches, count, 2))], -1)
    else:  # corners in either order
        boxes = rng.uniform(0, 10, (batches, count, 4))
    scores = rng.choice(np.linspace(0.0, 1.0, 11), (batches, classes, count))  # ties broken by index
    return {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32)}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("batches", "classes", "count", "limit", "score_threshold", "center_point_box"),
    [
        (1, 1, 6, 3, True, 0),
        (2, 3, 12, 4, True, 0),
        (2, 2, 10, 20, False, 1),
        (1, 3, 16, 16, True, 1),
        (3, 1, 5, 2, False, 0),
    ],
)
def test_non_max_suppression_matches_onnxruntime(
    batches: int, classes: int, count: int, limit: int, score_threshold: bool, center_point_box: int
) -> None:
    """One compiled model per shape: the IoU and score thresholds are run-time inputs, each setting a run."""
    model = _model(limit, score_threshold=score_threshold, center_point_box=center_point_box)
    model.graph.input[0].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [batches, count, 4]))
    model.graph.input[1].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [batches, classes, count]))
    oracle = ort.InferenceSession(model.SerializeToString())
    session = InferenceSession(model, cache=False)
    assert session.stats["kernels"] > 0
    feeds = _feeds(batches, classes, count, center_point_box, seed=count)
    for iou, score in [(0.3, 0.2), (0.0, 0.5), (0.7, 0.0)]:
        feeds["iou"] = np.array([iou], np.float32)
        if score_threshold:
            feeds["score"] = np.array([score], np.float32)
        (expected,) = oracle.run(None, feeds)
        (actual,) = session.run(None, feeds)
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected, err_msg=f"iou threshold {iou}, score threshold {score}")


def test_non_max_suppression_without_a_limit_selects_nothing() -> None:
    model = _model(None, score_threshold=False, center_point_box=0)
    model.graph.input[0].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4, 4]))
    model.graph.input[1].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 1, 4]))
    feeds = {**_feeds(1, 1, 4, 0, seed=1), "iou": np.array([0.5], np.float32)}
    (actual,) = InferenceSession(model, cache=False).run(None, feeds)
    assert actual.shape == (0, 3)


def test_non_max_suppression_refuses_too_many_boxes() -> None:
    model = _model(3, score_threshold=False, center_point_box=0)
    count = MAX_BOXES + 1
    model.graph.input[0].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, count, 4]))
    model.graph.input[1].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 1, count]))
    with pytest.raises(UnsupportedFeatureError, match="unrolled selection takes at most"):
        InferenceSession(model, cache=False)
