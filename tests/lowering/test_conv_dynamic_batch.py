"""CNNs with a run-time batch compile once (`docs/design/symbolic_shapes.md`; `te/conv_batch.py`,
`schedule/conv_batch.py`): convolutions (strided, padded, grouped, depthwise, 1x1, with a bias and a fused ReLU),
pools, batch normalisation and a small ResNet-style block run at batch 1, 3 and 8 from one session, numbers against
ONNX Runtime (rtol 1e-4, atol 1e-5, the static conv tests' tolerances); a convolution under its batch loop gets the
static conv schedule of one image, parallel over the batch and inside the image."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.lowering.schedule.default_schedule import apply_default_schedules

RTOL, ATOL = 1e-4, 1e-5
BATCHES = (1, 3, 8)


class _Builder:
    """An ONNX graph over the input `x` [batch, channels, size, size], with random weights."""

    def __init__(self, channels: int, size: int):
        self.rng = np.random.default_rng(0)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self.input = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", channels, size, size])

    def weight(self, *shape: int, scale: float = 0.3) -> str:
        name = f"w{len(self.weights)}"
        self.weights.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], **attributes: object) -> str:
        output = f"t{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def conv(
        self,
        x: str,
        c: int,
        f: int,
        k: int = 3,
        stride: int = 1,
        pad: int = 1,
        group: int = 1,
        bias: bool = True,
        scale: float = 0.3,
    ) -> str:
        inputs = [x, self.weight(f, c // group, k, k, scale=scale)] + ([self.weight(f)] if bias else [])
        return self.node("Conv", inputs, kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4, group=group)

    def batch_norm(self, x: str, c: int) -> str:
        scale, shift, mean = self.weight(c), self.weight(c), self.weight(c)
        variance = numpy_helper.from_array(self.rng.uniform(0.5, 1.5, c).astype(np.float32), f"w{len(self.weights)}")
        self.weights.append(variance)
        return self.node("BatchNormalization", [x, scale, shift, mean, variance.name])

    def model(self, output: str) -> onnx.ModelProto:
        graph_proto = helper.make_graph(
            self.nodes,
            "cnn",
            [self.input],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
            self.weights,
        )
        model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        return model


def _single(**conv: object) -> onnx.ModelProto:
    channels = int(conv.pop("c", 8))  # type: ignore[call-overload]
    b = _Builder(channels, 10)
    return b.model(b.node("Relu", [b.conv("x", channels, **conv)]))  # type: ignore[arg-type]


def _winograd() -> onnx.ModelProto:
    """A 3x3 convolution that `prefers_winograd` takes (64 -> 64 channels, 7x7 = 49 tiles of one image), stored
    channels-last for the 1x1 convolution after its ReLU."""
    b = _Builder(64, 14)
    y = b.node("Relu", [b.conv("x", 64, 64, scale=0.05)])
    return b.model(b.conv(y, 64, 16, k=1, pad=0))


def _pools() -> onnx.ModelProto:
    b = _Builder(16, 12)
    y = b.node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.node("AveragePool", [y], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    return b.model(b.node("Flatten", [b.node("GlobalAveragePool", [y])]))


def _resnet_block() -> onnx.ModelProto:
    """Stem (7x7/2, batch norm, ReLU, max pool), a bottleneck with a projection shortcut and residual add, a global
    average pool, flatten and a Gemm: light ResNet-50's structure at toy sizes."""
    b = _Builder(3, 32)
    stem = b.node("Relu", [b.batch_norm(b.conv("x", 3, 16, k=7, stride=2, pad=3, bias=False), 16)])
    x = b.node("MaxPool", [stem], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.node("Relu", [b.batch_norm(b.conv(x, 16, 16, k=1, pad=0, bias=False), 16)])
    y = b.node("Relu", [b.batch_norm(b.conv(y, 16, 16, bias=False), 16)])
    y = b.batch_norm(b.conv(y, 16, 32, k=1, pad=0, bias=False), 32)
    shortcut = b.batch_norm(b.conv(x, 16, 32, k=1, pad=0, bias=False), 32)
    y = b.node("Relu", [b.node("Add", [y, shortcut])])
    flat = b.node("Flatten", [b.node("GlobalAveragePool", [y])])
    return b.model(b.node("Gemm", [flat, b.weight(10, 32), b.weight(10)], transB=1))


MODELS = {
    "padded": lambda: _single(f=16),
    "strided": lambda: _single(f=16, stride=2),
    "no_bias": lambda: _single(f=16, bias=False),
    "pointwise": lambda: _single(f=16, k=1, pad=0),
    "grouped": lambda: _single(f=16, group=2),
    "depthwise": lambda: _single(c=16, f=16, group=16),
    "odd_channels": lambda: _single(f=10),
    "winograd": _winograd,
    "pools": _pools,
    "resnet_block": _resnet_block,
}


@pytest.mark.parametrize("name", MODELS)
def test_one_compile_serves_batch_1_3_8(name: str) -> None:
    model = MODELS[name]()
    session = InferenceSession(model, num_threads=2, cache=False)
    assert "symbolic_fallback" not in session.stats, session.stats.get("symbolic_fallback")
    oracle = ort.InferenceSession(model.SerializeToString())
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:])
    for batch in BATCHES:
        x = np.random.default_rng(batch).standard_normal((batch, *shape)).astype(np.float32)
        (actual,) = session.run(None, {"x": x})
        (expected,) = oracle.run(None, {"x": x})
        assert actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1
    if name == "winograd":
        assert "winograd_gemm" in session._model.llvm_ir


def test_a_convolution_under_its_batch_gets_the_static_schedule_and_a_band_over_the_batch() -> None:
    """The conv rule's register tile and packed weights, as at batch 1, and one parallel band of the batch loop and
    the image's own band (the output-channel panels)."""
    schedules = {}
    for symbolic in (True, False):
        module = import_model(_single(c=16, f=32), None if symbolic else {"x": (1, 16, 10, 10)}, symbolic=symbolic)
        run_pipeline(module.module, 3, stop_after="schedule", target="x86-64-v3")
        trace = apply_default_schedules(Context(), module.module)
        schedules[symbolic] = next(steps for kernel, steps in trace if "conv" in kernel and "nhwc" not in kernel)
    dynamic, static = schedules[True], schedules[False]
    rule = [step for step in dynamic if not step.startswith("loop-parallel")]
    assert rule == [step for step in static if not step.startswith("loop-parallel")]
    assert any(step.startswith("loop-pack{") for step in rule)
    assert any(step.startswith("loop-cache-write{") and "fill=true" in step for step in rule)
    parallel = [step.split("loop=")[1].rstrip("}") for step in dynamic if step.startswith("loop-parallel")]
    assert parallel[:2] == ["i0", "i1_o"]  # images x output-channel panels; the tiles cover every image: no zeroing


def test_graph_pad_refuses_to_pad_a_run_time_dimension() -> None:
    text = """
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %y = graph.pad %x {pads = array<i64: 1, 0, 0, 0>, mode = "constant", value = 0.0 : f32}
        : (tensor<?x4xf32>) -> tensor<?x4xf32>
      func.return %y : tensor<?x4xf32>
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException, match=r"graph.pad: pads a run-time dimension \(axis 0\)"):
        module.verify()
