"""Integer kernels over int8 weights the importer finds in 7 bits ([-64, 63]) take AVX2's `vpmaddubsw` on znver3
(no VNNI), exactly; a weight of -65 keeps the exact 8-bit form; weights bound later that do not fit 7 bits are
refused in one line (the session's `with_weights`, a saved model, a library's weights file), never computed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest

from minimlc import InferenceSession, load
from minimlc.driver.shared_library import fingerprint, write_weights
from minimlc.frontend.onnx import import_model
from minimlc.lowering.target import target_from_name
from minimlc.runtime import artifact
from tests.ops.onnx_cases import one_node_model

TARGET = "znver3"
RNG = np.random.default_rng(7)

pytestmark = pytest.mark.skipif(
    target_from_name(TARGET).missing_on_host(), reason=f"this host cannot run code for {TARGET}"
)


def matmul_model(weight: np.ndarray) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """MatMulInteger of a u8 A (rows at 0 and 255) and the int8 weight B, zero points omitted (the dot-product form)."""
    a = RNG.integers(0, 256, (6, weight.shape[0])).astype(np.uint8)
    a[0], a[1, ::2], a[1, 1::2] = 255, 0, 255
    feeds = {"A": a}
    return one_node_model("MatMulInteger", feeds, {}, constants={"B": weight}, inputs=["A", "B"]), feeds


def exact_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)


def seven_bit_weight(shape: tuple[int, int] = (40, 16)) -> np.ndarray:
    weight = RNG.integers(-64, 64, shape).astype(np.int8)
    weight[:, 0], weight[:, 1] = -64, 63  # pair sums 2 * 255 * -64 = -32640, the extreme
    return weight


def test_importer_states_seven_bit_weights() -> None:
    weight = seven_bit_weight()
    assert 'graph.weight "B" {minimlc.value_bits = 7 : i64}' in str(import_model(matmul_model(weight)[0]).module)
    weight[3, 3] = -65
    assert "value_bits" not in str(import_model(matmul_model(weight)[0]).module)


def test_seven_bit_matmul_is_vpmaddubsw_and_exact_at_the_extremes() -> None:
    weight = seven_bit_weight()
    model, feeds = matmul_model(weight)
    session = InferenceSession(model, target=TARGET)
    assert "@llvm.x86.avx2.pmadd.ub.sw(" in session.llvm_ir
    (out,) = session.run(None, feeds)
    np.testing.assert_array_equal(out, exact_product(feeds["A"], weight))


def test_a_weight_of_minus_65_keeps_the_exact_form() -> None:
    """One -65 beside 255s: `vpmaddubsw` would saturate (2 * 255 * -65 < -32768); the two-`vpmaddwd` form is exact."""
    weight = np.full((40, 16), -64, np.int8)
    weight[:2, :] = -65
    model, feeds = matmul_model(weight)
    session = InferenceSession(model, target=TARGET)
    assert "pmadd.ub.sw" not in session.llvm_ir
    assert "@llvm.x86.avx2.pmadd.wd(" in session.llvm_ir
    (out,) = session.run(None, feeds)
    np.testing.assert_array_equal(out, exact_product(feeds["A"], weight))


def test_seven_bit_qlinear_conv_equals_onnxruntime() -> None:
    """QLinearConv with per-channel 7-bit weights, 32 output channels, bias: the `vpmaddubsw` build's integers are
    ONNX Runtime's."""
    feeds = {"x": RNG.integers(0, 256, (1, 8, 5, 6)).astype(np.uint8)}
    constants = {
        "x_scale": np.array(0.05, np.float32),
        "x_zero": np.array(120, np.uint8),
        "w": RNG.integers(-64, 64, (32, 8, 3, 3)).astype(np.int8),
        "w_scale": RNG.uniform(0.002, 0.02, (32,)).astype(np.float32),
        "w_zero": np.zeros((32,), np.int8),
        "y_scale": np.array(0.9, np.float32),
        "y_zero": np.array(60, np.uint8),
        "B": RNG.integers(-5000, 5000, (32,)).astype(np.int32),
    }
    order = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "B"]
    model = one_node_model("QLinearConv", feeds, {"pads": [1, 1, 1, 1]}, constants=constants, inputs=order)
    session = InferenceSession(model, target=TARGET)
    assert "@llvm.x86.avx2.pmadd.ub.sw(" in session.llvm_ir
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    expected = onnxruntime.InferenceSession(model.SerializeToString(), options).run(None, feeds)[0]
    np.testing.assert_array_equal(session.run(None, feeds)[0], expected)


