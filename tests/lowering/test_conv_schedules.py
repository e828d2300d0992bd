"""default-schedule's convolution schedule (pad, read the input channels-last, then a register-blocked direct
convolution vectorized over output channels) keeps a convolution's numbers: the scheduled model equals numpy's float64
convolution (`reference`), and the unscheduled model (clamped reads, no explicit padding), on the ResNet-50 kinds of
convolution, at small channel counts. Sums are reassociated (blocked per tile), so results agree to float rounding: rtol
= atol = 1e-4 on values of order 1 (at most 784 products). Max pooling is exact: bit for bit. The shapes are ones
`te-conv-im2col`'s `auto` rule leaves to the direct schedule (output widths with a register tile of at least 6 columns,
1x1 convolutions that widen); im2col + GEMM has its own tests (test_conv_im2col.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from schedule_cases import AVX512, scheduled_run, trace_of
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import ImportedModel, import_model
from minimlc.lowering.pipeline import (
    PIPELINES,
    build_pipeline,
    make_context,
    run_passes,
    run_pipeline,
    split_pass_list,
)
from minimlc.lowering.schedule.conv import CONV
from minimlc.lowering.schedule.default_schedule import kernel_space, kernels_of, schedule_for
from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase, kernel_key, target_key
from minimlc.lowering.target import set_target, target_from_name, target_of


def conv_model(
    c: int, size: int, f: int, kernel: int, stride: int, pad: int, bias: bool = True, relu: bool = True
) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((f, c, kernel, kernel)) * 0.2).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32), "b"))
    out = (size + 2 * pad - kernel) // stride + 1
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"][: 2 + bias], ["t" if relu else "y"], pads=[pad] * 4, strides=[stride] * 2
        )
    ]
    if relu:
        nodes.append(helper.make_node("Relu", ["t"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, out, out])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def unscheduled(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    compiled = compile_model(import_model(model), "lower-to-llvm-unscheduled")
    out = np.empty(compiled.outputs[0].shape, dtype=np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    return out


def reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """The model (Conv or MaxPool 3x3, then ReLU if any) in float64 numpy, from its own weights and attributes."""
    weights = {tensor.name: numpy_helper.to_array(tensor).astype(np.float64) for tensor in model.graph.initializer}
    y = x.astype(np.float64)
    for node in model.graph.node:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Relu":
            y = np.maximum(y, 0)
            continue
        stride, pad = attributes["strides"][0], attributes["pads"][0]
        if node.op_type == "Conv":
            y = conv(y, weights["w"], weights.get("b"), stride, pad)
        else:
            assert node.op_type == "MaxPool"
            y = max_pool_3x3(y, stride, pad, bool(attributes.get("ceil_mode", 0)))
    return y


def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: int, pad: int) -> np.ndarray:
    """NCHW convolution with square kernel, stride and zero padding: a sum over the kernel's taps."""
    kernel = w.shape[2]
    padded = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    out = (x.shape[2] + 2 * pad - kernel) // stride + 1
    y = sum(
        np.einsum("nchw,fc->nfhw", window(padded, i, j, stride, out), w[..., i, j])
        for i in range(kernel)
        for j in range(kernel)
    )
    return y if b is None else y + b[None, :, None, None]


