"""AVX2's `vpmaddubsw` form of the u8 x s8 dot product holds two vector registers beside the integer rules' tile
(`strategy/dot_product_form.py`), which the tile is sized for on znver3 (a convolution of 14 columns: tiles of 5, 5
and 4, the float rule's 6 columns spilled); other forms hold none. The smaller tiles are exact against numpy at the
extremes of 7-bit weights."""

from __future__ import annotations

import numpy as np
import pytest

from minimlc import InferenceSession
from minimlc.lowering.strategy.dot_product_form import dot_product_registers
from minimlc.lowering.target import target_from_name
from tests.ops.onnx_cases import one_node_model

RNG = np.random.default_rng(11)


@pytest.mark.parametrize(
    ("target", "lhs_bound", "rhs_bits", "registers"),
    [
        ("znver3", 255, 7, 2),  # 7-bit weights: vpmaddubsw + vpmaddwd by ones
        ("znver3", 15, 8, 2),  # int4 codes
        ("znver3", 255, 8, 0),  # the exact two-vpmaddwd form: the float tile
        ("alderlake", 255, 7, 0),  # AVX-VNNI's vpdpbusd accumulates in place
        ("znver4", 255, 7, 0),
        ("aarch64-linux-gnu -mcpu=neoverse-n1", 255, 7, 0),
        ("x86-64", 255, 7, 0),  # no AVX2: the portable sums
    ],
)
def test_only_the_maddubs_form_holds_registers(target: str, lhs_bound: int, rhs_bits: int, registers: int) -> None:
    assert dot_product_registers(target_from_name(target), lhs_bound, rhs_bits) == registers


@pytest.mark.skipif(target_from_name("znver3").missing_on_host(), reason="this host cannot run code for znver3")
def test_seven_bit_conv_in_maddubs_tiles_is_exact() -> None:
    """ConvInteger, 7-bit weights at -64 and 63 against inputs of 255 (pair sums -32640), 14 output columns (the
    5 + 5 + 4 column tiles) and 16 channels: numpy's exact sums."""
    x = RNG.integers(0, 256, (1, 8, 3, 16)).astype(np.uint8)
    x[..., :4] = 255
    w = RNG.integers(-64, 64, (16, 8, 3, 3)).astype(np.int8)
    w[:8], w[8:12] = -64, 63
    model = one_node_model("ConvInteger", {"x": x}, {}, constants={"w": w}, inputs=["x", "w"])
    session = InferenceSession(model, target="znver3")
    assert "@llvm.x86.avx2.pmadd.ub.sw(" in session.llvm_ir
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64), (3, 3), axis=(2, 3))
    expected = np.einsum("ncyxij,fcij->nfyx", windows, w.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected)
