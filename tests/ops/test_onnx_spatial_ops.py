"""Numerics of the spatial ONNX ops (Resize, Upsample, ConvTranspose, Col2Im, DepthToSpace, SpaceToDepth, LpPool,
LpNormalization, CenterCropPad, AffineGrid, GridSample), end to end through minimlc's InferenceSession at every opt
level, against ONNX Runtime (rtol=1e-4, atol=1e-5), and their refusals.

Shape-setting inputs (scales, sizes, roi, shape, size, image_shape, block_shape) are initializers: compile-time
constants, as the backend binds them. Data inputs are seeded random float32.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import UnsupportedFeatureError

RTOL = 1e-4
ATOL = 1e-5

Shape = tuple[int, ...]


def _model(
    op_type: str,
    inputs: Mapping[str, Shape],
    constants: Mapping[str, np.ndarray],
    opset: int,
    attributes: Mapping[str, Any],
) -> onnx.ModelProto:
    names = [*inputs, *constants]
    node = helper.make_node(op_type, names, ["Y"], **attributes)
    graph = helper.make_graph(
        [node],
        "test",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs.items() if name],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(array, name) for name, array in constants.items() if name],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _check(
    op_type: str,
    inputs: Mapping[str, Shape],
    constants: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 19,
    low: float = -2.0,
    high: float = 2.0,
    **attributes: Any,
) -> None:
    """One `op_type` node on graph `inputs` then `constants` (names in order; "" skips an optional input)."""
    model = _model(op_type, inputs, constants or {}, opset, attributes)
    rng = np.random.default_rng(0)
    feeds = {name: rng.uniform(low, high, shape).astype(np.float32) for name, shape in inputs.items() if name}
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    (actual,) = InferenceSession(_with_output_shape(model, expected.shape)).run(None, feeds)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def _with_output_shape(model: onnx.ModelProto, shape: Shape) -> onnx.ModelProto:
    """`model` with its output's shape declared (minimlc needs it)."""
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape))
    onnx.checker.check_model(model)
    return model


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


EMPTY = np.array([], dtype=np.float32)

