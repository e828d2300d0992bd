"""`InferenceSession.save` / `minimlc.runtime.load`: bitwise-equal outputs, no compiler at load, one clear error per
bad file."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.lowering.target import target_from_name
from minimlc.runtime import artifact, load
from minimlc.runtime.artifact import ArtifactError


def conv_model(size: int = 16) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
            helper.make_node("Shape", ["y"], ["s"]),
        ],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, size, size]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [4]),
        ],
        [weight, bias],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def session() -> InferenceSession:
    return InferenceSession(conv_model(), num_threads=2)


@pytest.fixture(scope="module")
def saved(session: InferenceSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("artifact") / "conv.mlc"
    session.save(path)
    return path


def feed() -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)}


def test_loaded_session_is_bitwise_equal(session: InferenceSession, saved: Path) -> None:
    loaded = load(saved, num_threads=2)
    assert loaded.get_inputs() == session.get_inputs()
    assert loaded.get_outputs() == session.get_outputs()
    assert loaded.constant_output_names == ["s"]
    for expected, actual in zip(session.run(None, feed()), loaded.run(None, feed()), strict=True):
        assert expected.dtype == actual.dtype
        np.testing.assert_array_equal(actual, expected)
    one_thread = loaded.with_num_threads(1)
    np.testing.assert_array_equal(one_thread.run(["y"], feed())[0], session.run(["y"], feed())[0])
    assert loaded.stats["kernels"] == session.stats["kernels"]


def test_load_imports_neither_xdsl_onnx_nor_ml_dtypes(saved: Path) -> None:
    """A float model loads without the compiler (xDSL, ONNX) and without ml_dtypes (1.5 s to import here)."""
    script = f"""
import sys
import tracemalloc
import numpy as np
from minimlc.runtime import load
session = load({str(saved)!r})
session.run(None, {{"x": np.zeros((1, 3, 16, 16), np.float32)}})
print(sorted(m for m in sys.modules if m.split(".")[0] in ("xdsl", "onnx", "ml_dtypes")))
from minimlc.runtime import threadpool
print(type(threadpool.native_pool().jit).__name__)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["[]", "ObjectModule"]  # the pool's code came from the file, not the JIT


def test_checksum_covers_every_chunk(tmp_path: Path) -> None:
    path = tmp_path / "big.mlc"
    blob = np.arange(5 << 20, dtype=np.float32)  # 20 MiB: three checksum chunks
    artifact.write_file(path, {"target": artifact.target_meta(target_from_name("host"))}, {"blob": blob})
    np.testing.assert_array_equal(artifact.read_file(path)[1]["blob"], blob)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(data)
    with pytest.raises(ArtifactError, match="is corrupt: its checksum"):
        artifact.read_file(path)


def test_writing_copies_neither_the_file_nor_a_weight(tmp_path: Path) -> None:
    """Issue #54: `write_file` built the whole file in memory, and each weight's bytes besides (3 GB of weights
    peaked at 12 GB). Each weight now goes from its array to the file: Python allocates less than a quarter of one
    weight meanwhile (tracemalloc traces bytes, bytearrays and numpy's arrays alike)."""
    weights = {f"weight:{index}": np.full(1 << 20, index, np.float32) for index in range(3)}  # 4 MiB each
    target = artifact.target_meta(target_from_name("host"))
    tracemalloc.start()
    try:
        artifact.write_file(tmp_path / "weights.mlc", {"target": target}, weights)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20), peak
    for name, blob in artifact.read_file(tmp_path / "weights.mlc")[1].items():
        np.testing.assert_array_equal(blob, weights[name])


def test_truncated_file(saved: Path, tmp_path: Path) -> None:
    path = tmp_path / "cut.mlc"
    path.write_bytes(saved.read_bytes()[:-100])
    with pytest.raises(ArtifactError, match="is truncated"):
        load(path)


@pytest.mark.parametrize("where", [0.05, 0.5, 0.99])
def test_flipped_byte(saved: Path, tmp_path: Path, where: float) -> None:
    data = bytearray(saved.read_bytes())
    data[int(len(data) * where)] ^= 0x10
    path = tmp_path / "flipped.mlc"
    path.write_bytes(data)
    with pytest.raises(ArtifactError, match="is corrupt: its checksum"):
        load(path)


def test_not_a_minimlc_file(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(conv_model().SerializeToString())
    with pytest.raises(ArtifactError, match="is not a minimlc model file"):
        load(path)


def test_other_version(session: InferenceSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.mlc"
    with monkeypatch.context() as patch:
        patch.setattr(artifact, "versions", lambda: {"minimlc": "0.0.1", "llvmlite": "0.40.0"})
        session.save(path)
    with pytest.raises(ArtifactError, match=r"written by minimlc 0\.0\.1, llvmlite 0\.40\.0 .*compile the model again"):
        load(path)


def test_other_target(session: InferenceSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "elsewhere.mlc"
    target_meta = artifact.target_meta
    with monkeypatch.context() as patch:
        patch.setattr(artifact, "target_meta", lambda target: {**target_meta(target), "required_features": ["nope"]})
        session.save(path)
    with pytest.raises(ArtifactError, match="this host lacks nope"):
        load(path)


def test_all_constant_model(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"])],
        "shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
    )
    session = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    session.save(tmp_path / "shape.mlc")
    (shape,) = load(tmp_path / "shape.mlc").run(None, {"x": np.zeros((2, 5), np.float32)})
    np.testing.assert_array_equal(shape, [2, 5])


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float16, np.int8, np.uint8, np.int64, np.bool_, "bfloat16", "float8_e5m2", "float8_e4m3fn"],
)
def test_a_dtype_survives_its_metadata(dtype: str | type) -> None:
    import ml_dtypes

    expected = np.dtype(getattr(ml_dtypes, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
    assert artifact.dtype_from_meta(artifact.dtype_meta(expected)) == expected


def test_an_ml_dtypes_name_loads_ml_dtypes_and_an_unknown_name_is_refused() -> None:
    script = (
        "import sys\nfrom minimlc.runtime.artifact import dtype_from_meta\n"
        "print('ml_dtypes' in sys.modules, dtype_from_meta('<f4'), 'ml_dtypes' in sys.modules)\n"
        "print(dtype_from_meta('bfloat16'), 'ml_dtypes' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["False float32 False", "bfloat16 True"]
    with pytest.raises(TypeError, match="not understood"):
        artifact.dtype_from_meta("float7_e9")
