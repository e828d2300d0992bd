"""`minimlc build` (`runtime.shared_library.export_library`): a model as a shared library that examples/c/main.c
links against and runs; its outputs are bitwise those of the Python session, which runs the same optimised IR."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.driver import codegen, cpu_checks
from minimlc.driver.shared_library import CompilerNotFoundError, export_library, object_code
from minimlc.frontend.onnx import import_model
from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase
from minimlc.lowering.target import target_from_name
from minimlc.tools.minimlc_cli import main as cli_main
from minimlc.tuner.tasks import extract_tasks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from make_mlp import build_mlp  # noqa: E402
from model_builder import ModelBuilder, expanded_exp_model  # noqa: E402

CC = (os.environ.get("CC") or "cc").split()[0]
pytestmark = pytest.mark.skipif(shutil.which(CC) is None, reason=f"no C compiler ('{CC}') to link libraries with")


def conv_model() -> onnx.ModelProto:
    """Two convolutions (the first with batch norm, folded at load time into precomputed buffers): parallel loops."""
    b = ModelBuilder(seed=1)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 3, 16, "conv1"), 16, "bn")], "relu")
    return b.model([1, 3, 32, 32], b.conv(y, 16, 8, "conv2", strides=[2, 2]), [1, 8, 16, 16])


def link_main(folder: Path) -> Path:
    """examples/c/main.c linked against folder/libmodel.so: folder/run_model."""
    executable = folder / "run_model"
    subprocess.run(
        [CC, "-O2", "-Wall", "-Werror", f"-I{folder}", str(ROOT / "examples" / "c" / "main.c"), f"-L{folder}",
         "-lmodel", f"-Wl,-rpath,{folder}", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    return executable


def build_and_run(model: onnx.ModelProto, folder: Path, threads: int = 1) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Build `model` into folder/libmodel.so with the CLI, link examples/c/main.c, run it on a random input; its
    outputs, and the Python session's on the same input."""
    folder.mkdir()
    onnx.save(model, folder / "model.onnx")
    assert cli_main(["build", str(folder / "model.onnx"), "-o", str(folder / "libmodel.so")]) == 0
    executable = link_main(folder)
    session = InferenceSession(model, num_threads=threads)
    rng = np.random.default_rng(0)
    feeds = {info.name: rng.standard_normal(info.shape).astype(np.float32) for info in session.get_inputs()}
    paths = []
    for name, value in feeds.items():
        paths.append(str(folder / f"{name}.f32"))
        value.tofile(paths[-1])
    result = subprocess.run(
        [str(executable), str(folder / "libmodel.weights"), "-t", str(threads), *paths],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    printed = [np.array(chunk.split()[2:], dtype=np.float32) for chunk in result.stdout.split("output ")[1:]]
    expected = session.run(None, feeds)
    assert [value.size for value in printed] == [value.size for value in expected]
    return [value.ravel() for value in expected], printed


def test_mlp_library_matches_the_session(tmp_path: Path) -> None:
    expected, printed = build_and_run(build_mlp(batch=1), tmp_path / "mlp")
    for want, got in zip(expected, printed):
        np.testing.assert_array_equal(got, want)
    header = (tmp_path / "mlp" / "libmodel.h").read_text()
    assert "int model_run(minimlc_model *m, const float *input, float *logits);" in header
    assert "#define MODEL_INPUT_INPUT_SHAPE {1, 784}" in header


@pytest.mark.slow
@pytest.mark.parametrize("partitions", [1, 2])
def test_conv_library_with_parallel_loops_matches_the_session(
    tmp_path: Path, partitions: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also compiled in two partitions (two object files calling each other, every symbol still hidden)."""
    monkeypatch.setattr(codegen, "MIN_OPS_PER_PARTITION", 1)
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", str(partitions))
    model = conv_model()
    compiled = object_code(import_model(model))
    assert compiled.signature.pool_slot is not None
    assert len(compiled.objects) == partitions
    expected, printed = build_and_run(model, tmp_path / "conv", threads=2)
    for want, got in zip(expected, printed):
        np.testing.assert_array_equal(got, want)  # parallel loops split no reduction: the same sums in any thread


def test_two_models_link_into_one_program(tmp_path: Path) -> None:
    """Prefixes keep the APIs apart and everything else is hidden; a weights file of another model is refused."""
    for name, model in (("mlp", build_mlp(batch=1)), ("conv", conv_model())):
        onnx.save(model, tmp_path / f"{name}.onnx")
        export_library(import_model(model), tmp_path / f"lib{name}.so", prefix=name)
    (tmp_path / "both.c").write_text(
        """#include <stdio.h>
#include "libmlp.h"
#include "libconv.h"
int main(int argc, char **argv) {
    static float x[MLP_INPUT_INPUT_SIZE], y[MLP_OUTPUT_LOGITS_SIZE], c[CONV_INPUT_X_SIZE], d[CONV_OUTPUT_CONV2_SIZE];
    minimlc_model *mlp = mlp_load(argv[1], 1), *conv = conv_load(argv[2], 2);
    if (!mlp || !conv || mlp_run(mlp, x, y) || conv_run(conv, c, d)) return 1;
    if (mlp_load(argv[2], 1) != NULL) return 2;
    printf("%s\\n", mlp_last_error());
    mlp_free(mlp);
    conv_free(conv);
    return 0;
}
"""
    )
    subprocess.run(
        [CC, "-Wall", "-Werror", f"-I{tmp_path}", str(tmp_path / "both.c"), f"-L{tmp_path}", "-lmlp", "-lconv",
         f"-Wl,-rpath,{tmp_path}", "-o", str(tmp_path / "both")],
        check=True,
    )  # fmt: skip
    result = subprocess.run(
        [str(tmp_path / "both"), str(tmp_path / "libmlp.weights"), str(tmp_path / "libconv.weights")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "holds the weights of another model" in result.stdout


def test_missing_compiler_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    onnx.save(build_mlp(batch=1), tmp_path / "mlp.onnx")
    with pytest.raises(CompilerNotFoundError, match="no-such-cc"):
        export_library(import_model(tmp_path / "mlp.onnx"), tmp_path / "libmodel.so")
    assert cli_main(["build", str(tmp_path / "mlp.onnx"), "-o", str(tmp_path / "libmodel.so")]) == 1
    assert "no-such-cc" in capsys.readouterr().err
    assert not (tmp_path / "libmodel.so").exists()


def test_library_for_a_feature_this_cpu_lacks_refuses_to_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code built for another CPU must not die of an illegal instruction: `model_load` checks the CPU first. No CPU
    of today has AVX-512ER (Xeon Phi's), so a target that requires it stands for "another CPU" on every host."""
    monkeypatch.setattr(cpu_checks, "CPU_CHECKABLE_FEATURES", {*cpu_checks.CPU_CHECKABLE_FEATURES, "avx512er"})
    base = target_from_name("x86-64-v3")
    phi = dataclasses.replace(base, required_features=(*base.required_features, "avx512er"))
    export_library(import_model(build_mlp(batch=1)), tmp_path / "libmodel.so", target=phi)
    library = ctypes.CDLL(str(tmp_path / "libmodel.so"))
    library.model_load.restype = ctypes.c_void_p
    library.model_last_error.restype = ctypes.c_char_p
    assert library.model_load(str(tmp_path / "libmodel.weights").encode(), 1) is None
    message = library.model_last_error().decode()
    assert "this CPU lacks avx512er" in message
    assert "'x86-64-v3'" in message


def test_emit_obj_writes_the_object_code(tmp_path: Path) -> None:
    onnx.save(build_mlp(batch=1), tmp_path / "mlp.onnx")
    assert cli_main(["compile", str(tmp_path / "mlp.onnx"), "--emit", "obj", "-o", str(tmp_path / "model.o")]) == 0
    code = (tmp_path / "model.o").read_bytes()
    assert code.startswith(b"\x7fELF")
    assert b"model_main_packed" in code


def test_emit_obj_and_build_apply_the_tuning_database(tmp_path: Path, capsys) -> None:
    """`--tuning-db` changes the object code `compile --emit obj` and `build` emit (both once ignored it); a
    corrupt database stops them with its file and line."""
    onnx.save(build_mlp(batch=1), tmp_path / "mlp.onnx")
    host = target_from_name("host")
    task = next(t for t in extract_tasks(import_model(tmp_path / "mlp.onnx"), host) if t.rule == "gemm")
    knob = next(knob for knob in task.space.knobs if knob.name == "nr")
    config = {**task.space.default(), "nr": next(value for value in knob.values if value != knob.default)}
    TuningDatabase(tmp_path / "db.jsonl").add(Record(task.key, host.cpu, "gemm", task.kernel, task.flops, config, 1e-9))

    def emit(name: str, *db: str) -> bytes:
        argv = ["compile", str(tmp_path / "mlp.onnx"), "--emit", "obj", "-o", str(tmp_path / name), *db]
        assert cli_main(argv) == 0
        return (tmp_path / name).read_bytes()

    tuned = emit("tuned.o", "--tuning-db", str(tmp_path / "db.jsonl"))
    assert tuned == emit("again.o", "--tuning-db", str(tmp_path / "db.jsonl")) != emit("default.o")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    for argv in (
        ["compile", str(tmp_path / "mlp.onnx"), "--emit", "obj", "-o", str(tmp_path / "bad.o")],
        ["build", str(tmp_path / "mlp.onnx"), "-o", str(tmp_path / "libbad.so")],
    ):
        assert cli_main([*argv, "--tuning-db", str(tmp_path / "bad.jsonl")]) == 1
        assert "bad.jsonl:1: not a JSON line" in capsys.readouterr().err
    assert cli_main(["build", str(tmp_path / "mlp.onnx"), "-o", str(tmp_path / "libmodel.so"),
                     "--tuning-db", str(tmp_path / "db.jsonl")]) == 0  # fmt: skip
    assert (tmp_path / "libmodel.so").exists()


TYPED_PROGRAM = """#include <stdio.h>
#include "libmodel.h"
int main(int argc, char **argv) {
    (void)argc;
    minimlc_model *m = model_load(argv[1], 1);
    if (!m) { fprintf(stderr, "%s\\n", model_last_error()); return 1; }
    CTYPE x[MODEL_INPUT_X_SIZE], y[MODEL_OUTPUT_Y_SIZE];
    FILE *f = fopen(argv[2], "rb");
    if (fread(x, sizeof x, 1, f) != 1) return 1;
    fclose(f);
    if (model_run(m, x, y)) return 1;
    f = fopen(argv[3], "wb");
    fwrite(y, sizeof y, 1, f);
    fclose(f);
    model_free(m);
    return 0;
}
"""


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_typed_library_matches_the_session(tmp_path: Path, dtype: type) -> None:
    """A model whose input, weight and output are int8, uint16, float64 or float16 (passed as its bits, uint16_t):
    typed parameters in the header, raw weights of their dtype in the weights file, the session's outputs bitwise."""
    kind = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    weight = onnx.numpy_helper.from_array(np.arange(-3, 3).astype(dtype).reshape(2, 3), "W")
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["X", "W"], ["Y"])],
        "typed",
        [onnx.helper.make_tensor_value_info("X", kind, [2, 3])],
        [onnx.helper.make_tensor_value_info("Y", kind, [2, 3])],
        [weight],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21)], ir_version=10)
    export_library(import_model(model), tmp_path / "libmodel.so")
    c_type = {"int8": "int8_t", "uint16": "uint16_t", "float64": "double", "float16": "uint16_t"}[np.dtype(dtype).name]
    assert f"int model_run(minimlc_model *m, const {c_type} *X, {c_type} *Y);" in (tmp_path / "libmodel.h").read_text()
    (tmp_path / "main.c").write_text(TYPED_PROGRAM.replace("CTYPE", c_type))
    executable = tmp_path / "run_model"
    subprocess.run(
        [CC, "-O2", "-Wall", "-Werror", f"-I{tmp_path}", str(tmp_path / "main.c"), f"-L{tmp_path}", "-lmodel",
         f"-Wl,-rpath,{tmp_path}", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    x = np.array([[5, -1, 2], [7, 1, -4]]).astype(dtype)
    x.tofile(tmp_path / "x.bin")
    subprocess.run(
        [str(executable), str(tmp_path / "libmodel.weights"), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")],
        check=True,
    )
    (expected,) = InferenceSession(model).run(None, {"X": x})
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.bin", dtype=dtype).reshape(2, 3), expected)


def test_library_run_fails_on_an_index_out_of_range(tmp_path: Path) -> None:
    """The C API keeps the session's run-time index check: `model_run` returns 2 and `model_last_error` names the
    Gather and its range; indices in range give the session's rows."""
    helper, tensor = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed")],
        "gather",
        [helper.make_tensor_value_info("ids", tensor.INT64, [3])],
        [helper.make_tensor_value_info("rows", tensor.FLOAT, [3, 2])],
        [onnx.numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    export_library(import_model(model), tmp_path / "libmodel.so")
    assert "MODEL_NUM_OUTPUTS 1" in (tmp_path / "libmodel.h").read_text()
    library = ctypes.CDLL(str(tmp_path / "libmodel.so"))
    library.model_load.restype = ctypes.c_void_p
    library.model_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(library.model_load(str(tmp_path / "libmodel.weights").encode(), 1))
    assert handle.value, library.model_last_error()
    rows = np.zeros((3, 2), np.float32)
    try:
        for ids, status in ((np.array([3, -4, 0]), 0), (np.array([0, 4, 1]), 2)):
            ids = ids.astype(np.int64)
            pointers = (ids.ctypes.data_as(ctypes.c_void_p), rows.ctypes.data_as(ctypes.c_void_p))
            assert library.model_run(handle, *pointers) == status
            if status == 0:
                np.testing.assert_array_equal(rows, InferenceSession(model).run(None, {"ids": ids})[0])
        assert b"'embed' (Gather): indices must lie in [-4, 4)" in library.model_last_error()
    finally:
        library.model_free(handle)


def test_library_of_a_trimmed_output_writes_its_bound_and_count(tmp_path: Path) -> None:
    """NonZero's output has a data-dependent extent: the library writes it up to its bound (every element) and its
    count as an output of its own, which the header explains; the valid part is the session's answer."""
    helper, tensor = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["where"])],
        "nonzero",
        [helper.make_tensor_value_info("x", tensor.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("where", tensor.INT64, [2, None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    export_library(import_model(model), tmp_path / "libmodel.so")
    header = (tmp_path / "libmodel.h").read_text()
    assert "MODEL_NUM_OUTPUTS 2" in header
    assert "output 'where.count': int64[1], as int64_t: how many entries of 'where' are valid" in header
    library = ctypes.CDLL(str(tmp_path / "libmodel.so"))
    library.model_load.restype = ctypes.c_void_p
    handle = ctypes.c_void_p(library.model_load(str(tmp_path / "libmodel.weights").encode(), 1))
    x = np.array([[0, 1.5, 0], [2, 0, -1]], np.float32)
    bound, count = np.zeros((2, 6), np.int64), np.zeros(1, np.int64)
    try:
        pointers = [array.ctypes.data_as(ctypes.c_void_p) for array in (x, bound, count)]
        assert library.model_run(handle, *pointers) == 0
    finally:
        library.model_free(handle)
    (expected,) = InferenceSession(model).run(None, {"x": x})
    assert count[0] == expected.shape[1] == 3
    np.testing.assert_array_equal(bound[:, : count[0]], expected)


def test_library_run_reports_memory_it_cannot_allocate(tmp_path: Path) -> None:
    """Issue #54: intermediates too large to allocate make `<prefix>_run` return 3 with a message naming the bytes
    (the entry never runs on a NULL buffer); the library stays usable."""
    export_library(import_model(expanded_exp_model()), tmp_path / "libbig.so", prefix="big")
    library = ctypes.CDLL(str(tmp_path / "libbig.so"))
    library.big_load.restype = ctypes.c_void_p
    library.big_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(library.big_load(str(tmp_path / "libbig.weights").encode(), 2))
    assert handle.value, library.big_last_error()
    x, y = np.zeros((1, 1), np.float32), np.zeros((), np.float32)
    try:
        for _ in range(2):
            assert library.big_run(handle, x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p)) == 3
            message = library.big_last_error().decode()
            assert message.startswith("big_run: out of memory: "), message
            assert int(message.split("allocate ")[1].split()[0]) >= 4 * 2**25 * 2**24, message
    finally:
        library.big_free(handle)
    header = (tmp_path / "libbig.h").read_text()
    assert "3 when its intermediate buffers cannot be allocated" in header


def test_main_c_prints_the_runtime_message_as_is(tmp_path: Path) -> None:
    """Issue #54: examples/c/main.c printed 'model_load: model: ...' and 'model_run: model_run: ...': the runtime's
    messages carry their prefix already, and main.c prints them as they are."""
    export_library(import_model(expanded_exp_model()), tmp_path / "libmodel.so")
    executable = link_main(tmp_path)
    missing = tmp_path / "missing.weights"
    result = subprocess.run([str(executable), str(missing)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stderr) == (1, f"model: cannot open weights file '{missing}'\n")
    result = subprocess.run(
        [str(executable), str(tmp_path / "libmodel.weights")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert re.fullmatch(
        r"model_run: out of memory: the model's native code could not allocate \d+ bytes \(\d+\.\d GiB\) for "
        r"its intermediate buffers\n",
        result.stderr,
    ), result.stderr


def test_a_null_model_is_reported_under_the_prefix(tmp_path: Path) -> None:
    """Issue #54: `small_run(NULL, ...)` said 'model_run: ...' whatever the prefix."""
    export_library(import_model(build_mlp(batch=1)), tmp_path / "libsmall.so", prefix="small")
    library = ctypes.CDLL(str(tmp_path / "libsmall.so"))
    library.small_last_error.restype = ctypes.c_char_p
    x, y = np.zeros((1, 784), np.float32), np.zeros((1, 10), np.float32)
    assert library.small_run(None, x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p)) == 1
    assert library.small_last_error() == b"small_run: the model is NULL (did its load fail?)"


def test_main_c_feeds_and_prints_every_dtype(tmp_path: Path) -> None:
    """examples/c/main.c reads each input of the dtype the header's MODEL_INPUT_DTYPES names (int64, bool) from its
    raw file, or fills it with its ramp (ids i % 17, mask i % 2), and prints int64 and int32 outputs as integers."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [6])
    mask = helper.make_tensor_value_info("mask", TensorProto.BOOL, [6])
    picked = helper.make_tensor_value_info("picked", TensorProto.INT64, [6])
    narrow = helper.make_tensor_value_info("narrow", TensorProto.INT32, [6])
    nodes = [
        helper.make_node("Neg", ["ids"], ["negated"]),
        helper.make_node("Where", ["mask", "ids", "negated"], ["picked"]),
        helper.make_node("Cast", ["picked"], ["narrow"], to=TensorProto.INT32),
    ]
    graph = helper.make_graph(nodes, "select", [ids, mask], [picked, narrow])
    (tmp_path / "lib").mkdir()
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "select.onnx")
    assert cli_main(["build", str(tmp_path / "select.onnx"), "-o", str(tmp_path / "lib" / "libmodel.so")]) == 0
    assert '#define MODEL_INPUT_DTYPES {"int64", "bool"}' in (tmp_path / "lib" / "libmodel.h").read_text()
    executable = link_main(tmp_path / "lib")
    values = np.array([5, -7, 3_000_000_000, 0, 9, -1], np.int64)
    values.tofile(tmp_path / "ids.bin")
    np.array([1, 0, 1, 1, 0, 0], np.bool_).tofile(tmp_path / "mask.bin")
    weights = str(tmp_path / "lib" / "libmodel.weights")
    fed = subprocess.run(
        [str(executable), weights, str(tmp_path / "ids.bin"), str(tmp_path / "mask.bin")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    chosen = np.where([1, 0, 1, 1, 0, 0], values, -values)
    expected = [chosen, chosen.astype(np.int32)]
    assert fed == "".join(
        f"output {name} 6\n" + "".join(f"{v}\n" for v in out) for name, out in zip(["picked", "narrow"], expected)
    )
    ramp = subprocess.run([str(executable), weights], capture_output=True, text=True, check=True).stdout
    assert ramp.splitlines()[1:7] == ["0", "1", "-2", "3", "-4", "5"]