RESIZES = [  # (input shape, roi, scales, sizes, attributes)
    ((1, 2, 4, 4), None, _f32(1, 1, 2, 2), None, {"mode": "nearest"}),
    ((1, 2, 4, 6), None, _f32(1, 1, 0.5, 0.6), None, {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}),
    ((1, 1, 5, 4), None, _f32(1, 1, 1.7, 2.3), None, {"mode": "nearest", "nearest_mode": "floor"}),
    (
        (1, 1, 5, 4),
        None,
        None,
        _i64(1, 1, 8, 9),
        {"mode": "nearest", "nearest_mode": "ceil", "coordinate_transformation_mode": "align_corners"},
    ),
    ((2, 3, 4, 5), None, _f32(1, 1, 2, 1.5), None, {"mode": "linear"}),
    (
        (1, 2, 8, 8),
        None,
        _f32(1, 1, 0.5, 0.75),
        None,
        {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
    ),
    ((1, 2, 4, 5), None, None, _i64(1, 2, 7, 3), {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
    (
        (1, 1, 6, 5),
        None,
        None,
        _i64(1, 1, 4, 1),
        {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
    ),
    (
        (1, 1, 5, 5),
        None,
        _f32(1, 1, 1.6, 0.7),
        None,
        {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
    ),
    ((1, 2, 4, 4), None, _f32(1, 1, 2, 2), None, {"mode": "cubic"}),
    ((1, 1, 6, 7), None, _f32(1, 1, 0.6, 1.4), None, {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ((1, 1, 4, 4), None, None, _i64(1, 1, 9, 10), {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}),
    ((1, 1, 8, 8), None, _f32(1, 1, 0.6, 0.5), None, {"mode": "linear", "antialias": 1}),
    ((1, 1, 9, 8), None, None, _i64(1, 1, 4, 5), {"mode": "cubic", "antialias": 1}),
    (
        (1, 1, 5, 5),
        _f32(0, 0, 0.2, 0.3, 1, 1, 0.9, 1.2),
        None,
        _i64(1, 1, 4, 6),
        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 3.0},
    ),
    ((1, 2, 4, 6), None, _f32(3, 2), None, {"mode": "nearest", "axes": [3, 2]}),
    (
        (1, 2, 4, 6),
        None,
        None,
        _i64(5, 5),
        {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
    ),
    (
        (1, 2, 4, 6),
        None,
        None,
        _i64(5, 5),
        {"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"},
    ),
    ((2, 3, 6), None, _f32(1, 1, 2.5), None, {"mode": "linear"}),
    ((1, 2, 3, 4, 4), None, _f32(1, 1, 2, 1, 0.5), None, {"mode": "linear"}),
]


@pytest.mark.parametrize(("x", "roi", "scales", "sizes", "attributes"), RESIZES, ids=str)
def test_resize(
    x: Shape, roi: np.ndarray | None, scales: np.ndarray | None, sizes: np.ndarray | None, attributes: dict[str, Any]
) -> None:
    bounds = EMPTY if roi is None else roi
    if sizes is None:
        constants = {"roi": bounds, "scales": scales}
    else:  # the scales input omitted (an empty name)
        constants = {"roi": bounds, "": EMPTY, "sizes": sizes}
    _check("Resize", {"X": x}, constants, **attributes)


@pytest.mark.parametrize(
    ("scales", "mode"),
    [
        ((1, 1, 2, 3), "nearest"),
        ((1, 1, 0.5, 0.6), "nearest"),
        ((1, 1, 2, 1.5), "linear"),
        ((1, 1, 0.6, 0.5), "linear"),
    ],
    ids=str,
)
def test_resize_opset_10(scales: tuple[float, ...], mode: str) -> None:
    _check("Resize", {"X": (1, 2, 5, 6)}, {"scales": _f32(*scales)}, opset=10, mode=mode)


@pytest.mark.parametrize(("scales", "mode"), [((1, 1, 2, 3), "nearest"), ((1, 1, 2, 2), "linear")], ids=str)
def test_upsample(scales: tuple[float, ...], mode: str) -> None:
    _check("Upsample", {"X": (1, 2, 3, 4)}, {"scales": _f32(*scales)}, opset=9, mode=mode)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_opset_7_scales_attribute(mode: str) -> None:
    _check("Upsample", {"X": (1, 2, 3, 4)}, opset=7, mode=mode, scales=[1.0, 1.0, 2.0, 3.0])


CONV_TRANSPOSES = [  # (input shape, weight shape, bias?, attributes)
    ((1, 2, 4, 4), (2, 3, 3, 3), True, {}),
    ((2, 4, 5, 5), (4, 2, 3, 3), False, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 4, 4, 5), (4, 3, 3, 2), True, {"group": 2, "strides": [2, 3], "output_padding": [1, 2]}),
    ((1, 3, 4, 4), (3, 2, 3, 3), False, {"dilations": [2, 2], "pads": [1, 0, 2, 1]}),
    ((1, 2, 3, 3), (2, 2, 3, 3), False, {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 3, 3), (2, 2, 3, 3), False, {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 3, 3), (2, 2, 3, 3), True, {"strides": [3, 2], "output_shape": [10, 8]}),
    ((2, 3, 6), (3, 4, 3), True, {"strides": [2]}),
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), False, {"strides": [1, 2, 2]}),
    ((1, 16, 8, 8), (16, 8, 4, 4), True, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # a decoder's upsampling
]


@pytest.mark.parametrize(("x", "w", "bias", "attributes"), CONV_TRANSPOSES, ids=str)
def test_conv_transpose(x: Shape, w: Shape, bias: bool, attributes: dict[str, Any]) -> None:
    rng = np.random.default_rng(1)
    constants = {"W": rng.uniform(-1, 1, w).astype(np.float32)}
    if bias:
        constants["B"] = rng.uniform(-1, 1, (w[1] * attributes.get("group", 1),)).astype(np.float32)
    _check("ConvTranspose", {"X": x}, constants, opset=13, **attributes)


def test_conv_transpose_with_runtime_weights() -> None:
    _check("ConvTranspose", {"X": (1, 2, 3, 3), "W": (2, 3, 2, 2)}, opset=13, strides=[2, 2])


COL2IMS = [  # (input shape, image, block, attributes)
    ((1, 5, 5), (5, 5), (1, 5), {}),
    ((1, 18, 6), (4, 5), (3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((2, 8, 9), (7, 7), (2, 2), {"dilations": [2, 2], "strides": [2, 2]}),
    ((1, 8, 24), (3, 4, 5), (2, 2, 2), {}),
]


@pytest.mark.parametrize(("x", "image", "block", "attributes"), COL2IMS, ids=str)
def test_col2im(x: Shape, image: Shape, block: Shape, attributes: dict[str, Any]) -> None:
    _check_with_reference("Col2Im", {"X": x}, {"image": _i64(*image), "block": _i64(*block)}, 18, attributes)


def _check_with_reference(
    op_type: str,
    inputs: Mapping[str, Shape],
    constants: Mapping[str, np.ndarray],
    opset: int,
    attributes: Mapping[str, Any],
) -> None:
    """Against onnx's reference evaluator, for ops ONNX Runtime's CPU provider lacks (Col2Im)."""
    from onnx.reference import ReferenceEvaluator

    model = _model(op_type, inputs, constants, opset, attributes)
    rng = np.random.default_rng(0)
    feeds = {name: rng.uniform(-2.0, 2.0, shape).astype(np.float32) for name, shape in inputs.items()}
    (expected,) = ReferenceEvaluator(model).run(None, feeds)
    (actual,) = InferenceSession(_with_output_shape(model, expected.shape)).run(None, feeds)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode: str) -> None:
    _check("DepthToSpace", {"X": (2, 8, 3, 4)}, opset=13, blocksize=2, mode=mode)


def test_space_to_depth() -> None:
    _check("SpaceToDepth", {"X": (2, 3, 6, 4)}, opset=13, blocksize=2)


LP_POOLS = [  # attributes
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "p": 1},
    {"kernel_shape": [2, 3], "dilations": [2, 1], "p": 3},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
]


@pytest.mark.parametrize("attributes", LP_POOLS, ids=str)
def test_lp_pool(attributes: dict[str, Any]) -> None:
    _check("LpPool", {"X": (1, 3, 7, 7)}, opset=18, **attributes)


@pytest.mark.parametrize(("axis", "p"), [(-1, 2), (1, 1), (0, 2)])
def test_lp_normalization(axis: int, p: int) -> None:
    _check("LpNormalization", {"X": (3, 4, 5)}, opset=13, axis=axis, p=p)


@pytest.mark.parametrize(
    ("x", "shape", "axes"),
    [((5, 6, 3), (3, 8), [0, 1]), ((4, 5, 6), (7, 5, 2), None), ((2, 7, 7), (4, 9), [-1, -2])],
    ids=str,
)
def test_center_crop_pad(x: Shape, shape: Shape, axes: list[int] | None) -> None:
    attributes = {} if axes is None else {"axes": axes}
    model = _model("CenterCropPad", {"X": x}, {"shape": _i64(*shape)}, 18, attributes)
    feeds = {"X": np.random.default_rng(0).uniform(-2, 2, x).astype(np.float32)}
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    (actual,) = InferenceSession(_with_output_shape(model, expected.shape)).run(None, feeds)
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize(
    ("size", "align_corners"), [((2, 3, 4, 5), 0), ((1, 1, 3, 2), 1), ((2, 1, 3, 4, 2), 0)], ids=str
)
def test_affine_grid(size: Shape, align_corners: int) -> None:
    theta = (2, 3) if len(size) == 4 else (3, 4)
    _check("AffineGrid", {"theta": (size[0], *theta)}, {"size": _i64(*size)}, opset=20, align_corners=align_corners)


GRID_SAMPLES = [  # (input shape, grid shape, attributes)
    ((1, 2, 5, 6), (1, 4, 3, 2), {"mode": "linear", "padding_mode": "zeros"}),
    ((2, 3, 4, 4), (2, 5, 2, 2), {"mode": "linear", "padding_mode": "border", "align_corners": 1}),
    ((1, 2, 5, 4), (1, 3, 3, 2), {"mode": "linear", "padding_mode": "reflection"}),
    ((1, 2, 5, 4), (1, 3, 3, 2), {"mode": "nearest", "padding_mode": "zeros"}),
    ((1, 2, 5, 4), (1, 3, 3, 2), {"mode": "nearest", "padding_mode": "reflection", "align_corners": 1}),
    ((1, 2, 5, 4), (1, 3, 3, 2), {"mode": "cubic", "padding_mode": "zeros"}),
    ((1, 1, 6, 5), (1, 3, 3, 2), {"mode": "cubic", "padding_mode": "reflection", "align_corners": 1}),
    ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3), {"mode": "linear", "padding_mode": "zeros"}),
    ((1, 2, 3, 4, 5), (1, 2, 2, 2, 3), {"mode": "nearest", "padding_mode": "border"}),
]


@pytest.mark.parametrize(("x", "grid", "attributes"), GRID_SAMPLES, ids=str)
def test_grid_sample(x: Shape, grid: Shape, attributes: dict[str, Any]) -> None:
    # Coordinates reach past [-1, 1] so that every padding mode matters.
    _check("GridSample", {"X": x, "grid": grid}, opset=20, low=-1.4, high=1.4, **attributes)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_opset_16(mode: str) -> None:
    _check("GridSample", {"X": (1, 2, 5, 4), "grid": (1, 3, 3, 2)}, opset=16, low=-1.0, high=1.0, mode=mode)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_at_non_finite_coordinates_reads_in_bounds(mode: str) -> None:
    """NaN and infinite coordinates (undefined results) must still read inside the image; the other points match."""
    model = _with_output_shape(
        _model("GridSample", {"X": (1, 1, 4, 4), "grid": (1, 2, 2, 2)}, {}, 20, {"mode": mode}), (1, 1, 2, 2)
    )
    rng = np.random.default_rng(0)
    image = rng.uniform(-1, 1, (1, 1, 4, 4)).astype(np.float32)
    grid = np.array([[[[np.nan, 0.2], [np.inf, -np.inf]], [[0.3, -0.4], [-0.7, 0.9]]]], dtype=np.float32)
    (actual,) = InferenceSession(model).run(None, {"X": image, "grid": grid})
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"X": image, "grid": grid})
    np.testing.assert_allclose(actual[..., 1, :], expected[..., 1, :], rtol=RTOL, atol=ATOL)


def test_grid_sample_cubic_border_follows_onnx_reference() -> None:
    """Cubic sampling with border padding clamps a coordinate outside the image to the border, then interpolates
    (onnx's reference, which the conformance tests check); ONNX Runtime clamps each tap instead, as PyTorch does."""
    attributes = {"mode": "cubic", "padding_mode": "border"}
    _check_with_reference("GridSample", {"X": (1, 2, 5, 6), "grid": (1, 3, 4, 2)}, {}, 20, attributes)


def test_lp_pool_ceil_mode_is_refused() -> None:
    model = _model("LpPool", {"X": (1, 1, 5, 5)}, {}, 18, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})
    with pytest.raises(UnsupportedFeatureError, match="ceil_mode=1 is not supported"):
        InferenceSession(_with_output_shape(model, (1, 1, 3, 3)))
