"""bfloat16 MatMul, Gemm and Conv (`--precision bf16`, issue #50): models built by `minimlc build --precision bf16` for
AArch64 with BF16 (neoverse-v1's 256-bit SVE, run under `qemu-aarch64 -cpu max,sve256=on`; `-mattr=+bf16` on
NEON), linked with examples/c/main.c and run under qemu, against a float64 numpy product of the operands rounded
to bfloat16 (to nearest even). Measured: at most 2.5e-7 of max |out| off it (float32 sums), and 1.6e-3 to 2.9e-3 off
the product of the unrounded operands, which the test requires (above 1e-4): the operands were rounded. Those cases
skip without the cross compiler or qemu (Debian: gcc-aarch64-linux-gnu, qemu-user); a target without a bfloat16 dot
product (znver3, pinned) refuses the precision in one line.

The convolutions (`graph_to_te/bfloat16_conv.py`): 3x3 of stride 1 and 2 with padding, a 1x1 one, an odd channel
count (5), biases, and a 1x1 convolution reading a ReLU of a bfloat16 one (the channels-last chain), built for
neoverse-v1; measured under 1e-7 of the rounded reference, 1.5e-3 to 4e-3 off the unrounded one."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.lowering.target import target_from_name

ROOT = Path(__file__).resolve().parents[2]
MINIMLC = str(Path(sys.executable).parent / "minimlc")
TARGETS = ("aarch64-linux-gnu -mcpu=neoverse-v1", "aarch64-linux-gnu -mattr=+bf16")
TOLERANCE = 1e-5
"""Most `max |out - reference| / max |reference|` against the float64 product of the bfloat16-rounded operands."""
MISSING = [tool for tool in ("aarch64-linux-gnu-gcc", "qemu-aarch64") if shutil.which(tool) is None]
needs_qemu = pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed: cannot run AArch64 builds")


Case = tuple[onnx.ModelProto, dict[str, np.ndarray], np.ndarray, np.ndarray]
"""A model, its feeds, and the float64 results of its bfloat16-rounded and of its unrounded operands."""


def bf16_rounded(values: np.ndarray) -> np.ndarray:
    """float32 `values` rounded to bfloat16 (to nearest even), as float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def matmul_model(rng: np.random.Generator, x_shape: tuple[int, ...] = (2, 3, 37), columns: int = 20) -> Case:
    """A MatMul by a weight (batched, odd depth 37 by default), its feed, and the float64 products of the rounded and
    the unrounded operands."""
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((x_shape[-1], columns)).astype(np.float32)
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    model = _model(node, {"x": x}, {"w": w}, [*x_shape[:-1], columns])
    rounded = bf16_rounded(x).astype(np.float64) @ bf16_rounded(w)
    return model, {"x": x}, rounded, x.astype(np.float64) @ w


def deep_matmul_model(rng: np.random.Generator) -> Case:
    """5 rows by a 601-deep weight: 301 words, in 7 depth blocks of the GEMM rule, accumulated in the output."""
    return matmul_model(rng, (5, 601), 24)


def attention_model(rng: np.random.Generator) -> Case:
    """A MatMul of two activations, as attention's: per batch (2) and head (3), 5 queries by a 37-deep key matrix
    of 20 columns; both are feeds, so both sides' words are computed per run."""
    q = rng.standard_normal((2, 3, 5, 37)).astype(np.float32)
    k = rng.standard_normal((2, 3, 37, 20)).astype(np.float32)
    model = _model(helper.make_node("MatMul", ["q", "k"], ["y"]), {"q": q, "k": k}, {}, [2, 3, 5, 20])
    rounded = bf16_rounded(q).astype(np.float64) @ bf16_rounded(k)
    return model, {"q": q, "k": k}, rounded, q.astype(np.float64) @ k


