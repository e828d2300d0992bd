"""`minimlc.tools.model_tools`: weight randomisation by role, exposing intermediates, the norm-wise comparison."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc.tools import model_tools


def constant_of_shape(name: str, shape: list[int]) -> list[onnx.NodeProto]:
    return [
        helper.make_node(
            "Constant", [], [f"{name}_shape"], value=numpy_helper.from_array(np.array(shape, np.int64), "s")
        ),
        helper.make_node(
            "ConstantOfShape",
            [f"{name}_shape"],
            [name],
            value=numpy_helper.from_array(np.array([0.02], np.float32), "v"),
        ),
    ]


def small_cnn() -> onnx.ModelProto:
    """Conv (16x3x3x3 weight) -> BatchNormalization -> Relu -> Flatten -> Gemm (via a reshaped weight) -> Softmax."""
    nodes = [
        *constant_of_shape("conv_w", [16, 3, 3, 3]),
        *constant_of_shape("conv_b", [16]),
        *constant_of_shape("bn_scale", [16]),
        *constant_of_shape("bn_var", [16]),
        *constant_of_shape("fc_w_flat", [1, 10, 16 * 4 * 4]),
        helper.make_node("Reshape", ["fc_w_flat", "fc_shape"], ["fc_w"]),
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["relu"]),
        helper.make_node("Flatten", ["relu"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
    ]
    initializers = [
        numpy_helper.from_array(np.array([10, 256], np.int64), "fc_shape"),
        numpy_helper.from_array(np.full(16, 0.5, np.float32), "bn_bias"),
        numpy_helper.from_array(np.zeros(16, np.float32), "bn_mean"),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)  # ORT reads IR <= 13


def constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {
        node.output[0]: numpy_helper.to_array(node.attribute[0].t)
        for node in model.graph.node
        if node.op_type == "Constant"
    }


def test_randomise_weights_scales_each_weight_by_its_role() -> None:
    original = small_cnn()
    model = model_tools.randomise_weights(original, seed=3)
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("ConstantOfShape") == 0
    assert [n.op_type for n in original.graph.node].count("ConstantOfShape") == 5
    values = constants(model)
    assert values["conv_w"].shape == (16, 3, 3, 3)
    assert values["conv_w"].dtype == np.float32
    assert values["conv_w"].std() == pytest.approx(1 / math.sqrt(27), rel=0.15)
    assert values["fc_w_flat"].std() == pytest.approx(1 / math.sqrt(256), rel=0.1)  # through Reshape, transB
    assert values["conv_b"].std() == pytest.approx(0.1, rel=0.5)
    for name in ("bn_scale", "bn_var"):
        assert values[name].min() >= 0.5
        assert values[name].max() <= 1.5
    initializers = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    np.testing.assert_array_equal(initializers["fc_shape"], [10, 256])  # an integer shape: kept
    for name in ("bn_bias", "bn_mean"):  # float initializers: random, by role (normal, std 0.1)
        assert initializers[name].dtype == np.float32 and initializers[name].shape == (16,)
        assert 0 < initializers[name].std() < 0.3 and not np.all(initializers[name] == initializers[name][0])


def test_randomise_weights_replaces_float_initializers_and_keeps_shapes_and_scalars() -> None:
    """A model of initializers (as exported models are): its outputs change, and minimlc still matches ORT."""
    from make_mlp import build_mlp

    from minimlc import InferenceSession

    scale = numpy_helper.from_array(np.array([2.0, 0.5], np.float32), "scales")  # read as Resize's scales
    original = build_mlp(batch=2)
    original.graph.initializer.extend([scale, numpy_helper.from_array(np.array(3.0, np.float32), "unused_scalar")])
    model = model_tools.randomise_weights(original, seed=4)
    before = {t.name: numpy_helper.to_array(t) for t in original.graph.initializer}
    after = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert [t.name for t in model.graph.initializer] == [t.name for t in original.graph.initializer]
    for name in ("fc0.weight", "fc0.bias", "fc1.weight", "fc1.bias"):
        assert after[name].shape == before[name].shape and after[name].dtype == np.float32
        assert not np.array_equal(after[name], before[name])
    assert after["fc0.weight"].std() == pytest.approx(1 / math.sqrt(784), rel=0.1)  # Gemm transB: fan-in 784
    assert float(after["unused_scalar"]) == 3.0  # a scalar (an epsilon, an exponent): kept
    feeds = model_tools.random_inputs(model, seed=0)
    ours = InferenceSession(model).run(None, feeds)[0]
    assert not np.allclose(ours, InferenceSession(original).run(None, feeds)[0], atol=1e-3)
    (error,) = model_tools.compare({"logits": ours}, model_tools.run_oracle(model, feeds), ["logits"], 1e-3, 1e-4)
    assert error.within_tolerance, error
    resize = helper.make_node("Resize", ["x", "", "scales"], ["y"])
    graph = helper.make_graph(
        [resize], "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [scale],
    )  # fmt: skip
    resized = model_tools.randomise_weights(helper.make_model(graph), seed=0)
    np.testing.assert_array_equal(numpy_helper.to_array(resized.graph.initializer[0]), [2.0, 0.5])  # kept


def test_randomise_weights_is_seeded() -> None:
    first = constants(model_tools.randomise_weights(small_cnn(), seed=0))
    again = constants(model_tools.randomise_weights(small_cnn(), seed=0))
    other = constants(model_tools.randomise_weights(small_cnn(), seed=1))
    np.testing.assert_array_equal(first["conv_w"], again["conv_w"])
    assert not np.array_equal(first["conv_w"], other["conv_w"])


def test_expose_intermediates_lists_computed_tensors_in_node_order() -> None:
    model, names = model_tools.expose_intermediates(small_cnn())
    assert names == ["conv", "bn", "relu", "flat", "logits", "probs"]
    assert [vi.name for vi in model.graph.output] == ["probs", "conv", "bn", "relu", "flat", "logits"]
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in model.graph.output}
    assert shapes["conv"] == [1, 16, 4, 4]
    assert shapes["flat"] == [1, 256]


def test_oracles_agree_on_the_random_model() -> None:
    # Up to the conv only: onnx.reference's BatchNormalization-9 differs from ONNX Runtime's (and the spec's).
    model, _ = model_tools.expose_intermediates(model_tools.randomise_weights(small_cnn()))
    feeds = model_tools.random_inputs(model, seed=0)
    assert feeds["x"].shape == (1, 3, 4, 4)
    assert feeds["x"].dtype == np.float32
    ort = model_tools.run_oracle(model, feeds, "onnxruntime")
    reference = model_tools.run_oracle(model, feeds, "reference")
    (error,) = model_tools.compare(ort, reference, ["conv"], rtol=1e-5, atol=1e-6)
    assert error.within_tolerance, error
    with pytest.raises(ValueError, match="unknown oracle 'tvm'"):
        model_tools.run_oracle(model, feeds, "tvm")


@pytest.mark.parametrize(
    ("actual", "expected", "within"),
    [
        ([10.0, 0.0], [10.0, 0.0100], True),  # 0.01 <= 1e-4 + 1e-3 * 10: the tensor's scale, not the element's
        ([10.0, 0.0], [10.0, 0.0102], False),
        ([1.0, np.inf], [1.0, np.inf], True),
        ([1.0, -np.inf], [1.0, np.inf], False),
        ([1.0, np.nan], [1.0, np.nan], True),
        ([1.0, 2.0], [1.0, np.nan], False),
        ([1.0, np.nan], [1.0, 2.0], False),
    ],
)
def test_tensor_error_is_norm_wise(actual: list[float], expected: list[float], within: bool) -> None:
    error = model_tools.tensor_error("t", np.array(actual, np.float32), np.array(expected, np.float32), 1e-3, 1e-4)
    assert error.within_tolerance is within


def test_tensor_error_figures_and_shape_mismatch() -> None:
    error = model_tools.tensor_error("t", np.array([1.0, 2.5]), np.array([1.0, 2.0]), 1e-3, 1e-4)
    assert (error.max_abs, error.max_rel, error.shape) == (0.5, 0.25, (2,))
    mismatch = model_tools.tensor_error("t", np.zeros(3), np.zeros(2), 1e-3, 1e-4)
    assert not mismatch.within_tolerance
    assert mismatch.max_abs == math.inf
