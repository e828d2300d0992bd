"""`te-conv-im2col`: a convolution computed as im2col + GEMM equals the direct schedule and ONNX Runtime (strides,
pads, dilations, 1x1/3x3/5x5/7x7 kernels, odd channel counts and feature maps, rectangular inputs, batch 2, bias);
the GEMM gets default-schedule's GEMM schedule with the weight matrix packed at load time; `auto` follows
`prefers_im2col`; a bad `algorithm` is rejected. Sums are reassociated differently by the two algorithms (blocked
by KC in the GEMM, by channel panels in the direct schedule), so results agree to float rounding: rtol = atol =
1e-4 on values of order 1."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import PassFailedException

from minimlc import InferenceSession
from minimlc.dialects import te
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import PIPELINES, make_context, run_passes, split_pass_list
from minimlc.lowering.schedule.default_schedule import kernels_of, schedule_for
from minimlc.lowering.target import target_from_name, target_of
from minimlc.lowering.te.te_conv_im2col import ConvShape, TeConvIm2colPass, prefers_im2col


def output_size(
    hw: tuple[int, int], kernel: tuple[int, int], stride: int, pads: list[int], dilation: int
) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        (hw[axis] + pads[axis] + pads[axis + 2] - dilation * (kernel[axis] - 1) - 1) // stride + 1 for axis in (0, 1)
    )


def conv_model(
    batch: int,
    c: int,
    hw: tuple[int, int],
    f: int,
    kernel: tuple[int, int],
    stride: int,
    pads: list[int],
    dilation: int,
    bias: bool,
) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((f, c, *kernel)) * 0.2).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32), "b"))
    conv = helper.make_node(
        "Conv", ["x", "w", "b"][: 2 + bias], ["t"], pads=pads, strides=[stride] * 2, dilations=[dilation] * 2
    )
    out = [batch, f, *output_size(hw, kernel, stride, pads, dilation)]
    graph = helper.make_graph(
        [conv, helper.make_node("Relu", ["t"], ["y"])],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c, *hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


SHAPES = {
    # batch, C, (H, W), F, kernel, stride, pads, dilation, bias
    "3x3-s1-p1": (1, 8, (10, 10), 32, (3, 3), 1, [1, 1, 1, 1], 1, True),
    "3x3-s2-odd": (1, 5, (11, 11), 7, (3, 3), 2, [1, 1, 1, 1], 1, False),
    "3x3-dilated": (1, 6, (12, 12), 16, (3, 3), 1, [2, 2, 2, 2], 2, True),
    "1x1-s1": (1, 16, (7, 7), 32, (1, 1), 1, [0, 0, 0, 0], 1, True),
    "1x1-s1-odd": (1, 13, (5, 5), 19, (1, 1), 1, [0, 0, 0, 0], 1, False),
    "1x1-s2": (1, 16, (8, 8), 32, (1, 1), 2, [0, 0, 0, 0], 1, False),
    "5x5-asym-pad": (1, 4, (9, 13), 24, (5, 5), 1, [2, 1, 2, 3], 1, True),
    "7x7-s2": (1, 3, (20, 20), 16, (7, 7), 2, [3, 3, 3, 3], 1, True),
    "3x1-batch2": (2, 6, (6, 9), 16, (3, 1), 1, [1, 0, 1, 0], 1, True),
    "1x1-s1-batch2": (2, 8, (4, 4), 16, (1, 1), 1, [0, 0, 0, 0], 1, False),
}


def session(model: onnx.ModelProto, pipeline: str) -> InferenceSession:
    imported = import_model(model)
    result = InferenceSession.__new__(InferenceSession)
    result._set_signature(imported.inputs, imported.outputs, imported.constant_outputs)
    result._bind(compile_model(imported, pipeline), 3, 1)
    return result


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_im2col_equals_direct_and_onnxruntime(name: str) -> None:
    batch, c, hw = SHAPES[name][:3]
    model = conv_model(*SHAPES[name])
    x = np.random.default_rng(1).standard_normal((batch, c, *hw)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (im2col,) = session(model, "lower-to-llvm-conv-im2col").run(None, {"x": x})
    (direct,) = session(model, "lower-to-llvm-conv-direct").run(None, {"x": x})
    np.testing.assert_allclose(im2col, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(im2col, direct, rtol=1e-4, atol=1e-4)


def scheduled_kernels(model: onnx.ModelProto, pipeline: str):
    imported = import_model(model)
    passes = split_pass_list(PIPELINES[pipeline][1])
    run_passes(imported.module, passes[: passes.index("default-schedule")], make_context())
    return imported.module


@pytest.mark.parametrize(("name", "gather"), [("3x3-s2-odd", True), ("1x1-s1", False)])
def test_gemm_gets_the_gemm_schedule(name: str, gather: bool) -> None:
    module = scheduled_kernels(conv_model(*SHAPES[name]), "lower-to-llvm-conv-im2col")
    names = [k.sym_name.data for k in kernels_of(module)]
    assert any(re.fullmatch(r"conv_im2col_\d+", n) for n in names) == gather
    assert not any(re.fullmatch(r"conv_\d+", n) for n in names)
    (gemm,) = [k for k in kernels_of(module) if re.fullmatch(r"conv_gemm_\d+", k.sym_name.data)]
    steps = schedule_for(module, gemm, target_of(module))
    # The micro-kernel, with the weight matrix (computed once at load time) packed into panels.
    assert any(step.startswith("loop-pack{") for step in steps)
    assert any(step.startswith("loop-cache-write{") for step in steps)


def test_auto_follows_the_rule() -> None:
    for name in SHAPES:
        batch, c, (h, w), f, (kh, kw), stride, pads, dilation, _ = SHAPES[name]
        model = conv_model(*SHAPES[name])
        imported = import_model(model)
        # O2: at O3, graph-pad-conv-channels first rounds the output channels up to whole vectors.
        passes = split_pass_list(PIPELINES["lower-to-llvm-O2"][1])
        run_passes(imported.module, passes[: passes.index("te-conv-im2col") + 1])
        tags = {op.tag.data for op in imported.module.walk() if isinstance(op, te.ComputeOp)}
        oh, ow = output_size((h, w), (kh, kw), stride, pads, dilation)
        expected = prefers_im2col(ConvShape(batch, c, f, oh, ow, kh, kw), target_from_name())
        assert ("conv_gemm" in tags) == expected, name


def test_bad_algorithm_is_rejected() -> None:
    module = import_model(conv_model(*SHAPES["1x1-s1"])).module
    run_passes(module, ["graph-to-te"])
    message = "te-conv-im2col: algorithm must be one of auto, im2col, direct, got 'gemm'"
    with pytest.raises(PassFailedException, match=message):
        TeConvIm2colPass("gemm").apply(make_context(), module)


@pytest.mark.parametrize("opt_level", [2, 3])
def test_auto_at_o2_and_o3(opt_level: int) -> None:
    """O2 keeps the weight matrix a per-call kernel (unpacked GEMM operand), O3 builds and packs it at load time."""
    model = conv_model(*SHAPES["3x3-s2-odd"])  # 7 output channels: im2col at O2, padded to 16 and direct at O3
    x = np.random.default_rng(2).standard_normal((1, 5, 11, 11)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(model, opt_level=opt_level).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def concat_then_pointwise_model(concat: bool) -> onnx.ModelProto:
    """A 1x1 convolution 32 -> 16 over 12x12 pixels, its input a channel concatenation of two 16-channel inputs (or,
    without `concat`, one 32-channel input), then ReLU."""
    weights = (np.random.default_rng(0).standard_normal((16, 32, 1, 1)) * 0.2).astype(np.float32)
    w = numpy_helper.from_array(weights, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 12, 12])]
    if concat:
        nodes.insert(0, helper.make_node("Concat", ["a", "b"], ["x"], axis=1))
        inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 16, 12, 12]) for name in "ab"]
    graph = helper.make_graph(
        nodes, "pointwise", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])], [w]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize("concat", [True, False], ids=["concat-input", "plain-input"])
def test_auto_reads_a_concatenation_in_place_for_a_narrowing_pointwise_conv(concat: bool) -> None:
    """A concatenation stays NCHW (te-channels-last), so `auto` gives the 1x1 convolution reading it to im2col, whose
    GEMM reads the concatenation in place; the same convolution on a plain input stays direct. Numerics as ORT's."""
    model = concat_then_pointwise_model(concat)
    imported = import_model(model)
    passes = split_pass_list(PIPELINES["lower-to-llvm-O2"][1])
    run_passes(imported.module, passes[: passes.index("te-conv-im2col") + 1])
    tags = {op.tag.data for op in imported.module.walk() if isinstance(op, te.ComputeOp)}
    assert ("conv_gemm" in tags) == concat
    rng = np.random.default_rng(3)
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in model.graph.input
    }
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feeds)
    (actual,) = InferenceSession(model).run(None, feeds)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