def max_pool_3x3(x: np.ndarray, stride: int, pad: int, ceil: bool) -> np.ndarray:
    """NCHW 3x3 max pooling, padding with -inf; NaNs are passed over, a window of NaNs only is NaN (np.fmax, as
    minimlc's MaxPool: `graph_to_te/nn.py`)."""
    out = -(-(x.shape[2] + 2 * pad - 3) // stride) + 1 if ceil else (x.shape[2] + 2 * pad - 3) // stride + 1
    extra = (out - 1) * stride + 3 - x.shape[2] - 2 * pad  # the ceil mode's last window may reach past the padding
    padded = np.pad(x, [(0, 0), (0, 0), (pad, pad + extra), (pad, pad + extra)], constant_values=-np.inf)
    return np.fmax.reduce([window(padded, i, j, stride, out) for i in range(3) for j in range(3)])


def window(padded: np.ndarray, i: int, j: int, stride: int, out: int) -> np.ndarray:
    """The input elements kernel tap (i, j) meets, one per output position."""
    return padded[:, :, i : i + stride * out : stride, j : j + stride * out : stride]


SHAPES = {
    "3x3-s1": (8, 14, 32, 3, 1, 1),
    "3x3-s2": (8, 11, 16, 3, 2, 1),
    "1x1-s1": (16, 7, 32, 1, 1, 0),
    "1x1-s2": (16, 14, 32, 1, 2, 0),
    "7x7-s2": (3, 20, 16, 7, 2, 3),
    "3x3-w13": (8, 13, 16, 3, 1, 1),  # a 13-column register tile
    "1x1-w27": (16, 27, 32, 1, 1, 0),  # 9 columns of two vectors
    "3x3-s2-stem-w51": (3, 103, 64, 3, 2, 0),  # 3 columns of four vectors (SqueezeNet's stem, 111 wide)
}


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize(("bias", "relu"), [(True, True), (False, False)])
def test_conv_schedule_keeps_numbers(name: str, bias: bool, relu: bool) -> None:
    c, size, f, kernel, stride, pad = SHAPES[name]
    model = conv_model(c, size, f, kernel, stride, pad, bias, relu)
    x = np.random.default_rng(1).standard_normal((1, c, size, size)).astype(np.float32)
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(actual, reference(model, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual, unscheduled(model, x), rtol=1e-4, atol=1e-4)


def test_conv_gets_the_conv_schedule() -> None:
    imported = import_model(conv_model(8, 14, 32, 3, 1, 1))
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-schedule"][1]), ctx)
    (conv,) = [k for k in kernels_of(imported.module) if re.fullmatch(r"conv_\d+", k.sym_name.data)]
    steps = schedule_for(imported.module, conv, target_of(imported.module))
    assert steps[0].startswith("loop-decompose-reduction")
    assert any(step.startswith("loop-pack") for step in steps)
    assert steps[-1].startswith("loop-cache-write")


def pool_model(c: int, size: int) -> onnx.ModelProto:
    """MaxPool 3x3/2 pad 1 then ReLU (ResNet's stem pooling), unscheduled but run in parallel."""
    graph = helper.make_graph(
        [
            helper.make_node("MaxPool", ["x"], ["t"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["t"], ["y"]),
        ],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, (size - 1) // 2 + 1, (size - 1) // 2 + 1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize(
    ("model", "parallel_loop"),
    [
        # A convolution that feeds only the model's output stays NCHW (te-channels-last): loops (n, f, h, w).
        (conv_model(8, 14, 32, 3, 1, 1), r"loop-parallel\{kernel=conv_\d+ loop=i2\}"),  # 2 channel panels: rows
        (conv_model(16, 12, 128, 3, 2, 1), r"loop-parallel\{kernel=conv_\d+ loop=i1_o\}"),  # 8 panels
        (conv_model(3, 20, 16, 7, 2, 3), r"loop-parallel\{kernel=conv_\d+ loop=i2\}"),
        (pool_model(16, 40), r"loop-parallel\{kernel=max_pool_\d+ loop=i1\}"),
    ],
    ids=["conv-rows", "conv-channels", "conv-7x7", "maxpool"],
)
def test_parallel_schedules_are_exact_on_two_threads(model: onnx.ModelProto, parallel_loop: str) -> None:
    """Each task owns whole output tiles and sums them in the same order as one thread: results are bitwise
    equal, and equal numpy's float64 model to float rounding (max pooling: exactly)."""
    assert re.search(parallel_loop, trace_of(model))
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    one_thread = InferenceSession(model, num_threads=1)
    (one,) = one_thread.run(None, {"x": x})
    two_threads = one_thread.with_num_threads(2)
    deadline = time.monotonic() + 60
    while True:  # a busy machine may keep the second thread out of a run: repeat until both threads took tasks
        (two,) = two_threads.run(None, {"x": x})
        np.testing.assert_array_equal(two, one)
        if min(two_threads.task_counts()) > 0 or time.monotonic() > deadline:
            break
    assert min(two_threads.task_counts()) > 0, two_threads.task_counts()
    np.testing.assert_allclose(two, reference(model, x), rtol=1e-4, atol=1e-4)


# graph-pad-conv-channels: output channels that no vector width divides are padded with zero weight rows so the
# convolution gets the conv schedule (its padded weight computed once at load time), and sliced back.
@pytest.mark.parametrize(
    ("c", "size", "f", "kernel", "stride", "pad", "bias"),
    [(8, 13, 20, 3, 1, 1, True), (16, 7, 3, 1, 1, 0, False), (4, 11, 40, 3, 2, 0, True), (16, 5, 1000, 1, 1, 0, True)],
    ids=["3x3-20ch", "1x1-3ch-nobias", "3x3-s2-40ch", "1x1-1000ch-two-vectors"],
)
def test_padded_channels_keep_numbers(
    c: int, size: int, f: int, kernel: int, stride: int, pad: int, bias: bool
) -> None:
    model = conv_model(c, size, f, kernel, stride, pad, bias)
    x = np.random.default_rng(2).standard_normal((1, c, size, size)).astype(np.float32)
    (actual,) = InferenceSession(model).run(None, {"x": x})
    assert actual.shape[1] == f
    np.testing.assert_allclose(actual, reference(model, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual, unscheduled(model, x), rtol=1e-4, atol=1e-4)


def test_padded_conv_gets_the_conv_schedule_with_weights_at_load_time() -> None:
    # loop-pack applies only to a weight handle or a load-time (hoisted) buffer: the padded weight is one.
    trace = trace_of(conv_model(8, 13, 20, 3, 1, 1))
    assert re.search(r"loop-pack\{kernel=conv_\d+ operand=1 dim=0 factor=\d+ order=2,3,1\}", trace)
    assert re.search(r"loop-cache-write\{kernel=conv_\d+ ", trace)


def max_pool_model(c: int, size: int, stride: int, pad: int, ceil: bool = False) -> onnx.ModelProto:
    out = (size + 2 * pad - 3 + (stride - 1 if ceil else 0)) // stride + 1
    graph = helper.make_graph(
        [
            helper.make_node(
                "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[stride] * 2, pads=[pad] * 4, ceil_mode=ceil
            )
        ],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, out, out])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize(
    ("c", "size", "stride", "pad", "ceil", "vector"),
    [(16, 13, 1, 1, False, True), (8, 27, 2, 0, True, True), (4, 80, 2, 1, False, True), (4, 202, 5, 1, False, False)],
    ids=["3x3-s1-p1-w13", "3x3-s2-ceil-w13", "3x3-s2-p1-w40", "3x3-s5-p1-w41"],
)
def test_max_pool_schedule_is_exact(c: int, size: int, stride: int, pad: int, ceil: bool, vector: bool) -> None:
    """graph-pad-max-pool and the pool schedule (window loops outside the width loop, a vector max per window tap
    over a row of outputs; none when the row is longer than a vector and its stride too large for one wide load and a
    shuffle per tap) give numpy's and the unscheduled model's results bit for bit, NaN and infinities included."""
    model = max_pool_model(c, size, stride, pad, ceil)
    trace = trace_of(model, AVX512)  # a row of 13 strided outputs fits one vector of 16 lanes
    assert bool(re.search(r"loop-reorder\{kernel=max_pool_\d+ order=i0,i1,i2,k4,k5,i3\}", trace)) == vector
    assert bool(re.search(r"loop-vectorize\{kernel=max_pool_\d+ loop=i3\}", trace)) == vector
    x = np.random.default_rng(3).standard_normal((1, c, size, size)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 1, 5, 7], x[0, 2, 1, 1] = np.nan, -np.inf, np.inf
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_array_equal(actual, reference(model, x).astype(np.float32))
    np.testing.assert_array_equal(actual, unscheduled(model, x))


def channels_last_pool_model(c: int, size: int, stride: int, pad: int, ceil: bool) -> onnx.ModelProto:
    """1x1 convolution, ReLU, a per-channel scale and shift (an inference batch normalisation after the ReLU, as in
    Inception v2), a 3x3 max pool, 1x1 convolution: the pool sits between convolutions, so it is stored
    channels-last."""
    rng = np.random.default_rng(6)
    out = (size + 2 * pad - 3 + (stride - 1 if ceil else 0)) // stride + 1
    inits = [
        numpy_helper.from_array(rng.standard_normal((c, 8, 1, 1)).astype(np.float32), "w0"),
        numpy_helper.from_array(rng.standard_normal((16, c, 1, 1)).astype(np.float32) * 0.1, "w1"),
        numpy_helper.from_array(rng.uniform(0.5, 2.0, (1, c, 1, 1)).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal((1, c, 1, 1)).astype(np.float32), "shift"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Mul", ["r", "scale"], ["m"]),
        helper.make_node("Add", ["m", "shift"], ["n"]),
        helper.make_node(
            "MaxPool", ["n"], ["p"], kernel_shape=[3, 3], strides=[stride] * 2, pads=[pad] * 4, ceil_mode=ceil
        ),
        helper.make_node("Conv", ["p", "w1"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "stem",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, out, out])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize(
    ("c", "size", "stride", "pad", "ceil"),
    [(64, 24, 2, 1, False), (48, 14, 2, 0, True), (192, 14, 1, 1, False)],
    ids=["64-s2-p1", "48-s2-ceil", "192-s1-p1-blocks"],
)
def test_channels_last_max_pool_reads_through_its_padding(c: int, size: int, stride: int, pad: int, ceil: bool) -> None:
    """A channels-last max pool takes its -inf padding (and the ReLU, scale and shift before it) at each window
    tap (`te_inline.is_padded_row_tap`): no pad kernel, the pool still one vector max per tap across the channels,
    and onnxruntime's numbers."""
    model = channels_last_pool_model(c, size, stride, pad, ceil)
    trace = trace_of(model, AVX512)
    assert "kernel=pad_" not in trace, trace
    assert re.search(r"loop-vectorize\{kernel=max_pool_\d+ loop=i3(_i)?\}", trace), trace
    x = np.random.default_rng(7).standard_normal((1, 8, size, size)).astype(np.float32)
    (actual,) = InferenceSession(model, cache=False).run(None, {"x": x})
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual, unscheduled(model, x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "model",
    [conv_model(512, 7, 512, 3, 1, 1), conv_model(256, 14, 256, 3, 1, 1), conv_model(64, 14, 64, 3, 1, 1)],
    ids=["deep-7-columns", "deep-14-columns", "shallow"],
)
def test_conv_reduces_with_channels_innermost_and_packs_in_loop_order(model: onnx.ModelProto) -> None:
    """The default reduction order is (kh, kw, c), the channel loop (k4) innermost, for deep and shallow weight
    panels alike (`ConvRule.default`); the packed weight keeps its dimensions in the loops' order, so the inner
    loops walk it front to back."""
    trace = trace_of(model, AVX512)
    assert re.search(r"loop-reorder\{kernel=conv_\d+ order=i0,i\d_o,i\d,i\d_o,k5,k6,k4,i\d_i,i\d_i\}", trace), trace
    assert re.search(r"loop-pack\{kernel=conv_\d+ operand=1 dim=0 factor=32 order=2,3,1\}", trace), trace


def test_channels_outermost_knob_reorders_the_reduction_and_the_packed_panel() -> None:
    """`channels=outermost` walks (c, kh, kw): the weight's own order, so the pack needs no `order`."""
    imported = import_model(conv_model(512, 7, 512, 3, 1, 1))
    run_pipeline(imported.module, 3, stop_after="loop", target=AVX512)
    target = target_of(imported.module)
    (workload,) = [w for k in kernels_of(imported.module) if (w := CONV.match(imported.module, k, target))]
    steps = ",".join(CONV.apply(workload, {**CONV.default(workload, target), "channels": "outermost"}))
    assert re.search(r"loop-reorder\{kernel=conv_\d+ order=i0,i\d_o,i\d,i\d_o,k4,k5,k6,i\d_i,i\d_i\}", steps), steps
    assert re.search(r"loop-pack\{kernel=conv_\d+ operand=1 dim=0 factor=32\}", steps), steps


def test_prefetch_knob_keeps_the_numbers_and_prefetches_the_next_panel() -> None:
    """`prefetch=true` adds `loop-prefetch` on the packed weight's innermost reduction loop (k4, the input channels):
    two panels of 32 filters, each step prefetching two lines of the next; the numbers are the default's, bit for
    bit (a prefetch changes no arithmetic)."""
    model = conv_model(64, 14, 64, 3, 1, 1)
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="loop")
    target = target_of(imported.module)
    (workload,) = [w for k in kernels_of(imported.module) if (w := CONV.match(imported.module, k, target))]
    steps = CONV.apply(workload, {**CONV.default(workload, target), "prefetch": True})
    assert re.fullmatch(
        r"loop-prefetch\{kernel=conv_\d+ loop=k4 operand=1\}",
        steps[steps.index(next(s for s in steps if s.startswith("loop-pack"))) + 1],
    ), steps
    x = np.random.default_rng(3).standard_normal((1, 64, 14, 14)).astype(np.float32)
    default = scheduled_run(model, "conv", lambda space: space.space.default(), x)
    prefetched = scheduled_run(model, "conv", lambda space: {**space.space.default(), "prefetch": True}, x)
    np.testing.assert_array_equal(prefetched, default)
    np.testing.assert_allclose(default, reference(model, x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("mr", "channels"), [(4, "innermost"), (5, "outermost"), (6, "innermost"), (9, "innermost")])
def test_columns_left_over_get_a_register_tile_of_their_own(mr: int, channels: str) -> None:
    """An `mr` that does not divide the width (14) splits the columns after the reorder: the main tiles cover
    `14 - 14 % mr` columns and the tail loop `<w>_t` (`14 % mr` columns) is split whole, reordered and cached in
    registers like them. Both write every output once: the numbers equal numpy's float64 convolution."""
    model = conv_model(16, 14, 32, 3, 1, 1)
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="loop")
    target = target_of(imported.module)
    (workload,) = [w for k in kernels_of(imported.module) if (w := CONV.match(imported.module, k, target))]
    config = {**CONV.default(workload, target), "mr": mr, "channels": channels}
    steps = CONV.apply(workload, config)
    tail = f"{workload.columns}_t"
    assert f"loop-split{{kernel={workload.kernel} loop={tail} factor={14 % mr}}}" in steps, steps
    assert [s for s in steps if s.startswith("loop-cache-write")] == [
        f"loop-cache-write{{kernel={workload.kernel} loop={loop} fill=true}}"
        for loop in (f"{workload.columns}_o", f"{tail}_o")
    ]
    x = np.random.default_rng(5).standard_normal((1, 16, 14, 14)).astype(np.float32)
    actual = scheduled_run(model, "conv", lambda space: {**space.space.default(), "mr": mr, "channels": channels}, x)
    np.testing.assert_allclose(actual, reference(model, x), rtol=1e-4, atol=1e-4)


def residual_block(size: int = 14, join: str = "Add") -> onnx.ModelProto:
    """conv_c(relu(conv_a(x) + b_a + conv_b(x) + b_b)): ResNet's downsampling junction with two 1x1 convolutions 16 ->
    64 channels on a `size` x `size` map, one of which fuses the sum as an epilogue reading the other's output whole;
    conv_c (64 -> 16, or 128 -> 16 after a `join` of "Concat") keeps the junction channels-last (te-channels-last
    leaves a convolution feeding only the output NCHW)."""
    rng = np.random.default_rng(4)
    joined = 128 if join == "Concat" else 64
    shapes = {"wa": (64, 16, 1, 1), "wb": (64, 16, 1, 1), "wc": (16, joined, 1, 1), "ba": (64,), "bb": (64,)}
    inits = [
        numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
        for name, shape in shapes.items()
    ]
    nodes = [
        helper.make_node("Conv", ["x", "wa", "ba"], ["a"]),
        helper.make_node("Conv", ["x", "wb", "bb"], ["b"]),
        helper.make_node(join, ["a", "b"], ["s"], **({"axis": 1} if join == "Concat" else {})),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("Conv", ["r", "wc"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "residual",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, size, size])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def _conv_records(model: onnx.ModelProto, path: Path, change: dict[str, object]) -> TuningDatabase:
    """A tuning database whose record for each convolution of `model` (on x86-64-v3) is its default config with
    `change`."""
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="schedule", target="x86-64-v3")
    target = target_of(imported.module)
    database = TuningDatabase(path)
    for kernel in kernels_of(imported.module):
        space = kernel_space(imported.module, kernel, target)
        if space is not None and space.rule is CONV:
            config = {**space.space.default(), **change}
            database.add(Record(kernel_key(kernel, space.space), target_key(target), "conv", "", 0, config, 1e-6))
    return database


@pytest.mark.parametrize("block", [0, 32, 64])
def test_channel_block_walks_panels_per_tile_and_folds_a_residual_epilogue(tmp_path: Path, block: int) -> None:
    """`channel_block` (whole panels of `nr` channels) puts the panel loop (`<f>_o_i`) inside the column tiles, the
    tail's (14 % 6 columns) too, so each tile's pixels get the block's channels in a row; a residual epilogue is then
    computed at the write-back (`epilogue.py`), where with 0 (the default: each panel over the whole output) it stays a
    stage over an internal buffer. Set through tuning records, as the tuner would; numbers against numpy's float64."""
    model = residual_block()
    database = _conv_records(model, tmp_path / "tuning.jsonl", {"nr": 16, "mr": 6, "channel_block": block})
    program = _check_residual_block(model, database)
    # x, the packed weight, the bias, the residual, its bias, x channels-last, [the convolution's sums], the output.
    assert len(_fused_junction_buffers(program)) == (8 if block == 0 else 7)
    walks = bool(re.search(r'loop.for "i\d_o_i', str(program.module)))
    assert walks == bool(block)


@pytest.mark.parametrize(
    ("size", "join", "block"), [(56, "Add", 64), (28, "Add", 64), (14, "Add", 0), (56, "Concat", 0)]
)
def test_a_convolution_feeding_a_residual_add_on_a_wide_map_is_channel_blocked_by_default(
    size: int, join: str, block: int
) -> None:
    """`conv.residual_block`: a convolution whose output goes to a residual add and nothing else, on a map at least 28
    wide, takes the largest channel block up to 256 by default (here all 64 channels), so the add folds into its
    write-back and the sums' buffer goes (at 28x28 too, where the add's pass splits its 28 rows for 32 tasks and the
    index sums sit between its loops); on a 14-wide map, and where the two outputs are concatenated, the default keeps
    0. conv_c, which feeds the model's output, keeps 0 everywhere. Numbers against numpy's float64."""
    model = residual_block(size, join)
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="schedule", target="x86-64-v3")
    spaces = [kernel_space(imported.module, k, target_of(imported.module)) for k in kernels_of(imported.module)]
    blocks = sorted(space.space.default()["channel_block"] for space in spaces if space and space.rule is CONV)
    assert blocks == [0, block]  # conv_c; conv_a and conv_b (one kernel, called twice)
    program = _check_residual_block(model, None, join)
    if join == "Add":
        assert len(_fused_junction_buffers(program)) == (7 if block else 8)


def _check_residual_block(model: onnx.ModelProto, database: TuningDatabase | None, join: str = "Add") -> ImportedModel:
    """Run `residual_block`'s `model` on x86-64-v3 (with `database`'s records) against numpy's float64, and return it
    lowered to the program stage the same way."""
    size = model.graph.input[0].type.tensor_type.shape.dim[2].dim_value
    x = np.random.default_rng(5).standard_normal((1, 16, size, size)).astype(np.float32)
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    x64 = x.astype(np.float64)
    a, b = (conv(x64, weights[f"w{n}"], weights[f"b{n}"], 1, 0) for n in "ab")
    junction = np.maximum(np.concatenate([a, b], axis=1) if join == "Concat" else a + b, 0)
    expected = conv(junction, weights["wc"], None, 1, 0)
    db = None if database is None else str(database.path)
    session = InferenceSession(model, num_threads=1, cache=False, tuning_db=db, target="x86-64-v3")
    (actual,) = session.run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)

    program = import_model(model)
    set_target(program.module, target_from_name("x86-64-v3"))
    passes = build_pipeline(3, tuning_db=db, stop_after="program")
    run_passes(program.module, passes, make_context())
    return program


def _fused_junction_buffers(program: ImportedModel) -> list[object]:
    """The buffer parameters of the kernel that fuses a junction convolution with the add + ReLU after it."""
    (fused,) = [
        op
        for op in program.module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data.startswith("fused_") and op.sym_name.data.endswith("relu_0")
    ]
    return [arg for arg in fused.body.block.args if isinstance(arg.type, MemRefType)]


def test_the_rule_reads_the_column_stride_from_the_input() -> None:
    """A 1x1 convolution over 1024 channels-last channels (pixels 4 KiB apart) at 14x14 takes tiles of 7 columns,
    over 256 channels of 14 (light ResNet-50's 1x1 convolutions at 14x14; `conv._tile_columns`)."""
    assert re.search(
        r"loop-split\{kernel=conv_\d+ loop=i\d factor=7\}", trace_of(conv_model(1024, 14, 256, 1, 1, 0), AVX512)
    )
    assert re.search(
        r"loop-split\{kernel=conv_\d+ loop=i\d factor=14\}", trace_of(conv_model(256, 14, 256, 1, 1, 0), AVX512)
    )
