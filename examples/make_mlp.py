"""Write the example model: an MLP 784-128-10 (Gemm, Relu, Gemm) with deterministic weights.

    python examples/make_mlp.py            # writes examples/mlp.onnx
    python examples/make_mlp.py OUT.onnx

The weights come from a seeded generator (He-style scaling), so every run writes the same file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZES = (784, 128, 10)
OPSET = 17
IR_VERSION = 8
"""The oldest IR version that carries opset 17, so ONNX Runtime (IR <= 13 in 1.31) and older tools read it too."""


def build_mlp(batch: int | str = 1, seed: int = 0) -> onnx.ModelProto:
    """The MLP with a fixed (default 1) or symbolic (a name) batch dimension."""
    rng = np.random.default_rng(seed)
    initializers = []
    nodes = []
    current = "input"
    for layer, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:])):
        weight = (rng.standard_normal((fan_out, fan_in)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        bias = (rng.standard_normal(fan_out) * 0.01).astype(np.float32)
        initializers += [
            numpy_helper.from_array(weight, f"fc{layer}.weight"),
            numpy_helper.from_array(bias, f"fc{layer}.bias"),
        ]
        output = "logits" if layer == len(SIZES) - 2 else f"fc{layer}"
        nodes.append(
            helper.make_node(
                "Gemm", [current, f"fc{layer}.weight", f"fc{layer}.bias"], [output], name=f"fc{layer}", transB=1
            )
        )
        current = output
        if layer < len(SIZES) - 2:
            nodes.append(helper.make_node("Relu", [current], [f"relu{layer}"], name=f"relu{layer}"))
            current = f"relu{layer}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, SIZES[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, SIZES[-1]])],
        initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="minimlc", ir_version=IR_VERSION
    )
    onnx.checker.check_model(model)
    return model


def describe(model: onnx.ModelProto) -> str:
    """The inputs and outputs of `model`, one a line: `  input   input   float32 [1, 784]`."""
    lines = []
    for kind, values in (("input", model.graph.input), ("output", model.graph.output)):
        for value in values:
            tensor = value.type.tensor_type
            dims = [str(d.dim_value) if d.HasField("dim_value") else d.dim_param or "?" for d in tensor.shape.dim]
            dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type).name
            lines.append(f"  {kind:<7} {value.name:<7} {dtype} [{', '.join(dims)}]")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).with_name("mlp.onnx")
    model = build_mlp()
    onnx.save(model, path)
    weights = sum(int(np.prod(tensor.dims)) for tensor in model.graph.initializer)
    sizes = "-".join(map(str, SIZES))
    print(f"wrote {path}: an MLP {sizes} (Gemm, Relu, Gemm), opset {OPSET}, {weights:,} float32 weights")
    print(describe(model))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
