"""`te-conv-winograd`: stride-1 3x3 convolutions computed with Winograd F(2x2, 3x3) equal ONNX Runtime and the direct
schedule (batch 2, rectangular, square and odd maps, with and without bias, a residual add after, a ReLU'd convolution
before whose padding folds into the input transform, O2 and O3); `auto` follows `prefers_winograd`; the batched GEMM
gets default-schedule's GEMM schedule (a tuning task with tile knobs) and the weight transform runs at load time;
ineligible convolutions stay direct. The transform domain reassociates the sums (nine products added in the output
transform, the input's differences), so results agree to float rounding: rtol = atol = 1e-4 on values of order 1."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.pattern_rewriter import PatternRewriter

from minimlc import InferenceSession
from minimlc.dialects import loop, te
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import PIPELINES, make_context, run_passes, split_pass_list
from minimlc.lowering.schedule.default_schedule import kernel_space, kernels_of
from minimlc.lowering.strategy.conv import ConvShape, prefers_winograd
from minimlc.lowering.target import target_from_name, target_of
from minimlc.lowering.te.te_conv_winograd import ConvToWinograd, eligible_convolution
from tests.lowering.test_conv_im2col import session


def block_model(
    batch: int, c: int, f: int, hw: tuple[int, int], *, bias: bool, before: bool, residual: bool
) -> onnx.ModelProto:
    """[1x1 conv + ReLU (`before`)] -> 3x3 conv (pad 1) [+ the block's input (`residual`)] -> ReLU -> 1x1 conv: the
    3x3 convolution is stored channels-last (the 1x1 after it reads it), so Winograd is eligible."""
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []

    def weight(name: str, shape: tuple[int, ...]) -> str:
        scale = (2.0 / np.prod(shape[1:])) ** 0.5
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    nodes, x = [], "x"
    if before:
        nodes += [
            helper.make_node("Conv", ["x", weight("w0", (c, c, 1, 1))], ["a"]),
            helper.make_node("Relu", ["a"], ["ar"]),
        ]
        x = "ar"
    operands = [x, weight("w", (f, c, 3, 3))]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32) * 0.1, "b"))
        operands.append("b")
    nodes.append(helper.make_node("Conv", operands, ["t"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
    if residual:
        nodes.append(helper.make_node("Add", ["t", x], ["s"]))
    nodes += [
        helper.make_node("Relu", ["s" if residual else "t"], ["r"]),
        helper.make_node("Conv", ["r", weight("w2", (f, f, 1, 1))], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c, *hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, f, *hw])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


BLOCKS = {
    # batch, C, F, (H, W), keywords: 32 tiles of 2x2 or more (`prefers_winograd`)
    "64-12x12-relu-before": (1, 64, 64, (12, 12), {"bias": True, "before": True, "residual": False}),
    "96to64-8x10-batch2": (2, 96, 64, (8, 10), {"bias": False, "before": False, "residual": False}),
    "64-14x10-residual": (1, 64, 64, (14, 10), {"bias": True, "before": True, "residual": True}),
    "64to128-8x16": (1, 64, 128, (8, 16), {"bias": True, "before": False, "residual": False}),
}


def tags_at_te(model: onnx.ModelProto, pipeline: str = "lower-to-llvm-O3") -> list[str]:
    imported = import_model(model)
    passes = split_pass_list(PIPELINES[pipeline][1])
    (end,) = [i + 1 for i, item in enumerate(passes) if item.split("{")[0] == "te-conv-winograd"]
    run_passes(imported.module, passes[:end], make_context())
    return [op.tag.data for op in imported.module.walk() if isinstance(op, te.ComputeOp)]


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_winograd_equals_onnxruntime_and_the_direct_schedule(name: str) -> None:
    batch, c, f, hw, keywords = BLOCKS[name]
    model = block_model(batch, c, f, hw, **keywords)
    assert tags_at_te(model).count("winograd_gemm") == 1  # `auto` takes it: 64 channels and more
    assert "winograd_gemm" not in tags_at_te(model, "lower-to-llvm-conv-direct")
    x = np.random.default_rng(1).standard_normal((batch, c, *hw)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (winograd,) = InferenceSession(model).run(None, {"x": x})
    (direct,) = session(model, "lower-to-llvm-conv-direct").run(None, {"x": x})
    np.testing.assert_allclose(winograd, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(winograd, direct, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("batch", "hw", "keywords"),
    [
        (1, (7, 7), {"bias": True, "before": True, "residual": False}),  # ResNet's last stage: 16 tiles for 49 pixels
        (2, (5, 6), {"bias": False, "before": True, "residual": True}),  # one odd side, batch 2, a residual add
    ],
)
def test_odd_maps_take_one_more_tile_and_equal_onnxruntime(batch: int, hw: tuple[int, int], keywords: dict) -> None:
    """An odd side's last tiles reach past the padded input (their reads clamped to its last row or column) and their
    second output row or column is never stored; the padding (and the ReLU before, where there is one) folds into
    the input transform as on even maps."""
    model = block_model(batch, 64, 64, hw, **keywords)
    assert "winograd_gemm" in tags_at_te(model, "lower-to-llvm-conv-winograd")
    x = np.random.default_rng(4).standard_normal((batch, 64, *hw)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (winograd,) = session(model, "lower-to-llvm-conv-winograd").run(None, {"x": x})
    (direct,) = session(model, "lower-to-llvm-conv-direct").run(None, {"x": x})
    np.testing.assert_allclose(winograd, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(winograd, direct, rtol=1e-4, atol=1e-4)


def test_winograd_at_o2_computes_the_weight_transform_per_run() -> None:
    model = block_model(1, 64, 64, (12, 12), bias=True, before=True, residual=False)
    x = np.random.default_rng(2).standard_normal((1, 64, 12, 12)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    assert "winograd_gemm" in tags_at_te(model, "lower-to-llvm-O2")
    (actual,) = InferenceSession(model, opt_level=2).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def test_small_channel_counts_take_winograd_only_when_asked() -> None:
    """`auto` leaves a 16 -> 32 convolution direct (`prefers_winograd`); `lower-to-llvm-conv-winograd` takes it, with
    the same numbers."""
    model = block_model(1, 16, 32, (6, 8), bias=True, before=True, residual=False)
    assert "winograd_gemm" not in tags_at_te(model)
    assert "winograd_gemm" in tags_at_te(model, "lower-to-llvm-conv-winograd")
    x = np.random.default_rng(3).standard_normal((1, 16, 6, 8)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = session(model, "lower-to-llvm-conv-winograd").run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def test_ineligible_convolutions_stay_direct() -> None:
    """A stride of 2 and a 3x3 convolution whose output stays NCHW (it feeds the model's result, so te-channels-last
    leaves it) are not Winograd's, even when every eligible one is asked for."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 64, 3, 3)).astype(np.float32), "w")
    for strides in ([2, 2], [1, 1]):
        out = 4 if strides == [2, 2] else 8
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=strides)],
            "conv",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 8, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, out, out])],
            [w],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
        assert "winograd_gemm" not in tags_at_te(model, "lower-to-llvm-conv-winograd"), strides


