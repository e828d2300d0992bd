"""`minimlc build` / `export_library` of a model with run-time dimensions (issue #46): one library serves every input
shape; its C API takes the inputs' shapes (`<prefix>_output_shapes` gives the outputs'), and checks them before native
code runs, with the Python runtime's rules and messages (`runtime/extents.py`)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.shared_library import export_library
from minimlc.frontend.onnx import import_model
from minimlc.tools.minimlc_cli import main as cli_main

CC = (os.environ.get("CC") or "cc").split()[0]
pytestmark = pytest.mark.skipif(shutil.which(CC) is None, reason=f"no C compiler ('{CC}') to link libraries with")

RUN_SHAPES = r"""/* Runs a library of float32 inputs and outputs at the shapes given on the command line, with one
 * loaded model for every run:
 *     run_shapes LIB.weights D,D,... X.f32 [D,D,... M.f32 ...] [D,D,... X.f32 ...]
 * one shape and raw float32 file per input, MODEL_NUM_INPUTS pairs per run; prints each run's status, and its
 * outputs' shapes and values, or the error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmodel.h"

static float *read_floats(const char *path, int64_t count) {
    float *data = malloc((size_t)(count > 0 ? count : 1) * sizeof *data);
    FILE *file = fopen(path, "rb");
    if (!data || !file || fread(data, sizeof *data, (size_t)count, file) != (size_t)count) exit(3);
    fclose(file);
    return data;
}

int main(int argc, char **argv) {
    static const int output_ndims[] = MODEL_OUTPUT_NDIMS;
    minimlc_model *model = model_load(argv[1], 2);
    if (!model) {
        printf("load: %s\n", model_last_error());
        return 1;
    }
    for (int arg = 2; arg < argc;) {
        minimlc_shape inputs[MODEL_NUM_INPUTS], outputs[MODEL_NUM_OUTPUTS];
        float *input_data[MODEL_NUM_INPUTS], *output_data[MODEL_NUM_OUTPUTS];
        for (int i = 0; i < MODEL_NUM_INPUTS; ++i, arg += 2) {
            inputs[i].dims = malloc(16 * sizeof(int64_t));
            inputs[i].ndim = 0;
            int64_t count = 1;
            for (char *size = strtok(argv[arg], ","); size; size = strtok(NULL, ","))
                count *= inputs[i].dims[inputs[i].ndim++] = strtoll(size, NULL, 10);
            input_data[i] = read_floats(argv[arg + 1], count);
        }
        for (int o = 0; o < MODEL_NUM_OUTPUTS; ++o)
            outputs[o] = (minimlc_shape){output_ndims[o], malloc(16 * sizeof(int64_t))};
        int status = model_output_shapes(model, inputs, outputs);
        for (int o = 0; status == 0 && o < MODEL_NUM_OUTPUTS; ++o) {
            int64_t count = 1;
            for (int axis = 0; axis < outputs[o].ndim; ++axis)
                count *= outputs[o].dims[axis];
            output_data[o] = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
        }
        if (status == 0)
            status = model_run_arrays(model, inputs, outputs, (const float *const *)input_data, output_data);
        printf("run status %d\n", status);
        if (status != 0)
            printf("error %s\n", model_last_error());
        for (int o = 0; status == 0 && o < MODEL_NUM_OUTPUTS; ++o) {
            int64_t count = 1;
            printf("output %d shape", o);
            for (int axis = 0; axis < outputs[o].ndim; ++axis) {
                printf(" %lld", (long long)outputs[o].dims[axis]);
                count *= outputs[o].dims[axis];
            }
            printf("\nvalues");
            for (int64_t k = 0; k < count; ++k)
                printf(" %.9g", output_data[o][k]);
            printf("\n");
        }
    }
    model_free(model);
    return 0;
}
"""


def batch_model() -> onnx.ModelProto:
    """x[batch, 16] -> Gemm -> Relu -> MatMul -> Softmax -> y[batch, 4]: one symbol."""
    rng = np.random.default_rng(3)
    weights = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
        for name, shape in (("w1", (16, 32)), ("b1", (32,)), ("w2", (32, 4)))
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["logits"]),
            helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
        ],
        "batch_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def two_symbol_model() -> onnx.ModelProto:
    """x[batch, sequence, 16] and mask[batch, sequence] share both symbols: y = softmax(x @ w + mask) [batch,
    sequence, 8], z = x summed over the sequence [batch, 16]."""
    w = numpy_helper.from_array(np.random.default_rng(4).standard_normal((16, 8)).astype(np.float32), "w")
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    sequence_axis = numpy_helper.from_array(np.array([1], np.int64), "sequence_axis")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"]),
            helper.make_node("Unsqueeze", ["mask", "axes"], ["mask3"]),
            helper.make_node("Add", ["xw", "mask3"], ["scores"]),
            helper.make_node("Softmax", ["scores"], ["y"], axis=-1),
            helper.make_node("ReduceSum", ["x", "sequence_axis"], ["z"], keepdims=0),
        ],
        "two_symbols",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 16]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "sequence"]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 8]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 16]),
        ],
        [w, axes, sequence_axis],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run_shapes(folder: Path, model: onnx.ModelProto, runs: list[dict[str, np.ndarray]]) -> str:
    """Link RUN_SHAPES against folder/libmodel.so and run it on `runs` (feeds by input name) in one process; its
    output."""
    (folder / "run_shapes.c").write_text(RUN_SHAPES)
    executable = folder / "run_shapes"
    subprocess.run(
        [CC, "-O2", "-Wall", "-Werror", f"-I{folder}", str(folder / "run_shapes.c"), f"-L{folder}", "-lmodel",
         f"-Wl,-rpath,{folder}", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    arguments: list[str] = []
    for index, feeds in enumerate(runs):
        for name, value in feeds.items():
            path = folder / f"{name}_{index}.f32"
            value.astype(np.float32).tofile(path)
            arguments += [",".join(map(str, value.shape)), str(path)]
    result = subprocess.run(
        [str(executable), str(folder / "libmodel.weights"), *arguments], capture_output=True, text=True, check=True
    )
    return result.stdout


def printed_outputs(stdout: str) -> list[list[np.ndarray]]:
    """The outputs RUN_SHAPES printed, per run."""
    runs: list[list[np.ndarray]] = []
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("run status"):
            assert line == "run status 0", lines[index + 1]
            runs.append([])
        elif line.startswith("output "):
            shape = tuple(int(size) for size in line.split()[3:])
            values = np.array(lines[index + 1].split()[1:], dtype=np.float32)
            runs[-1].append(values.reshape(shape))
    return runs


def test_a_library_with_a_symbolic_batch_runs_at_two_shapes(tmp_path: Path) -> None:
    """One library, one process, batch 3 then 1: the outputs are ONNX Runtime's (float32 rounding: rtol 1e-5,
    atol 1e-6) and bitwise the session's, which compiles the same code once."""
    model = batch_model()
    export_library(import_model(model, symbolic=True), tmp_path / "libmodel.so")
    header = (tmp_path / "libmodel.h").read_text()
    assert "/* input 'x': float32 [batch, 16], as float */" in header
    assert " *   batch: 0 or more */" in header
    assert "#define MODEL_INPUT_X_SHAPE {-1, 16}" in header
    assert "int model_output_shapes(minimlc_model *m, const minimlc_shape *input_shapes, const minimlc_shape " in header
    rng = np.random.default_rng(0)
    runs = [{"x": rng.standard_normal((batch, 16)).astype(np.float32)} for batch in (3, 1)]
    printed = printed_outputs(run_shapes(tmp_path, model, runs))
    reference = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    session = InferenceSession(model)
    assert session.stats["compiles"] == 1
    assert "symbolic_fallback" not in session.stats
    for feeds, (y,) in zip(runs, printed, strict=True):
        np.testing.assert_allclose(y, reference.run(None, feeds)[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(y, session.run(None, feeds)[0])
    lib = ctypes.CDLL(str(tmp_path / "libmodel.so"))
    lib.model_load.restype = ctypes.c_void_p
    lib.model_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(lib.model_load(str(tmp_path / "libmodel.weights").encode(), 1))
    try:  # unbounded, but no buffer has 2**67 bytes: its sizes would wrap in native code
        assert lib.model_output_shapes(handle, shapes((2**61, 16)), shapes((0, 0))) == 4
        assert lib.model_last_error() == (
            b"model_output_shapes: input 'x': shape (2305843009213693952, 16) is too large: its byte size overflows "
            b"64 bits"
        )
    finally:
        lib.model_free(handle)


@pytest.fixture(scope="module")
def two_symbols(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two-symbol model built by the CLI, with bounds: batch 1 to 4, sequence at most 6."""
    folder = tmp_path_factory.mktemp("two_symbols")
    onnx.save(two_symbol_model(), folder / "model.onnx")
    arguments = ["--input-bound", "batch=1:4", "--input-bound", "sequence=6"]
    assert cli_main(["build", str(folder / "model.onnx"), "-o", str(folder / "libmodel.so"), *arguments]) == 0
    return folder


def test_the_cli_builds_a_library_whose_inputs_share_two_symbols(two_symbols: Path) -> None:
    """Shapes (2, 5) and (4, 1) from one process; a zero-length sequence too (bounds allow it)."""
    header = (two_symbols / "libmodel.h").read_text()
    assert "/* input 'mask': float32 [batch, sequence], as float */" in header
    assert " *   batch: 1 to 4\n *   sequence: 0 to 6 */" in header
    assert "#define MODEL_SYMBOL_MAX {4, 6}" in header
    assert "/* output 'y': float32 [batch, sequence, 8], as float */" in header
    model = two_symbol_model()
    rng = np.random.default_rng(1)
    runs = [
        {"x": rng.standard_normal((b, s, 16)).astype(np.float32), "mask": rng.standard_normal((b, s))}
        for b, s in ((2, 5), (4, 1), (1, 0))
    ]
    printed = printed_outputs(run_shapes(two_symbols, model, runs))
    reference = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feeds, outputs in zip(runs, printed, strict=True):
        feeds = {name: value.astype(np.float32) for name, value in feeds.items()}
        for got, want in zip(outputs, reference.run(None, feeds), strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class Shape(ctypes.Structure):
    """`minimlc_shape`."""

    _fields_ = [("ndim", ctypes.c_int), ("dims", ctypes.POINTER(ctypes.c_int64))]


def shapes(*shapes: tuple[int, ...]) -> ctypes.Array[Shape]:
    """A `minimlc_shape` array of `shapes` (each one's sizes kept alive by the array)."""
    array = (Shape * len(shapes))()
    array.sizes = [(ctypes.c_int64 * max(len(shape), 1))(*shape) for shape in shapes]
    for entry, shape, sizes in zip(array, shapes, array.sizes):
        entry.ndim, entry.dims = len(shape), sizes
    return array


@pytest.fixture(scope="module")
def library(two_symbols: Path):
    """The two-symbol library loaded with ctypes, and its model."""
    library = ctypes.CDLL(str(two_symbols / "libmodel.so"))
    library.model_load.restype = ctypes.c_void_p
    library.model_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(library.model_load(str(two_symbols / "libmodel.weights").encode(), 1))
    assert handle.value, library.model_last_error()
    yield library, handle
    library.model_free(handle)


@pytest.mark.parametrize(
    ("x", "mask", "message"),
    [
        ((5, 2, 16), (5, 2), "input 'x' axis 0 is dimension 'batch' = 5, outside its bounds [1, 4] (input_bounds)"),
        ((0, 2, 16), (0, 2), "input 'x' axis 0 is dimension 'batch' = 0, outside its bounds [1, 4] (input_bounds)"),
        ((2, 7, 16), (2, 7), "input 'x' axis 1 is dimension 'sequence' = 7, outside its bounds [0, 6] (input_bounds)"),
        (
            (2, 3, 16),
            (2, 4),
            "input 'mask' axis 1 is dimension 'sequence' = 4, but input 'x' axis 1 gave it 3: inputs that share a "
            "dimension must agree",
        ),
        ((2, -3, 16), (2, -3), "input 'x' axis 1 is dimension 'sequence' = -3: a size cannot be negative"),
        ((2, 3), (2, 3), "input 'x': expected rank 3 [batch, sequence, 16], got shape (2, 3)"),
        ((2, 3, 8), (2, 3), "input 'x' axis 2: expected size 16 [batch, sequence, 16], got 8"),
        ((2, 3, 16), (6,), "input 'mask': expected rank 2 [batch, sequence], got shape (6,)"),
    ],
)
def test_shapes_the_model_does_not_take_are_refused_before_native_code_runs(
    library, x: tuple[int, ...], mask: tuple[int, ...], message: str
) -> None:
    """Both calls return 4 with the Python runtime's message under their name; `run` is given NULL buffers, so it
    fails if it ever reaches native code."""
    lib, handle = library
    outputs = shapes((0, 0, 8), (0, 16))
    assert lib.model_output_shapes(handle, shapes(x, mask), outputs) == 4
    assert lib.model_last_error().decode() == f"model_output_shapes: {message}"
    assert lib.model_run(handle, shapes(x, mask), outputs, None, None, None, None) == 4
    assert lib.model_last_error().decode() == f"model_run: {message}"


def test_a_run_checks_its_output_shapes_against_the_inputs(library) -> None:
    """`output_shapes` writes the outputs' shapes; `run` refuses output shapes other than those (its buffers could be
    too small) and NULL shape arrays; with the right ones, it computes what ONNX Runtime does (rtol 1e-5)."""
    lib, handle = library
    inputs, outputs = shapes((3, 2, 16), (3, 2)), shapes((0, 0, 0), (0, 0))
    assert lib.model_output_shapes(handle, inputs, outputs) == 0
    assert [list(entry.dims[: entry.ndim]) for entry in outputs] == [[3, 2, 8], [3, 16]]
    rng = np.random.default_rng(2)
    x, mask = rng.standard_normal((3, 2, 16)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    y, z = np.zeros((3, 2, 8), np.float32), np.zeros((3, 16), np.float32)
    pointers = [array.ctypes.data_as(ctypes.c_void_p) for array in (x, mask, y, z)]
    assert lib.model_run(handle, inputs, shapes((3, 2, 8), (3, 15)), *pointers) == 4
    assert lib.model_last_error().decode() == (
        "model_run: output 'z': expected shape (3, 16) for these inputs (as model_output_shapes gives), got shape "
        "(3, 15)"
    )
    assert lib.model_output_shapes(handle, inputs, shapes((3, 2, 8), (3,))) == 4
    assert lib.model_last_error().decode() == (
        "model_output_shapes: output 'z': its shape has rank 1, the output's is 2 [batch, 16]"
    )
    assert lib.model_run(handle, None, outputs, *pointers) == 1
    assert lib.model_last_error().decode() == "model_run: input_shapes is NULL"
    assert not y.any()
    assert lib.model_run(handle, inputs, outputs, *pointers) == 0
    reference = onnxruntime.InferenceSession(two_symbol_model().SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip((y, z), reference.run(None, {"x": x, "mask": mask}), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bad_input_bounds_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`input_bounds` as `InferenceSession` takes them: a symbol of the model, 0 <= smallest <= largest."""
    with pytest.raises(ValueError, match=r"input_bounds: 'length' is not a dimension of the model's inputs"):
        export_library(import_model(batch_model(), symbolic=True), tmp_path / "libmodel.so", input_bounds={"length": 4})
    onnx.save(batch_model(), tmp_path / "model.onnx")
    command = ["build", str(tmp_path / "model.onnx"), "-o", str(tmp_path / "lib.so"), "--input-bound", "batch=4:2"]
    assert cli_main(command) == 1
    error = capsys.readouterr().err
    assert "--input-bound: 'batch' has bound (4, 2); give its largest size or (smallest, largest)" in error
    assert not (tmp_path / "lib.so").exists()


def test_a_dynamic_gather_keeps_its_index_check(tmp_path: Path) -> None:
    """int64 ids[n] -> rows[n, 2]: the run takes the shapes and still checks the indices (2, the Gather's message);
    indices in range give the session's rows at two lengths."""
    table = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed")],
        "gather",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["n", 2])],
        [table],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    export_library(import_model(model, symbolic=True), tmp_path / "libmodel.so", input_bounds={"n": (1, 16)})
    header = (tmp_path / "libmodel.h").read_text()
    assert "const void *const *inputs, void *const *outputs);" in header
    assert "int model_run(minimlc_model *m, const minimlc_shape *input_shapes, const minimlc_shape *output_shapes,\n" \
        "    const int64_t *ids, float *rows);" in header  # fmt: skip
    lib = ctypes.CDLL(str(tmp_path / "libmodel.so"))
    lib.model_load.restype = ctypes.c_void_p
    lib.model_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(lib.model_load(str(tmp_path / "libmodel.weights").encode(), 1))
    session = InferenceSession(model)
    try:
        for ids, status in (([3, -4, 0], 0), ([1, 2, 0, -1, 3], 0), ([0, 4], 2)):
            ids = np.array(ids, np.int64)
            rows = np.zeros((len(ids), 2), np.float32)
            pointers = (ids.ctypes.data_as(ctypes.c_void_p), rows.ctypes.data_as(ctypes.c_void_p))
            assert lib.model_run(handle, shapes(ids.shape), shapes(rows.shape), *pointers) == status
            if status == 0:
                np.testing.assert_array_equal(rows, session.run(None, {"ids": ids})[0])
        assert b"'embed' (Gather): indices must lie in [-4, 4)" in lib.model_last_error()
    finally:
        lib.model_free(handle)
