"""Reading the model file (`frontend/onnx_model_file.py`): external data memory-mapped and never serialised again,
peak memory near the weights' size, one clear error for a missing data file or a directory, and outputs that
declare no shape (as ONNX Runtime runs them), checked against ONNX Runtime."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ExternalDataError, ModelImportError, import_model
from minimlc.tools.minimlc_cli import main as cli_main

WIDTH = 1024


def _embedding_model(directory: Path, rows: int, *, data_file: str = "model.onnx.data") -> Path:
    """`y = W[i]` (Gather) with a float32 table W [rows, WIDTH] stored in `data_file`, written without ever holding
    W in a protobuf (as exporters write models over 2 GB)."""
    table = np.memmap(directory / data_file, dtype=np.float32, mode="w+", shape=(rows, WIDTH))
    for start in range(0, rows, 4096):
        block = np.arange(start, min(rows, start + 4096), dtype=np.float32)[:, None]
        table[start : start + len(block)] = block + np.linspace(0, 0.5, WIDTH, dtype=np.float32)
    table.flush()
    del table
    weight = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[rows, WIDTH])
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", data_file), ("offset", "0"), ("length", str(rows * WIDTH * 4))):
        weight.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["W", "i"], ["y"], axis=0)],
        "embedding",
        [helper.make_tensor_value_info("i", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, WIDTH])],
        [weight],
    )
    path = directory / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


def test_external_data_is_mapped_and_never_serialised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker sees the model's structure only (a protobuf of a few hundred bytes, not the 64 MB of weights),
    the weight is a view of the data file's map, and the session matches ONNX Runtime."""
    path = _embedding_model(tmp_path, rows=16384)
    checked: list[int] = []
    check_model = onnx.checker.check_model

    def spy(model: onnx.ModelProto | str | bytes, *args: object, **kwargs: object) -> None:
        checked.append(model.ByteSize() if isinstance(model, onnx.ModelProto) else -1)
        check_model(model, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(onnx.checker, "check_model", spy)
    weight = import_model(path).weights["W"]
    assert checked and max(checked) < 4096
    base = weight
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, mmap.mmap)
    assert weight.shape == (16384, WIDTH) and weight[7, 0] == 7.0

    indices = np.array([0, 16383, 4097], np.int64)
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"i": indices})
    (got,) = InferenceSession(path, opt_level=0).run(None, {"i": indices})
    np.testing.assert_array_equal(got, expected)


_PEAK_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from minimlc import InferenceSession

    def peak():  # this process's own high-water mark (ru_maxrss may hold the parent's, from before exec)
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

    small, large = sys.argv[1:]
    InferenceSession(small).run(None, {"i": np.array([0, 1, 2], np.int64)})  # imports, LLVM, the pipeline: warmed
    baseline = peak()
    InferenceSession(large).run(None, {"i": np.array([0, 1, 2], np.int64)})
    print(baseline, peak())
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_peak_memory_of_an_external_data_model_stays_under_one_and_a_half_weights(tmp_path: Path) -> None:
    """Compiling and running a model of 128 MB of external weights raises the process's peak RSS (after compiling
    the same model with small weights) by less than 1.5x the weights (it was 3x: a copy in the protobuf, one
    serialised for the checker, one per array)."""
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small = _embedding_model(tmp_path / "small", rows=16)
    rows = 32768
    large = _embedding_model(tmp_path / "large", rows=rows)
    environment = {**os.environ, "MINIMLC_CACHE": "0"}
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(small), str(large)],
        capture_output=True, text=True, check=True, env=environment,
    )
    baseline, peak = (int(kib) * 1024 for kib in result.stdout.split())
    weights = rows * WIDTH * 4
    assert peak - baseline < 1.5 * weights, f"peak {peak >> 20} MB, baseline {baseline >> 20} MB"


def test_missing_external_data_file_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _embedding_model(tmp_path, rows=4)
    (tmp_path / "model.onnx.data").unlink()
    message = f"external data file '{tmp_path / 'model.onnx.data'}' of initializer 'W' does not exist"
    with pytest.raises(ExternalDataError) as caught:
        import_model(path)
    assert str(caught.value) == message
    assert isinstance(caught.value, ModelImportError | ValueError)
    assert cli_main(["compile", str(path), "-o", str(tmp_path / "model.mlc")]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"minimlc: error: {message}"  # after "compiling ..."


@pytest.mark.parametrize(
    ("location", "problem"),
    [("../outside.data", "is not a path inside the model's folder"), ("/etc/passwd", "is not a path inside")],
)
def test_external_data_outside_the_model_folder_is_refused(tmp_path: Path, location: str, problem: str) -> None:
    path = _embedding_model(tmp_path, rows=4)
    model = onnx.load(path, load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    onnx.save(model, path)
    with pytest.raises(ExternalDataError, match=problem):
        import_model(path)


def test_external_data_shorter_than_the_tensor_is_refused(tmp_path: Path) -> None:
    path = _embedding_model(tmp_path, rows=4)
    os.truncate(tmp_path / "model.onnx.data", 1000)
    with pytest.raises(ExternalDataError, match=r"initializer 'W' \(16384 bytes\) .* the file has 1000 bytes"):
        import_model(path)


def test_a_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelImportError, match=f"^'{tmp_path}' is a directory, not an ONNX model file$"):
        import_model(tmp_path)
    with pytest.raises(ModelImportError, match="is a directory"):
        InferenceSession(tmp_path)


@pytest.mark.parametrize("declared", ["no shape", "no type", "undefined element type"])
def test_outputs_without_a_declared_shape_are_computed(declared: str) -> None:
    """ONNX Runtime runs a model whose outputs declare no shape (the checker refuses it): minimlc computes it."""
    output = {
        "no shape": helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
        "no type": onnx.ValueInfoProto(name="y"),
        "undefined element type": helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None),
    }[declared]
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), helper.make_node("Relu", ["t"], ["y"])],
        "shapeless",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [output],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    session = InferenceSession(model, opt_level=0)
    assert tuple(session.get_outputs()[0].shape) == (3, 2)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], np.maximum(x.T, 0))
    if declared == "no shape":  # ONNX Runtime refuses the two others' types
        (expected,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x}
        )
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected)


def test_an_output_not_computed_is_named() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "missing",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None), helper.make_tensor_value_info("z", 1, None)],
    )
    with pytest.raises(ModelImportError, match="'z'"):
        import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8))


def test_an_input_of_unknown_rank_is_named() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "rankless",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    with pytest.raises(ModelImportError, match=r"input 'x' has an unknown rank; pass input_shapes=\{'x': \[...\]\}"):
        import_model(model)
    assert import_model(model, {"x": [4]}).outputs[0].shape == (4,)
