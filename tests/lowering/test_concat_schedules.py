"""Channel concatenations channels-last (`te-channels-last`, `loop-partition` through the concat schedule rule) and the
channels-last pools after them (the pool rule's channel blocks, padded average pools) keep the model's numbers: a
SqueezeNet fire module (squeeze 1x1, expand 1x1 and 3x3, concatenated), then a pool and a 1x1 convolution, against
ONNX Runtime at O2 and O3, with the schedule that was meant to apply read off the trace."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from schedule_cases import AVX512, trace_of

from minimlc import InferenceSession

POOLS = {
    "max-3x3-s2": ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "avg-3x3-pad1": ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "avg-3x3-pad1-include": ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
}


def fire_model(channels: tuple[int, ...], pool: str, size: int = 13) -> onnx.ModelProto:
    """x (8 channels) -> squeeze 1x1 to 8 + ReLU -> one expand convolution + ReLU per entry of `channels` (1x1, 3x3
    pad 1, 1x1, ...) -> Concat -> `pool` -> 1x1 convolution to 16 + ReLU."""
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []

    def conv(source: str, c: int, f: int, kernel: int, name: str) -> list[onnx.NodeProto]:
        weights = (rng.standard_normal((f, c, kernel, kernel)) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(weights, f"{name}_w"))
        inits.append(numpy_helper.from_array(rng.standard_normal(f).astype(np.float32), f"{name}_b"))
        pad = kernel // 2
        return [
            helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [f"{name}_t"], pads=[pad] * 4),
            helper.make_node("Relu", [f"{name}_t"], [name]),
        ]

    nodes = conv("x", 8, 8, 1, "squeeze")
    names = [f"expand{number}" for number in range(len(channels))]
    for number, (name, f) in enumerate(zip(names, channels)):
        nodes += conv("squeeze", 8, f, 3 if number % 2 else 1, name)
    nodes.append(helper.make_node("Concat", names, ["cat"], axis=1))
    op_type, attributes = POOLS[pool]
    nodes.append(helper.make_node(op_type, ["cat"], ["pooled"], **attributes))
    nodes += conv("pooled", sum(channels), 16, 1, "y")
    out = (size - 3) // 2 + 1 if pool.startswith("max") else size
    graph = helper.make_graph(
        nodes,
        "fire",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, out, out])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize("channels", [(64, 64), (24, 40), (16, 48, 32)], ids=["64+64", "24+40", "16+48+32"])
@pytest.mark.parametrize("opt_level", [2, 3])
def test_channels_last_concat_and_pool_keep_numbers(channels: tuple[int, ...], pool: str, opt_level: int) -> None:
    """Concatenations of whole vectors of channels and of parts that are not (24 + 40: each piece a vector loop and
    a scalar tail), followed by max pools (128 channels: blocks of 64) and padded average pools, equal ONNX Runtime."""
    model = fire_model(channels, pool)
    x = np.random.default_rng(1).standard_normal((1, 8, 13, 13)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(model, opt_level=opt_level).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def test_concat_is_partitioned_at_its_inputs_and_vectorized() -> None:
    """The channels-last concatenation's channel loop is partitioned where its inputs meet, each piece vectorized
    (a 40-channel piece as 32 channels of vectors and a scalar tail of 8, AVX-512)."""
    trace = trace_of(fire_model((24, 40), "max-3x3-s2"), AVX512)
    partition = re.search(r"loop-partition\{kernel=(concat_\d+) loop=(i\d) points=24\}", trace)
    assert partition is not None
    kernel, channel = partition.groups()
    assert f"loop-split{{kernel={kernel} loop={channel}_p1 factor=16}}" in trace
    assert f"loop-vectorize{{kernel={kernel} loop={channel}_p1_i}}" in trace
    assert "conv_gemm" not in trace  # the 1x1 convolution after the concatenation reads it in place, direct


@pytest.mark.parametrize("pool", ["max-3x3-s2", "avg-3x3-pad1"])
def test_channels_last_pool_of_128_channels_is_vectorized_in_blocks_of_64(pool: str) -> None:
    """A channels-last pool over 128 channels (too many for one vectorized loop) gets the window loops between a
    loop over blocks of 64 channels and the vectorized block; a padded average pool too (its taps' bounds checks do
    not depend on the channel)."""
    trace = trace_of(fire_model((64, 64), pool))
    kernel = re.search(r"loop-decompose-reduction\{kernel=((max|avg)_pool\w*_\d+)\}", trace)
    assert kernel is not None
    name = kernel.group(1)
    assert f"loop-split{{kernel={name} loop=i3 factor=64}}" in trace
    assert f"loop-reorder{{kernel={name} order=i0,i1,i2,i3_o,k4,k5,i3_i}}" in trace
    assert f"loop-vectorize{{kernel={name} loop=i3_i}}" in trace


def test_concat_with_a_constant_input_keeps_numbers() -> None:
    """A concatenation of a convolution's output with a constant image (an initializer, NCHW: the piece that reads it
    walks it with a stride) is channels-last too, and equals ONNX Runtime."""
    model = fire_model((32,), "max-3x3-s2")
    constant = np.random.default_rng(2).standard_normal((1, 16, 13, 13)).astype(np.float32)
    model.graph.initializer.append(numpy_helper.from_array(constant, "k"))
    concat = next(node for node in model.graph.node if node.op_type == "Concat")
    concat.input.append("k")
    head = next(node for node in model.graph.node if node.input and node.input[0] == "pooled")
    weights = next(t for t in model.graph.initializer if t.name == head.input[1])
    wider = np.random.default_rng(3).standard_normal((16, 48, 1, 1)).astype(np.float32) * 0.3
    weights.CopyFrom(numpy_helper.from_array(wider, weights.name))
    x = np.random.default_rng(1).standard_normal((1, 8, 13, 13)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    assert re.search(r"loop-partition\{kernel=concat_\d+ loop=i3 points=32\}", trace_of(model))


def nested_concat_model() -> onnx.ModelProto:
    """x (8 channels) -> three 1x1 convolutions to 12, 20 and 16 channels + ReLU -> Concat(Concat(a, b), c) + ReLU
    (ShuffleNet's grouped convolutions, concatenated per group and then with a pool branch, nest the same way)."""
    rng = np.random.default_rng(2)
    nodes, inits = [], []
    for name, f in (("a", 12), ("b", 20), ("c", 16)):
        inits.append(numpy_helper.from_array((rng.standard_normal((f, 8, 1, 1)) * 0.3).astype(np.float32), f"{name}_w"))
        nodes += [
            helper.make_node("Conv", ["x", f"{name}_w"], [f"{name}_t"]),
            helper.make_node("Relu", [f"{name}_t"], [name]),
        ]
    nodes += [
        helper.make_node("Concat", ["a", "b"], ["ab"], axis=1),
        helper.make_node("Concat", ["ab", "c"], ["abc"], axis=1),
        helper.make_node("Relu", ["abc"], ["r"]),
        helper.make_node("Conv", ["r", "y_w"], ["y"]),
    ]
    inits.append(numpy_helper.from_array((rng.standard_normal((16, 48, 1, 1)) * 0.2).astype(np.float32), "y_w"))
    graph = helper.make_graph(
        nodes,
        "nested",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 13, 13])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 13, 13])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def test_a_nested_concat_is_partitioned_at_every_input_and_keeps_numbers() -> None:
    """The inner concatenation's channel is the outer one's clamped into its input: its comparisons are of that
    clamped index, and the rule finds their points too (12 and 32), not only the outer one's; each piece is then one
    plain read. Before, the kernel ran as a scalar chain of selects (ShuffleNet: 12% of its time, 3 GFLOP/s)."""
    model = nested_concat_model()
    trace = trace_of(model)
    assert re.search(r"loop-partition\{kernel=\w+ loop=i\d points=12,32\}", trace), trace
    x = np.random.default_rng(3).standard_normal((1, 8, 13, 13)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (actual,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