def test_the_gemm_is_a_tuning_task_and_the_weight_transform_runs_at_load_time() -> None:
    model = block_model(1, 64, 64, (12, 12), bias=True, before=True, residual=False)
    imported = import_model(model)
    passes = split_pass_list(PIPELINES["lower-to-llvm-O3"][1])
    run_passes(imported.module, passes[: passes.index("default-schedule")], make_context())
    module = imported.module
    by_name = {k.sym_name.data: k for k in kernels_of(module)}
    (gemm,) = [k for n, k in by_name.items() if re.fullmatch(r"winograd_gemm_\d+", n)]
    space = kernel_space(module, gemm, target_of(module))
    assert space is not None
    assert space.rule is not None
    assert space.rule.name == "gemm"
    assert {"mr", "nr", "kc"} <= {knob.name for knob in space.space.knobs}
    (transform,) = [n for n in by_name if re.fullmatch(r"winograd_weight_\d+", n)]
    (main,) = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"]
    precomputed = {op.kernel.root_reference.data for op in main.walk() if isinstance(op, loop.PrecomputeOp)}
    called = {op.callee.root_reference.data for op in main.walk() if isinstance(op, func.CallOp)}
    assert transform in precomputed  # computed once, at load time
    assert transform not in called


@pytest.mark.parametrize(
    ("shape", "target", "expected"),
    [
        (ConvShape(1, 64, 64, 56, 56, 3, 3), "znver4", True),  # ResNet-50's stages
        (ConvShape(1, 256, 256, 14, 14, 3, 3), "znver4", True),
        (ConvShape(1, 128, 32, 56, 56, 3, 3), "znver4", False),  # DenseNet-121's: input transform 4x the output
        (ConvShape(1, 64, 64, 224, 224, 3, 3), "znver4", False),  # VGG's first: 51 MB of transformed input
        (ConvShape(1, 64, 80, 28, 28, 3, 3), "znver4", False),  # 80 channels: no two-vector tile of 16 lanes
        (ConvShape(1, 64, 80, 28, 28, 3, 3), "x86-64-v3", True),  # of 8 lanes, yes
        (ConvShape(1, 512, 512, 7, 7, 3, 3), "x86-64-v3", False),  # 16 tiles: the tuner's choice, not the rule's
        (ConvShape(1, 64, 256, 13, 13, 3, 3), "x86-64-v3", True),  # an odd map of 49 tiles
    ],
)
def test_prefers_winograd(shape: ConvShape, target: str, expected: bool) -> None:
    assert prefers_winograd(shape, target_from_name(target)) == expected


def test_a_convolution_of_a_shape_rewritten_before_gets_clones_reading_its_own_operands() -> None:
    """Two 64 -> 64 3x3 convolutions on 12x12 maps (ResNet's repeated blocks in small): the second gets clones of
    the first's four computes, and the module is the one building each gives; the model computes as ONNX Runtime."""
    rng = np.random.default_rng(5)
    weights = [
        numpy_helper.from_array(rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.06, f"w{k}") for k in (1, 2)
    ]
    weights.append(numpy_helper.from_array(rng.standard_normal((64, 64, 1, 1)).astype(np.float32) * 0.2, "w3"))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["ar", "w2"], ["b"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["b"], ["br"]),
        helper.make_node("Conv", ["br", "w3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "two_convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 12, 12])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    module = import_model(model).module
    passes = split_pass_list(PIPELINES["lower-to-llvm-O3"][1])
    run_passes(module, passes[: passes.index("te-conv-winograd")], make_context())
    built = module.clone()
    run_passes(module, ["te-conv-winograd{convolutions=all}"], make_context())
    for op in [op for op in built.walk() if isinstance(op, te.ComputeOp) and eligible_convolution(op)]:
        ConvToWinograd("all", target_of(built), None).match_and_rewrite(op, PatternRewriter(op))  # a new one each
    assert str(module) == str(built)
    assert [op.tag.data for op in module.walk() if isinstance(op, te.ComputeOp)].count("winograd_gemm") == 2
    x = rng.standard_normal((1, 64, 12, 12)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
