"""A quantized ResNet-style network in ONNX's QOperator form (as onnxruntime.quantization's `quantize_static` writes
it), built with onnx.helper and seeded random weights, for the tests and `bench/bench_quantized.py`.

    x (f32) -> QuantizeLinear (uint8) -> QLinearConv stem (relu folded into y_zero_point 0)
      -> residual blocks: QLinearConv (relu) -> QLinearConv -> DequantizeLinear + DequantizeLinear(skip) -> Add -> Relu
         -> QuantizeLinear
      -> features (uint8) ; DequantizeLinear -> GlobalAveragePool -> QuantizeLinear -> Reshape -> QLinearMatMul
      -> logits (uint8)

Weights are int8 with per-output-channel scales (zero points 0, symmetric, as the quantizer's default for convs);
activations uint8 with per-tensor scales; int32 biases. With `reduce_range=True` the weights use 7 bits ([-64, 63]),
as `quantize_static(..., reduce_range=True)` writes them for x86-64 CPUs without VNNI: there ONNX Runtime's u8 x s8
kernels multiply with `vpmaddubsw`, which saturates each sum of two products at int16 (255 * 127 * 2 > 32767), so
with 8-bit weights its outputs are not ONNX's (`onnxruntime_saturates_u8s8`). minimlc's are exact either way.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def onnxruntime_saturates_u8s8() -> bool:
    """Whether ONNX Runtime's uint8 x int8 integer kernels saturate on this host: x86-64 without AVX-VNNI or
    AVX512-VNNI (its MLAS kernels use `vpmaddubsw` there; seen on Zen 3: 484 of 1,024 outputs of an 8x8 block off by
    up to 32 steps, where onnx's reference evaluator and minimlc agree)."""
    from minimlc.lowering.target import target_from_name

    return target_from_name("host").dot_u8s8_bits == 0


class _QuantizedBuilder:
    def __init__(self, seed: int, weight_max: int = 127):
        self.rng = np.random.default_rng(seed)
        self.weight_max = weight_max
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def int8_weight(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.integers(-self.weight_max, self.weight_max + 1, shape).astype(np.int8)

    def constant(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def conv(self, x: str, x_scale: str, c_in: int, c_out: int, name: str, y_scale: float, y_zero: int) -> str:
        """A 3x3 QLinearConv keeping the size, int8 weights with per-channel scales, an int32 bias."""
        weight = self.int8_weight((c_out, c_in, 3, 3))
        w_scale = self.rng.uniform(0.5, 1.5, (c_out,)).astype(np.float32) / np.float32(40 * np.sqrt(c_in * 9))
        bias = self.rng.integers(-2000, 2000, (c_out,)).astype(np.int32)
        inputs = [
            x,
            x_scale,
            f"{x}.zero",
            self.constant(f"{name}.w", weight),
            self.constant(f"{name}.w_scale", w_scale),
            self.constant(f"{name}.w_zero", np.zeros((c_out,), np.int8)),
            self.constant(f"{name}.y_scale", np.array(y_scale, np.float32)),
            self.constant(f"{name}.zero", np.array(y_zero, np.uint8)),
            self.constant(f"{name}.b", bias),
        ]
        return self.node("QLinearConv", inputs, name, pads=[1, 1, 1, 1])


def quantized_resnet(
    channels: int = 64,
    size: int = 56,
    blocks: int = 2,
    classes: int = 10,
    seed: int = 0,
    reduce_range: bool = False,
) -> onnx.ModelProto:
    """The network on a (1, 3, size, size) float32 input; outputs `features` (uint8, (1, channels, size, size)) and
    `logits` (uint8, (1, classes))."""
    b = _QuantizedBuilder(seed, 63 if reduce_range else 127)
    b.constant("x.scale", np.array(0.02, np.float32))
    b.constant("x_q.zero", np.array(128, np.uint8))
    x = b.node("QuantizeLinear", ["x", "x.scale", "x_q.zero"], "x_q")
    scale = "stem.y_scale"
    x = b.conv(x, "x.scale", 3, channels, "stem", 0.05, 0)
    for block in range(blocks):
        name = f"block{block}"
        inner = b.conv(x, scale, channels, channels, f"{name}.conv0", 0.05, 0)
        outer = b.conv(inner, f"{name}.conv0.y_scale", channels, channels, f"{name}.conv1", 0.08, 128)
        total = b.node(
            "Add",
            [
                b.node("DequantizeLinear", [outer, f"{name}.conv1.y_scale", f"{name}.conv1.zero"], f"{name}.dq_conv"),
                b.node("DequantizeLinear", [x, scale, f"{x}.zero"], f"{name}.dq_skip"),
            ],
            f"{name}.add",
        )
        scale = b.constant(f"{name}.out.scale", np.array(0.06, np.float32))
        b.constant(f"{name}.out.zero", np.array(0, np.uint8))
        relu = b.node("Relu", [total], f"{name}.relu")
        x = b.node("QuantizeLinear", [relu, scale, f"{name}.out.zero"], f"{name}.out")
    b.node("Identity", [x], "features")
    pooled = b.node(
        "GlobalAveragePool", [b.node("DequantizeLinear", [x, scale, f"{x}.zero"], "head.dq")], "head.pool"
    )
    b.constant("head.scale", np.array(0.03, np.float32))
    b.constant("head.q.zero", np.array(0, np.uint8))
    pooled_q = b.node("QuantizeLinear", [pooled, "head.scale", "head.q.zero"], "head.q")
    flat = b.node("Reshape", [pooled_q, b.constant("head.shape", np.array([1, channels], np.int64))], "head.flat")
    weight = b.int8_weight((channels, classes))
    logits_inputs = [
        flat,
        "head.scale",
        "head.q.zero",
        b.constant("fc.w", weight),
        b.constant("fc.w_scale", np.array(0.01, np.float32)),
        b.constant("fc.w_zero", np.array(0, np.int8)),
        b.constant("fc.y_scale", np.array(0.1, np.float32)),
        b.constant("fc.y_zero", np.array(128, np.uint8)),
    ]
    logits = b.node("QLinearMatMul", logits_inputs, "logits")
    graph = helper.make_graph(
        b.nodes,
        "quantized_resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [
            helper.make_tensor_value_info("features", TensorProto.UINT8, [1, channels, size, size]),
            helper.make_tensor_value_info(logits, TensorProto.UINT8, [1, classes]),
        ],
        b.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model
