"""com.microsoft MatMulNBits (int8 / int4 weights in blocks along K, float32 scales, optional zero points and bias)
against ONNX Runtime's own kernel, and the weight kept packed through scheduling.

B's bytes and the packed zero points are random bytes (every byte is a valid pair of nibbles), so the cases read
ORT's layout, not a packing of ours. ORT dequantises B and runs a float32 GEMM; minimlc sums the same products in
another order: relative error at most 1e-5 of the largest |output| (K <= 300: float32 rounding is ~1e-6 there).

At `accuracy_level=4` both quantize A to int8 per block (MLAS's `roundeven(a * (127 / max|a|))`) and take integer
block dot products: minimlc is checked against ORT's CompInt8 kernel within the same 1e-5 (measured ~2e-7: the same
codes, float32 sums of the scaled blocks in another order) and against that math in float64 numpy
(`int8_activation_reference`, within 1e-6), and must differ from the float32-activation product by more than 1e-3
(the quantization of A really happens).
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError, import_model
from minimlc.frontend.onnx_matmul_nbits import unpack_values
from minimlc.lowering.pipeline import run_passes, stage_passes
from minimlc.lowering.target import set_target

RELATIVE = 1e-5


def nbits_model(
    a_shape: tuple[int, ...],
    n: int,
    bits: int,
    block_size: int,
    *,
    zero_points: bool = False,
    bias: bool = False,
    seed: int = 0,
    accuracy_level: int | None = None,
) -> onnx.ModelProto:
    """One MatMulNBits node on input A of `a_shape` (K its last extent), B and its scales random initializers."""
    rng = np.random.default_rng(seed)
    k = a_shape[-1]
    blocks = -(-k // block_size)
    inits = [
        numpy_helper.from_array(rng.integers(0, 256, (n, blocks, block_size * bits // 8), dtype=np.uint8), "B"),
        numpy_helper.from_array(rng.uniform(0.01, 0.1, (n * blocks,)).astype(np.float32), "scales"),
    ]
    inputs = ["A", "B", "scales"]
    if zero_points:
        packed = rng.integers(0, 256, (n * -(-blocks * bits // 8),), dtype=np.uint8)
        inits.append(numpy_helper.from_array(packed, "zero_points"))
        inputs.append("zero_points")
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal((n,)).astype(np.float32), "bias"))
        inputs += [""] * (5 - len(inputs)) + ["bias"]
    level = {} if accuracy_level is None else {"accuracy_level": accuracy_level}
    node = helper.make_node(
        "MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=bits, block_size=block_size, **level
    )
    graph = helper.make_graph(
        [node],
        "matmul_nbits",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, list(a_shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [*a_shape[:-1], n])],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def run_onnxruntime(model: onnx.ModelProto, a: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"A": a})[0]


def check_against_onnxruntime(model: onnx.ModelProto, a_shape: tuple[int, ...]) -> np.ndarray:
    """minimlc's output on a seeded A of `a_shape`, checked against ORT's."""
    a = np.random.default_rng(1).standard_normal(a_shape).astype(np.float32)
    expected = run_onnxruntime(model, a)
    actual = InferenceSession(model).run(None, {"A": a})[0]
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=0, atol=RELATIVE * float(np.abs(expected).max()))
    return actual


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("block_size", [32, 128])
@pytest.mark.parametrize("zero_points", [False, True], ids=["symmetric", "zero-points"])
@pytest.mark.parametrize("rows", [1, 5])
def test_matmul_nbits(bits: int, block_size: int, zero_points: bool, rows: int) -> None:
    """GEMV (one row) and GEMM (five) shapes, N a multiple of the vector panels (the weight-only schedule)."""
    a_shape = (rows, 256)
    check_against_onnxruntime(nbits_model(a_shape, 32, bits, block_size, zero_points=zero_points), a_shape)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("accuracy_level", [None, 4])
def test_matmul_nbits_partial_block_bias_batched(bits: int, accuracy_level: int | None) -> None:
    """K=70, not a multiple of the block (A padded with zeros; ORT pads B's last block), an odd number of blocks
    (int4 zero points: the last byte's upper nibble unused), a bias, 3-D A and N=12 (no whole panels); float32 or
    int8 activations."""
    a_shape = (2, 3, 70)
    model = nbits_model(a_shape, 12, bits, 32, zero_points=True, bias=True, seed=3, accuracy_level=accuracy_level)
    check_against_onnxruntime(model, a_shape)


def test_matmul_nbits_weight_stays_packed() -> None:
    """After scheduling, the kernel reads B as bytes in column panels ([N/nr, blocks, bytes, nr] i8, packed at
    load time), and no float32 buffer of B's N x K values exists."""
    n, k = 64, 256
    module = import_model(nbits_model((1, k), n, 4, 32)).module
    set_target(module, "x86-64-v3")
    run_passes(module, stage_passes(3, stop_after="program"))
    text = str(module)
    assert re.search(r"memref<\d+x8x16x(8|16|32)xi8>", text), "B is not packed into byte panels"
    float_shapes = re.findall(r"memref<([\dx]+)xf32>", text)
    sizes = [int(np.prod([int(d) for d in shape.split("x")])) for shape in float_shapes]
    assert max(sizes) < n * k


def test_matmul_nbits_refuses_g_idx_and_other_widths() -> None:
    model = nbits_model((1, 64), 8, 4, 32)
    node = model.graph.node[0]
    node.input.extend(["", "g_idx"])
    model.graph.initializer.append(numpy_helper.from_array(np.zeros((64,), np.int32), "g_idx"))
    with pytest.raises(UnsupportedFeatureError, match="g_idx"):
        InferenceSession(model)
    two_bits = nbits_model((1, 64), 8, 4, 32)
    next(a for a in two_bits.graph.node[0].attribute if a.name == "bits").i = 2
    with pytest.raises(UnsupportedFeatureError, match="bits=2"):
        InferenceSession(two_bits)


def test_matmul_nbits_refuses_run_time_zero_points() -> None:
    model = nbits_model((1, 64), 8, 4, 32, zero_points=True)
    zero_points = next(t for t in model.graph.initializer if t.name == "zero_points")
    model.graph.initializer.remove(zero_points)
    model.graph.input.append(helper.make_tensor_value_info("zero_points", TensorProto.UINT8, [8]))
    with pytest.raises(UnsupportedFeatureError, match="zero_points"):
        InferenceSession(model)


@pytest.mark.parametrize("bits", [4, 8])
def test_matmul_nbits_default_zero_points_given(bits: int) -> None:
    """Zero points all equal to the default 2^(bits-1), given explicitly (the op then takes none)."""
    model = nbits_model((3, 96), 16, bits, 32, zero_points=True)
    zero_points = next(t for t in model.graph.initializer if t.name == "zero_points")
    default = 0x88 if bits == 4 else 0x80
    zero_points.CopyFrom(numpy_helper.from_array(np.full(zero_points.dims, default, np.uint8), "zero_points"))
    check_against_onnxruntime(model, (3, 96))


def int8_activation_reference(model: onnx.ModelProto, a: np.ndarray) -> np.ndarray:
    """The accuracy_level=4 product in float64 numpy: A's blocks quantized with MLAS's float32 rounding, exact integer
    block dot products, each scaled by `scale * max|a| / 127`."""
    node = model.graph.node[0]
    attributes = {attribute.name: attribute.i for attribute in node.attribute}
    k, n, bits, block_size = (attributes[name] for name in ("K", "N", "bits", "block_size"))
    inits = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    blocks = -(-k // block_size)
    codes = unpack_values(inits["B"].reshape(n, blocks, -1), bits, block_size).astype(np.int64)
    if "zero_points" in inits:
        zero = unpack_values(inits["zero_points"].reshape(n, -1), bits, blocks).astype(np.int64)
    else:
        zero = np.full((n, blocks), 1 << (bits - 1), np.int64)
    padded = np.zeros((*a.shape[:-1], blocks * block_size), np.float32)
    padded[..., :k] = a
    values = padded.reshape(*a.shape[:-1], blocks, block_size)
    peak = np.abs(values).max(axis=-1)
    inverse = np.where(peak > 0, np.float32(127) / np.where(peak > 0, peak, 1), 0).astype(np.float32)
    qa = np.rint(values * inverse[..., None]).astype(np.int64)  # the float32 product, rounded half to even
    exact = np.einsum("...bc,nbc->...nb", qa, codes) - zero * qa.sum(axis=-1)[..., None, :]
    scales = inits["scales"].reshape(n, blocks).astype(np.float64)
    return (exact * scales * (peak.astype(np.float64) / 127)[..., None, :]).sum(axis=-1)


INT8_ACTIVATION_CASES = [
    (bits, block_size, rows, zero_points)
    for bits in (4, 8)
    for block_size, rows, zero_points in ((32, 1, False), (64, 3, True), (128, 1, True), (32, 4, True))
]


@pytest.mark.parametrize(("bits", "block_size", "rows", "zero_points"), INT8_ACTIVATION_CASES)
def test_matmul_nbits_int8_activations(bits: int, block_size: int, rows: int, zero_points: bool) -> None:
    """accuracy_level=4 against ORT's CompInt8 kernel and the float64 reference; K=200 is a multiple of no block
    size (the last block padded), N=32 (whole panels)."""
    a_shape = (rows, 200)
    model = nbits_model(a_shape, 32, bits, block_size, zero_points=zero_points, seed=bits, accuracy_level=4)
    actual = check_against_onnxruntime(model, a_shape)
    a = np.random.default_rng(1).standard_normal(a_shape).astype(np.float32)
    reference = int8_activation_reference(model, a)
    scale = float(np.abs(reference).max())
    np.testing.assert_allclose(actual, reference, rtol=0, atol=1e-6 * scale)
    float_activations = nbits_model(a_shape, 32, bits, block_size, zero_points=zero_points, seed=bits)
    assert np.abs(actual - run_onnxruntime(float_activations, a)).max() > 1e-3 * scale


def test_matmul_nbits_int8_activations_symbolic_rows() -> None:
    """A of `[rows, 256]` compiled once with run-time rows (a bias, int4 with zero points): 1 and 5 rows."""
    model = nbits_model((1, 256), 32, 4, 32, zero_points=True, bias=True, accuracy_level=4)
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "rows"
    session = InferenceSession(model)
    for rows in (1, 5):
        a = np.random.default_rng(rows).standard_normal((rows, 256)).astype(np.float32)
        expected = run_onnxruntime(model, a)
        actual = session.run(None, {"A": a})[0]
        np.testing.assert_allclose(actual, expected, rtol=0, atol=RELATIVE * float(np.abs(expected).max()))
    assert "symbolic_fallback" not in session.stats


def test_matmul_nbits_int8_activations_dot_products() -> None:
    """At accuracy_level=4 the scheduled kernel takes `llvmx.dot_u8s8` of i32 words of B packed into panels at
    load time; at the default level it takes none."""
    for level, expected in ((4, True), (None, False)):
        module = import_model(nbits_model((1, 256), 64, 4, 32, accuracy_level=level)).module
        set_target(module, "x86-64-v3")
        run_passes(module, stage_passes(3, stop_after="program"))
        text = str(module)
        assert ("llvmx.dot_u8s8" in text) is expected
        assert bool(re.search(r"memref<\d+x8x4x(8|16|32)xi32>", text)) is expected


def test_matmul_nbits_refuses_a_bad_accuracy_level() -> None:
    with pytest.raises(ModelImportError, match="accuracy_level=7 must be 0, 1, 2, 3 or 4"):
        InferenceSession(nbits_model((1, 64), 8, 4, 32, accuracy_level=7))
