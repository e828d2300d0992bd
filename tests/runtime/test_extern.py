"""External functions (`register_func`, `graph.call_extern`): called from compiled code through a function pointer
bound at load time, Python callables with numpy views, C function pointers with a declared signature."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.frontend.onnx import ImportedModel, TensorInfo
from minimlc.lowering.pipeline import make_context
from minimlc.runtime import load
from minimlc.runtime.extern import EXTERN_FUNCTION, ExternalFunctionError, register_func, remove_func

F32 = np.dtype(np.float32)

GRAPH = """
func.func @main(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = graph.call_extern "test.linear" (%x, %w) : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %r = graph.relu %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
"""


def imported(text: str = GRAPH) -> ImportedModel:
    return ImportedModel(
        Parser(make_context(), text).parse_module(),
        {},
        [TensorInfo("x", (2, 8), F32), TensorInfo("w", (4, 8), F32)],
        [TensorInfo("y", (2, 4), F32)],
    )


@pytest.fixture
def feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((2, 8)).astype(F32), "w": rng.standard_normal((4, 8)).astype(F32)}


@pytest.fixture(autouse=True)
def _unregister():
    yield
    remove_func("test.linear")


def linear(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    np.matmul(x, w.T, out=out)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_python_function_is_called_destination_passing(opt_level: int, feeds: dict[str, np.ndarray]) -> None:
    seen: list[tuple[tuple[int, ...], ...]] = []

    def recording(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
        seen.append((x.shape, w.shape, out.shape))
        linear(x, w, out)

    register_func("test.linear", recording)
    session = InferenceSession.from_imported(imported(), opt_level=opt_level)
    (y,) = session.run(None, feeds)
    np.testing.assert_allclose(y, np.maximum(feeds["x"] @ feeds["w"].T, 0), rtol=1e-5, atol=1e-6)
    assert seen == [((2, 8), (4, 8), (2, 4))]


def test_unregistered_function_is_refused_before_compiling() -> None:
    with pytest.raises(ExternalFunctionError, match="no external function registered as 'test.linear'"):
        InferenceSession.from_imported(imported())


def test_exception_in_callback_is_reraised_by_run(feeds: dict[str, np.ndarray]) -> None:
    def failing(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
        raise KeyError("no such layer")

    register_func("test.linear", failing)
    session = InferenceSession.from_imported(imported())
    with pytest.raises(KeyError, match="no such layer"):
        session.run(None, feeds)
    register_func("test.linear", linear)
    with pytest.raises(KeyError, match="no such layer"):  # the session keeps the function it was bound to
        session.run(None, feeds)
    (y,) = InferenceSession.from_imported(imported()).run(None, feeds)  # and the error did not leak into the next
    np.testing.assert_allclose(y, np.maximum(feeds["x"] @ feeds["w"].T, 0), rtol=1e-5, atol=1e-6)


def test_c_function_pointer_needs_and_checks_a_signature(feeds: dict[str, np.ndarray]) -> None:
    calls: list[int] = []

    def native(buffers: ctypes.Array[ctypes.c_void_p]) -> int:  # a C-ABI function (here made by ctypes)
        x, w, out = (
            np.ctypeslib.as_array(ctypes.cast(buffers[i], ctypes.POINTER(ctypes.c_float)), shape=shape)
            for i, shape in enumerate([(2, 8), (4, 8), (2, 4)])
        )
        linear(x, w, out)
        calls.append(1)
        return 0

    pointer = EXTERN_FUNCTION(native)
    with pytest.raises(ValueError, match="C function 'test.linear' needs signature="):
        register_func("test.linear", pointer)
    register_func("test.linear", pointer, signature=[((2, 8), F32), ((4, 9), F32), ((2, 4), F32)])
    with pytest.raises(ExternalFunctionError, match=r"declared for buffers \(float32\[2, 8\], float32\[4, 9\]"):
        InferenceSession.from_imported(imported())
    register_func("test.linear", pointer, signature=[((2, 8), F32), ((4, 8), F32), ((2, 4), F32)])
    (y,) = InferenceSession.from_imported(imported()).run(None, feeds)
    np.testing.assert_allclose(y, np.maximum(feeds["x"] @ feeds["w"].T, 0), rtol=1e-5, atol=1e-6)
    assert calls == [1]


def test_saved_model_binds_its_functions_again_by_name(tmp_path: Path, feeds: dict[str, np.ndarray]) -> None:
    register_func("test.linear", linear)
    InferenceSession.from_imported(imported()).save(tmp_path / "model.mlc")
    remove_func("test.linear")
    with pytest.raises(ExternalFunctionError, match="no external function registered as 'test.linear'"):
        load(tmp_path / "model.mlc")
    register_func("test.linear", lambda x, w, out: linear(2 * x, w, out))
    (y,) = load(tmp_path / "model.mlc").run(None, feeds)
    np.testing.assert_allclose(y, np.maximum(2 * feeds["x"] @ feeds["w"].T, 0), rtol=1e-5, atol=1e-5)


def test_failing_c_function_is_reported_by_run(feeds: dict[str, np.ndarray]) -> None:
    pointer = EXTERN_FUNCTION(lambda buffers: 7)
    register_func("test.linear", pointer, signature=[((2, 8), F32), ((4, 8), F32), ((2, 4), F32)])
    session = InferenceSession.from_imported(imported())
    with pytest.raises(ExternalFunctionError, match="external function 'test.linear' failed: it returned 7"):
        session.run(None, feeds)


def test_shared_library_refuses_external_calls(tmp_path: Path) -> None:
    from minimlc.driver.shared_library import export_library

    with pytest.raises(ValueError, match=r"calls external functions \(test.linear\)"):
        export_library(imported(), tmp_path / "libmodel.so")


def test_python_function_on_torch_tensors_writes_the_output_in_place(feeds: dict[str, np.ndarray]) -> None:
    """`tensors="torch"`: the function gets torch tensors over the buffers (the seed's torch.mm with out=), so what
    it writes into `out` is the call's result, without a copy."""
    torch = pytest.importorskip("torch")
    seen: list[str] = []

    def torch_linear(x, w, out) -> None:
        seen.append(type(out).__name__)
        torch.mm(x, w.T, out=out)

    register_func("test.linear", torch_linear, tensors="torch")
    (y,) = InferenceSession.from_imported(imported()).run(None, feeds)
    np.testing.assert_allclose(y, np.maximum(feeds["x"] @ feeds["w"].T, 0), rtol=1e-5, atol=1e-6)
    assert seen == ["Tensor"]
    with pytest.raises(ValueError, match="tensors='jax'; 'numpy' or 'torch'"):
        register_func("test.linear", torch_linear, tensors="jax")
