"""Dynamic int8 quantization of a float ONNX model's MatMuls, in the pattern ONNX Runtime's `quantize_dynamic`
writes: weights int8 at rest (symmetric, per output column or per tensor), activations quantized to uint8 at every
run over their own range (DynamicQuantizeLinear), the product summed in int32 and scaled back to float.

    y = MatMul(x, W)              becomes
    x_q, x_scale, x_zero = DynamicQuantizeLinear(x)
    y = Cast(MatMulInteger(x_q, W_q: int8, x_zero, W_zero: 0), float) * (x_scale * W_scale[N])

No calibration: the ranges are each run's, which suits transformers whose activations vary by input. Only MatMuls
whose B is a 2-D float32 initializer change (a MatMul of two activations, attention's, stays float).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from minimlc.frontend.onnx_static_quantization import prepare_for_quantization, weight_scales


def quantize_dynamic(model: onnx.ModelProto, per_channel: bool = True, reduce_range: bool = False) -> onnx.ModelProto:
    """A copy of `model` whose weight MatMuls take int8 weights and per-run uint8 activations (see the module
    docstring); `reduce_range` keeps the weights to 7 bits."""
    result = prepare_for_quantization(model)
    graph = result.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    nodes: list[onnx.NodeProto] = []
    quantized_inputs: dict[str, tuple[str, str, str]] = {}
    for node in graph.node:
        weight = initializers.get(node.input[1]) if node.op_type == "MatMul" else None
        array = numpy_helper.to_array(weight) if weight is not None else None
        if array is None or array.ndim != 2 or array.dtype != np.float32:
            nodes.append(node)
            continue
        prefix = node.name or node.output[0]
        if node.input[0] not in quantized_inputs:
            names = tuple(f"{node.input[0]}_{suffix}" for suffix in ("quantized", "scale", "zero_point"))
            nodes.append(helper.make_node("DynamicQuantizeLinear", [node.input[0]], list(names)))
            quantized_inputs[node.input[0]] = names  # type: ignore[assignment]
        x_q, x_scale, x_zero = quantized_inputs[node.input[0]]
        values, scale = weight_scales(array, 1 if per_channel else None, reduce_range)
        graph.initializer.extend(
            [
                numpy_helper.from_array(values, f"{prefix}_weight_quantized"),
                numpy_helper.from_array(scale, f"{prefix}_weight_scale"),
                numpy_helper.from_array(np.zeros(scale.shape, np.int8), f"{prefix}_weight_zero_point"),
            ]
        )
        inputs = [x_q, f"{prefix}_weight_quantized", x_zero, f"{prefix}_weight_zero_point"]
        nodes += [
            helper.make_node("MatMulInteger", inputs, [f"{prefix}_int32"]),
            helper.make_node("Cast", [f"{prefix}_int32"], [f"{prefix}_float"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [x_scale, f"{prefix}_weight_scale"], [f"{prefix}_scale"]),
            helper.make_node("Mul", [f"{prefix}_float", f"{prefix}_scale"], [node.output[0]]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input} | {vi.name for vi in graph.output}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    granularity = "per-channel" if per_channel else "per-tensor"
    result.metadata_props.add(key="minimlc.quantization", value=f"int8 dynamic MatMulInteger, {granularity} weights")
    return result