def test_rebinding_eight_bit_weights_into_a_seven_bit_build_is_refused() -> None:
    model, feeds = matmul_model(seven_bit_weight())
    session = InferenceSession(model, target=TARGET)
    wide = seven_bit_weight()
    wide[5, 7] = -65
    message = (
        "weight 'B' has values in [-65, 63], outside the 7-bit range [-64, 63] the compiled code relies on; "
        "compile the model with these weights instead"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        session.with_weights(import_model(matmul_model(wide)[0]).weights)
    narrow = seven_bit_weight()
    (out,) = session.with_weights(import_model(matmul_model(narrow)[0]).weights).run(None, feeds)
    np.testing.assert_array_equal(out, exact_product(feeds["A"], narrow))


def test_a_saved_seven_bit_build_refuses_swapped_weights(tmp_path: Path) -> None:
    """The saved model states the weight's bits: loading it checks them, so a file whose weight blob was swapped
    for an 8-bit one is refused before native code runs."""
    model, feeds = matmul_model(seven_bit_weight())
    path = tmp_path / "model.mlc"
    InferenceSession(model, target=TARGET).save(path)
    meta, blobs = artifact.read_file(path)
    assert meta["entry"]["weight_bits"] == {"B": 7}
    np.testing.assert_array_equal(load(path).run(None, feeds)[0], exact_product(feeds["A"], blobs["weight:B"]))
    swapped = dict(blobs)
    swapped["weight:B"] = np.full_like(blobs["weight:B"], -128)
    artifact.write_file(path, meta, swapped)
    with pytest.raises(ValueError, match=r"^weight 'B' has values in \[-128, -128\], outside the 7-bit range"):
        load(path)


def test_library_weights_files_carry_the_bits() -> None:
    """A weights file for a 7-bit build is refused when a weight does not fit, and the fingerprint that ties a file
    to its library differs from an 8-bit build's of the same names and shapes."""
    narrow_model, _ = matmul_model(seven_bit_weight())
    wide_weight = seven_bit_weight()
    wide_weight[0, 0] = 100
    wide_model, _ = matmul_model(wide_weight)
    narrow, wide = (InferenceSession(m, target=TARGET)._model for m in (narrow_model, wide_model))
    assert narrow is not None
    assert wide is not None
    assert narrow.signature.weight_bits == {"B": 7}
    assert wide.signature.weight_bits == {}
    assert fingerprint(narrow.signature, narrow.weights) != fingerprint(wide.signature, wide.weights)
    with pytest.raises(ValueError, match=r"^weight 'B' has values in \[-64, 100\]"):
        write_weights(Path("/nonexistent/never-written.bin"), narrow.signature, wide.weights)


def test_a_target_without_avx2_ignores_the_bits() -> None:
    """x86-64-v2 keeps the portable i32 sums (znver4's `vpdpbusd`: the lit test `seven-bit-weights.mlir`)."""
    weight = seven_bit_weight()
    model, feeds = matmul_model(weight)
    session = InferenceSession(model, target="x86-64-v2")
    assert "pmadd" not in session.llvm_ir
    np.testing.assert_array_equal(session.run(None, feeds)[0], exact_product(feeds["A"], weight))
