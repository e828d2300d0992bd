"""A GEMV whose weight is bigger than the last-level cache reads it unpacked, split-K (`split_k` in
`lowering/schedule/gemm.py`): binding allocates no packed copy, so the weights are in memory once, whether the model
runs from its external data file or from a saved `.mlc`; checked against ONNX Runtime at 1 and 2 threads. The models
compile for `x86-64-v3`, a named CPU whose caches are the typical sizes (a 32 MiB last level), not the host's."""

from __future__ import annotations

import platform
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.runtime import load

DEPTH = 4100
"""Rows of the weight: 32 ranges of 128 rows and a tail of 4 (not a multiple of the ranges' 8-row blocks)."""
LARGE, SMALL = 2560, 512
"""Columns of a weight above (40 MiB of float32) and below (8 MiB) the named CPU's 32 MiB last-level cache."""
TARGET = "x86-64-v3"
x86_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="compiles for an x86 CPU")


def _gemv_model(folder: Path, width: int) -> Path:
    """`y = x @ W`, x [1, DEPTH], W [DEPTH, width] float32 stored as external data."""
    rng = np.random.default_rng(0)
    rng.standard_normal((DEPTH, width), dtype=np.float32).tofile(folder / "w.bin")
    weight = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[DEPTH, width])
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value="w.bin")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        "gemv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        [weight],
    )
    path = folder / "gemv.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


@x86_only
@pytest.mark.parametrize(("width", "packed_bytes"), [(LARGE, 0), (SMALL, DEPTH * SMALL * 4)])
def test_large_gemv_binds_no_packed_copy_and_matches_onnxruntime(tmp_path: Path, width: int, packed_bytes: int) -> None:
    """The init entry fills no buffer for the GEMV above the cache (it packs one of the weight's size below it),
    and both agree with ONNX Runtime at one and two threads."""
    path = _gemv_model(tmp_path, width)
    x = np.random.default_rng(1).standard_normal((1, DEPTH), dtype=np.float32)
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for threads in (1, 2):
        session = InferenceSession(path, target=TARGET, num_threads=threads, cache=False)
        assert sum(buffer.nbytes for buffer in session._model.precomputed) == packed_bytes
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-4, atol=1e-3)


@x86_only
def test_loading_a_saved_large_gemv_holds_its_weights_once(tmp_path: Path) -> None:
    """Loading the `.mlc` of a split-K GEMV allocates the file's buffer and nothing of the weights' size besides
    (with packing it allocated a second copy: 2x), and the loaded model matches the compiled one."""
    path = _gemv_model(tmp_path, LARGE)
    session = InferenceSession(path, target=TARGET, num_threads=1, cache=False)
    session.save(tmp_path / "gemv.mlc")
    tracemalloc.start()
    try:
        loaded = load(tmp_path / "gemv.mlc", num_threads=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    weight_bytes = DEPTH * LARGE * 4
    assert peak < 1.25 * weight_bytes, f"peak {peak / weight_bytes:.2f}x the weights"
    x = np.random.default_rng(2).standard_normal((1, DEPTH), dtype=np.float32)
    np.testing.assert_array_equal(loaded.run(None, {"x": x})[0], session.run(None, {"x": x})[0])
