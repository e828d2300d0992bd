"""Numerics of the bfloat16 convolution (`graph_to_te/bfloat16_conv.py`) built for AArch64 with BF16
(`aarch64-linux-gnu -mcpu=neoverse-v1`: `bfdot`, 256-bit SVE) and run under qemu-aarch64: 3x3 convolutions of
stride 1 and 2 with padding, a 1x1 one, an odd channel count (5), biases, and a 1x1 convolution reading a ReLU of a
bfloat16 one (the channels-last chain), against a float64 numpy reference of the bfloat16-rounded inputs and
weights. Skips, naming what is missing, without the cross compiler or qemu."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from test_cross_build import ROOT, emulator, needs_tools

from minimlc.driver.shared_library import export_library
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline

TARGET = "aarch64-linux-gnu -mcpu=neoverse-v1"
TOLERANCE = 1e-5
"""Max |difference| over max |output| against the reference of bfloat16-rounded operands summed in float64: the
products of two bfloat16 values are exact in float32, so what is left is float32 accumulation over at most 45 terms
(measured: under 1e-7). The float64 reference of the unrounded operands differs by 1.5e-3 to 4e-3 (bfloat16's 8-bit
significand); the test requires over 1e-4 there, so a float32 build cannot pass."""
CONVS = {
    "a": ("x", (16, 5, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    "b": ("x", (16, 5, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}, False),
    "c": ("x", (16, 5, 1, 1), {}, True),
    "d": ("r", (16, 16, 1, 1), {}, True),
}
"""Output name -> (input, weight shape, Conv attributes, whether it has a bias); "r" is ReLU(a)."""


def bf16(value: np.ndarray) -> np.ndarray:
    """`value` (float32) rounded to the nearest bfloat16, ties to even, as float64."""
    bits = value.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return rounded.view(np.float32).astype(np.float64)


def conv(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, strides: list[int], pads: list[int]) -> np.ndarray:
    """Float64 NCHW convolution, group 1."""
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    f, _, kh, kw = w.shape
    rows, columns = (x.shape[2] - kh) // strides[0] + 1, (x.shape[3] - kw) // strides[1] + 1
    out = np.zeros((x.shape[0], f, rows, columns))
    for i in range(kh):
        for j in range(kw):
            window = x[:, :, i : i + strides[0] * rows : strides[0], j : j + strides[1] * columns : strides[1]]
            out += np.einsum("nchw,fc->nfhw", window, w[:, :, i, j])
    return out if bias is None else out + bias[None, :, None, None]


def convs_model(rng: np.random.Generator) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model of `CONVS` over x (1, 5, 8, 8), and its weights and biases by name."""
    weights: dict[str, np.ndarray] = {}
    nodes, outputs = [], []
    for name, (source, shape, attributes, biased) in CONVS.items():
        weights[f"{name}.w"] = rng.standard_normal(shape).astype(np.float32)
        if biased:
            weights[f"{name}.b"] = rng.standard_normal(shape[0]).astype(np.float32)
        operands = [source, f"{name}.w", *([f"{name}.b"] if biased else [])]
        nodes.append(helper.make_node("Conv", operands, [name], **attributes))
        if name == "a":
            nodes.append(helper.make_node("Relu", ["a"], ["r"]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 8, 8])]
    graph = helper.make_graph(nodes, "convs", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(model), weights


def run_bf16_build(model: onnx.ModelProto, x: np.ndarray, folder: Path) -> tuple[list[np.ndarray], str]:
    """Build `model` with bfloat16 products for `TARGET`, run it under qemu on `x`: its outputs (flat) and the
    library's disassembly."""
    folder.mkdir()
    pipeline = build_pipeline(3, extra_passes={"graph": "graph-bf16-products"})
    export_library(import_model(model), folder / "libmodel.so", pipeline, target=TARGET)
    executable = folder / "run_model"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", f"-I{folder}", str(ROOT / "examples" / "c" / "main.c"), f"-L{folder}",
         "-lmodel", "-Wl,-rpath,$ORIGIN", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    x.tofile(folder / "x.float32")
    result = subprocess.run(
        [*emulator(TARGET), str(executable), str(folder / "libmodel.weights"), str(folder / "x.float32")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    listing = subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", str(folder / "libmodel.so")], capture_output=True, text=True, check=True
    ).stdout
    printed = [np.array(chunk.split()[2:], dtype=np.float32) for chunk in result.stdout.split("output ")[1:]]
    return printed, listing


@needs_tools("aarch64-linux-gnu")
def test_bfloat16_convolutions_match_a_float64_reference_of_rounded_operands(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    model, weights = convs_model(rng)
    x = rng.standard_normal((1, 5, 8, 8)).astype(np.float32)
    printed, listing = run_bf16_build(model, x, tmp_path / "build")
    assert re.search(r"\tbfdot\tv\d+\.4s, v\d+\.8h, v\d+\.8h", listing)
    got = dict(zip(CONVS, printed, strict=True))
    sources = {"x": x, "r": np.maximum(got["a"].reshape(1, 16, 8, 8), 0)}  # d reads the build's own ReLU(a)
    for name, (source, _, attributes, biased) in CONVS.items():
        strides, pads = attributes.get("strides", [1, 1]), attributes.get("pads", [0, 0, 0, 0])
        bias = weights[f"{name}.b"].astype(np.float64) if biased else None
        rounded = conv(bf16(sources[source]), bf16(weights[f"{name}.w"]), bias, strides, pads).ravel()
        exact = conv(sources[source].astype(np.float64), weights[f"{name}.w"], bias, strides, pads).ravel()
        scale = float(np.abs(rounded).max())
        error = float(np.abs(got[name] - rounded).max()) / scale
        unrounded = float(np.abs(got[name] - exact).max()) / scale
        print(f"conv {name}: max |build - rounded reference| / max {error:.1e}; unrounded reference {unrounded:.1e}")
        assert error < TOLERANCE
        assert unrounded > 10 * TOLERANCE