def gemm_model(rng: np.random.Generator) -> Case:
    """A Gemm with both transposes, alpha, beta and a bias (odd depth 21), its feed, and the float64 results of the
    rounded and the unrounded operands."""
    a = rng.standard_normal((21, 5)).astype(np.float32)
    b = rng.standard_normal((16, 21)).astype(np.float32)
    c = rng.standard_normal(16).astype(np.float32)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5, beta=2.0)
    model = _model(node, {"a": a}, {"b": b, "c": c}, [5, 16])

    def result(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        return 0.5 * lhs.astype(np.float64).T @ rhs.astype(np.float64).T + 2.0 * c

    return model, {"a": a}, result(bf16_rounded(a), bf16_rounded(b)), result(a, b)


def _model(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], weights: dict[str, np.ndarray], shape: list[int]
) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, value.shape) for name, value in feeds.items()]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    graph = helper.make_graph([node], "bf16", inputs, [output], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run_bf16_build(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    target: str,
    opt_level: int,
    folder: Path,
    build_options: Sequence[str] = (),
) -> list[np.ndarray]:
    """`model` built with bfloat16 products for `target` by `minimlc build` (with `build_options`), run under qemu on
    `feeds`: its outputs (flat), as main.c prints them (%.9g: every float32 exactly); checks that a neoverse-v1
    library built at O3 holds `bfdot`."""
    onnx.save(model, folder / "model.onnx")
    library = folder / "libmodel.so"
    options = ["--precision", "bf16", "--target", target, "-O", str(opt_level), "-o", str(library), *build_options]
    subprocess.run([MINIMLC, "build", str(folder / "model.onnx"), *options], check=True, capture_output=True)
    if "neoverse-v1" in target and opt_level == 3:  # vector dot products: at O0 they are scalar
        listing = subprocess.run(["aarch64-linux-gnu-objdump", "-d", str(library)], capture_output=True, text=True)
        assert "\tbfdot\t" in listing.stdout
    executable = folder / "run_model"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", f"-I{folder}", str(ROOT / "examples" / "c" / "main.c"), f"-L{folder}",
         "-lmodel", "-Wl,-rpath,$ORIGIN", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    paths = []
    for name, value in feeds.items():
        paths.append(str(folder / f"{name}.float32"))
        value.tofile(paths[-1])
    bits = target_from_name(target).sve_bits
    qemu = ["qemu-aarch64", "-cpu", f"max,sve{bits}=on" if bits else "max", "-L", "/usr/aarch64-linux-gnu"]
    result = subprocess.run(
        [*qemu, str(executable), str(folder / "libmodel.weights"), *paths],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return [np.array(chunk.split()[2:], dtype=np.float64) for chunk in result.stdout.split("output ")[1:]]


BUILD_NAMES = {"matmul": matmul_model, "deep": deep_matmul_model, "attention": attention_model, "gemm": gemm_model}
BUILDS = list(BUILD_NAMES.values())


@needs_qemu
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("build", BUILDS, ids=list(BUILD_NAMES))
def test_bf16_build_runs_under_qemu_as_the_rounded_product(
    build: object, target: str, opt_level: int, tmp_path: Path
) -> None:
    assert callable(build)
    model, feeds, rounded, exact = build(np.random.default_rng(7))
    (output,) = run_bf16_build(model, feeds, target, opt_level, tmp_path)
    _assert_the_rounded_product(output, rounded, exact)


@pytest.mark.skipif(not target_from_name("host").dot_bf16_bits, reason="this host has no bfloat16 dot product")
@pytest.mark.parametrize("build", BUILDS, ids=list(BUILD_NAMES))
def test_bf16_session_on_this_host_is_the_rounded_product(build: object, opt_level: int) -> None:
    """The same on this host (x86 with AVX512-BF16: `vcvtneps2bf16` words, `vdpbf16ps` sums), in process."""
    assert callable(build)
    model, feeds, rounded, exact = build(np.random.default_rng(7))
    (output,) = InferenceSession(model, precision="bf16", opt_level=opt_level).run(None, feeds)
    _assert_the_rounded_product(output.astype(np.float64).ravel(), rounded, exact)


def _assert_the_rounded_product(output: np.ndarray, rounded: np.ndarray, exact: np.ndarray) -> None:
    peak = np.abs(rounded).max()
    assert np.abs(output - rounded.ravel()).max() / peak <= TOLERANCE
    assert np.abs(output - exact.ravel()).max() / peak > 1e-4  # the operands were rounded to bfloat16


def test_bf16_refused_on_a_target_without_a_bf16_dot_product(opt_level: int) -> None:
    model, *_ = matmul_model(np.random.default_rng(0))
    refusal = "precision='bf16': target 'znver3' has no bfloat16 dot product (x86: avx512bf16; AArch64: bf16)"
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        InferenceSession(model, target="znver3", precision="bf16")


CONVS = {
    "a": ("x", (16, 5, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    "b": ("x", (16, 5, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}, False),
    "c": ("x", (16, 5, 1, 1), {}, True),
    "d": ("r", (16, 16, 1, 1), {}, True),
}
"""Output name -> (input, weight shape, Conv attributes, whether it has a bias); "r" is ReLU(a)."""


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


@needs_qemu
def test_bfloat16_convolutions_match_a_float64_reference_of_rounded_operands(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    model, weights = convs_model(rng)
    x = rng.standard_normal((1, 5, 8, 8)).astype(np.float32)
    printed = run_bf16_build(model, {"x": x}, TARGETS[0], 3, tmp_path)
    got = dict(zip(CONVS, printed, strict=True))
    sources = {"x": x, "r": np.maximum(got["a"].reshape(1, 16, 8, 8), 0)}  # d reads the build's own ReLU(a)
    for name, (source, _, attributes, biased) in CONVS.items():
        strides, pads = attributes.get("strides", [1, 1]), attributes.get("pads", [0, 0, 0, 0])
        bias = weights[f"{name}.b"].astype(np.float64) if biased else None
        rounded = conv(
            bf16_rounded(sources[source]).astype(np.float64),
            bf16_rounded(weights[f"{name}.w"]).astype(np.float64),
            bias,
            strides,
            pads,
        ).ravel()
        exact = conv(sources[source].astype(np.float64), weights[f"{name}.w"], bias, strides, pads).ravel()
        scale = float(np.abs(rounded).max())
        error = float(np.abs(got[name] - rounded).max()) / scale
        unrounded = float(np.abs(got[name] - exact).max()) / scale
        print(f"conv {name}: max |build - rounded reference| / max {error:.1e}; unrounded reference {unrounded:.1e}")
        assert error < TOLERANCE
        assert unrounded > 10 * TOLERANCE
