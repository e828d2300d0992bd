"""Numerics of the detection ops (MaxUnpool, RoiAlign, DeformConv) at O0 and O3 against ONNX Runtime (onnx's
reference evaluator where ONNX Runtime lacks the case or reads it otherwise), and their refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

RTOL = 1e-4
ATOL = 1e-5


def _run_and_compare(model: Any, feeds: dict[str, np.ndarray], *, reference: bool = False) -> None:
    check_against_onnxruntime(InferenceSession, model, feeds, RTOL, atol=ATOL, reference=reference)


def _pooled(shape: tuple[int, ...], kernel: int, stride: int) -> dict[str, np.ndarray]:
    """MaxPool's values and indices of a random input, by ONNX Runtime."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    spatial = len(shape) - 2
    attributes = {"kernel_shape": [kernel] * spatial, "strides": [stride] * spatial}
    pool = one_node_model("MaxPool", {"x": x}, attributes, outputs=2, opset=12)
    values, indices = ort.InferenceSession(pool.SerializeToString()).run(None, {"x": x})
    return {"X": values, "I": indices}


@pytest.mark.parametrize(
    ("shape", "kernel", "stride"), [((2, 3, 8, 8), 2, 2), ((1, 2, 9, 7), 3, 2), ((1, 2, 10), 2, 2)]
)
def test_max_unpool_matches_onnxruntime(shape: tuple[int, ...], kernel: int, stride: int) -> None:
    feeds = _pooled(shape, kernel, stride)
    spatial = len(shape) - 2
    model = one_node_model("MaxUnpool", feeds, {"kernel_shape": [kernel] * spatial, "strides": [stride] * spatial})
    _run_and_compare(model, feeds)


def test_max_unpool_pads_to_output_shape_as_the_reference() -> None:
    feeds = _pooled((1, 2, 8, 8), 2, 2)
    constants = {"output_shape": np.array([1, 2, 9, 10], np.int64)}
    model = one_node_model("MaxUnpool", feeds, {"kernel_shape": [2, 2], "strides": [2, 2]}, constants=constants)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("Y0", TensorProto.FLOAT, [1, 2, 9, 10]))
    _run_and_compare(model, feeds, reference=True)


def _rois() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    corners = rng.uniform(-2.0, 14.0, (6, 2, 2)).astype(np.float32)
    return {
        "X": rng.standard_normal((2, 3, 12, 10)).astype(np.float32),
        "rois": np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1),
        "batch_indices": np.array([0, 1, 1, 0, 1, 0], np.int64),
    }


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize(("height", "width", "ratio", "scale"), [(5, 5, 2, 1.0), (3, 4, 3, 0.5), (2, 2, 1, 1.5)])
def test_roi_align_matches_onnxruntime(
    mode: str, transform: str, height: int, width: int, ratio: int, scale: float
) -> None:
    feeds = _rois()
    attributes = {
        "mode": mode,
        "coordinate_transformation_mode": transform,
        "output_height": height,
        "output_width": width,
        "sampling_ratio": ratio,
        "spatial_scale": scale,
    }
    model = one_node_model("RoiAlign", feeds, attributes, opset=16)
    _run_and_compare(model, feeds)


def test_roi_align_refuses_an_adaptive_sampling_grid() -> None:
    feeds = _rois()
    model = one_node_model("RoiAlign", feeds, {"sampling_ratio": 0}, opset=16)
    with pytest.raises(UnsupportedFeatureError, match="sampling_ratio 0"):
        InferenceSession(model, cache=False)


DEFORM_CASES = [
    # (X shape, W shape, attributes, with bias and mask)
    ((1, 2, 6, 6), (3, 2, 3, 3), {}, False),
    ((2, 4, 7, 6), (4, 2, 3, 2), {"group": 2, "pads": [1, 0, 1, 1]}, True),
    ((1, 4, 8, 8), (2, 4, 3, 3), {"offset_group": 2, "strides": [2, 1], "dilations": [1, 2]}, True),
    ((1, 6, 5, 5), (6, 3, 2, 2), {"group": 2, "offset_group": 3, "pads": [1, 1, 1, 1]}, False),
]


@pytest.mark.slow
@pytest.mark.parametrize(("x_shape", "w_shape", "attributes", "extras"), DEFORM_CASES)
def test_deform_conv_matches_reference(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], attributes: dict[str, Any], extras: bool
) -> None:
    rng = np.random.default_rng(5)
    pads = attributes.get("pads", [0, 0, 0, 0])
    strides, dilations = attributes.get("strides", [1, 1]), attributes.get("dilations", [1, 1])
    out = [
        (x_shape[2 + a] + pads[a] + pads[a + 2] - (w_shape[2 + a] - 1) * dilations[a] - 1) // strides[a] + 1
        for a in range(2)
    ]
    taps = w_shape[2] * w_shape[3] * attributes.get("offset_group", 1)
    feeds = {
        "X": rng.standard_normal(x_shape).astype(np.float32),
        "W": rng.standard_normal(w_shape).astype(np.float32),
        "offset": rng.uniform(-2.5, 2.5, (x_shape[0], 2 * taps, *out)).astype(np.float32),
    }
    if extras:
        feeds["B"] = rng.standard_normal(w_shape[0]).astype(np.float32)
        feeds["mask"] = rng.uniform(0.0, 1.0, (x_shape[0], taps, *out)).astype(np.float32)
    model = one_node_model("DeformConv", feeds, {"kernel_shape": list(w_shape[2:]), **attributes}, opset=19)
    _run_and_compare(model, feeds, reference=True)


def test_deform_conv_refuses_3d() -> None:
    feeds = {
        "X": np.zeros((1, 1, 4, 4, 4), np.float32),
        "W": np.zeros((1, 1, 2, 2, 2), np.float32),
        "offset": np.zeros((1, 24, 3, 3, 3), np.float32),
    }
    model = one_node_model("DeformConv", feeds, {"kernel_shape": [2, 2, 2]}, opset=19)
    with pytest.raises(UnsupportedFeatureError, match="only 2-D DeformConv"):
        InferenceSession(model, cache=False)
