"""Input dimensions spelled as expressions of other symbols (`attention_mask [batch, past + sequence]`, as Optimum and
the dynamo exporter declare a cache's mask) and ranges from a symbolic start (`arange(past, past + sequence)`, a
cache position): compiled once, the expression checked against every feed before native code runs."""

from __future__ import annotations

import contextlib
import ctypes
import shutil
from collections.abc import Iterator

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx_symbolic_dims import Dim, derived_dim
from minimlc.runtime import InvalidInputError


def _grown_model() -> bytes:
    """out = Concat(past, new, axis 1) + mask, positions = Range(past, past + new): the mask declared
    [batch, past + new], the Range's start the past's length."""

    def length(name: str, tensor: str) -> list[helper.NodeProto]:
        return [
            helper.make_node("Shape", [tensor], [f"{name}.shape"], start=1, end=2),
            helper.make_node("Squeeze", [f"{name}.shape"], [name]),
        ]

    nodes = [
        helper.make_node("Concat", ["past", "new"], ["grown"], axis=1),
        helper.make_node("Add", ["grown", "mask"], ["out"]),
        *length("past_length", "past"),
        *length("new_length", "new"),
        helper.make_node("Add", ["past_length", "new_length"], ["end"]),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.INT64, [], [1])),
        helper.make_node("Range", ["past_length", "end", "one"], ["positions"]),
    ]
    graph = helper.make_graph(
        nodes,
        "grown",
        [
            helper.make_tensor_value_info("past", TensorProto.FLOAT, ["batch", "past"]),
            helper.make_tensor_value_info("new", TensorProto.FLOAT, ["batch", "new"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "past + new"]),
        ],
        [
            helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "past + new"]),
            helper.make_tensor_value_info("positions", TensorProto.INT64, ["new"]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8).SerializeToString()


@pytest.fixture(scope="module")
def sessions() -> tuple[InferenceSession, ort.InferenceSession]:
    model = _grown_model()
    return InferenceSession(model, num_threads=1), ort.InferenceSession(model)


def test_derived_dim_parses_sums_and_products_of_known_symbols_only():
    assert derived_dim("past + new", {"past", "new"}) == Dim.symbol("past") + Dim.symbol("new")
    assert derived_dim("2*batch - 1", {"batch"}) == Dim.symbol("batch") * 2 - 1
    assert derived_dim("past", {"past"}) is None  # a symbol of its own
    assert derived_dim("past + other", {"past"}) is None  # `other` is no input's symbol
    assert derived_dim("past / 2", {"past"}) is None
    assert derived_dim("past +", {"past"}) is None


@pytest.mark.parametrize(("batch", "past", "new"), [(1, 0, 4), (2, 5, 1), (3, 7, 3)])
def test_compiled_once_for_every_past_and_new_length(sessions, batch: int, past: int, new: int):
    session, oracle = sessions
    rng = np.random.default_rng(past)
    feed = {
        "past": rng.standard_normal((batch, past)).astype(np.float32),
        "new": rng.standard_normal((batch, new)).astype(np.float32),
        "mask": rng.standard_normal((batch, past + new)).astype(np.float32),
    }
    ours, theirs = session.run(None, feed), oracle.run(None, feed)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])  # [past, past + new)
    assert session.stats["compiles"] == 1
    assert "symbolic_fallback" not in session.stats


def test_a_feed_that_breaks_the_expression_is_refused_before_native_code(sessions):
    session, _ = sessions
    feed = {
        "past": np.zeros((1, 3), np.float32),
        "new": np.zeros((1, 2), np.float32),
        "mask": np.zeros((1, 4), np.float32),  # 3 + 2 = 5 expected: reading it would overrun
    }
    with pytest.raises(InvalidInputError, match=r"input 'mask' axis 1 is dimension 'new \+ past' = 5, .* size 4"):
        session.run(None, feed)


def test_a_saved_model_keeps_the_check(sessions, tmp_path):
    from minimlc.runtime import load

    session, _ = sessions
    session.save(tmp_path / "grown.mlc")
    loaded = load(tmp_path / "grown.mlc")
    feed = {
        "past": np.ones((1, 2), np.float32),
        "new": np.ones((1, 1), np.float32),
        "mask": np.ones((1, 3), np.float32),
    }
    np.testing.assert_array_equal(loaded.run(None, feed)[0], np.full((1, 3), 2.0, np.float32))
    with pytest.raises(InvalidInputError, match=r"'new \+ past' = 3"):
        loaded.run(None, {**feed, "mask": np.ones((1, 2), np.float32)})


def test_a_c_library_checks_derived_dims_and_runs_at_every_length(tmp_path, sessions):
    """The library binds `new + past` from the mask like a symbol, then checks it against past + new before native
    code runs (the Python runtime's message, under the function's name); with shapes that agree it gives ONNX
    Runtime's outputs. `run` is given NULL buffers where it must refuse, so reaching native code would crash."""
    from test_shared_library_dynamic import shapes

    with _c_library(_grown_model(), tmp_path, "grown") as (library, handle):
        outputs = shapes((0, 0), (0,))
        assert library.grown_run(handle, shapes((1, 3), (1, 2), (1, 4)), outputs, None, None, None, None, None) == 4
        assert library.grown_last_error().decode() == (
            "grown_run: input 'mask' axis 1 is dimension 'new + past' = 5, but the feed has size 4"
        )
        _, oracle = sessions
        for past, new in ((0, 4), (5, 1)):
            rng = np.random.default_rng(past)
            feed = {
                "past": rng.standard_normal((2, past)).astype(np.float32),
                "new": rng.standard_normal((2, new)).astype(np.float32),
                "mask": rng.standard_normal((2, past + new)).astype(np.float32),
            }
            inputs = shapes(*(value.shape for value in feed.values()))
            assert library.grown_output_shapes(handle, inputs, outputs) == 0
            out, positions = np.zeros((2, past + new), np.float32), np.zeros(new, np.int64)
            pointers = [array.ctypes.data_as(ctypes.c_void_p) for array in (*feed.values(), out, positions)]
            assert library.grown_run(handle, inputs, shapes(out.shape, positions.shape), *pointers) == 0
            want = oracle.run(None, feed)
            np.testing.assert_array_equal(out, want[0])
            np.testing.assert_array_equal(positions, want[1])


def test_a_c_library_refuses_a_product_dim_that_overflows(tmp_path):
    """`x*y` at x = y = 2^32 is 2^64: refused as an overflow, never wrapped around to a size that might match."""
    from test_shared_library_dynamic import shapes

    graph = helper.make_graph(
        [helper.make_node("Neg", ["m"], ["out"])],
        "product",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["x"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["y"]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, ["x*y"]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["x*y"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with _c_library(model.SerializeToString(), tmp_path, "p") as (library, handle):
        inputs = shapes((1 << 32,), (1 << 32,), (0,))
        assert library.p_run(handle, inputs, shapes((0,)), None, None, None, None) == 4
        assert library.p_last_error().decode() == (
            "p_run: input 'm' axis 0 is dimension 'x*y', whose value overflows 64 bits for these inputs"
        )
        assert library.p_output_shapes(handle, shapes((3,), (5,), (14,)), shapes((0,))) == 4
        assert library.p_last_error().decode() == (
            "p_output_shapes: input 'm' axis 0 is dimension 'x*y' = 15, but the feed has size 14"
        )


@contextlib.contextmanager
def _c_library(model: bytes, folder, prefix: str) -> Iterator[tuple[ctypes.CDLL, ctypes.c_void_p]]:
    """`model` (symbolic dimensions kept) built into folder/lib<prefix>.so, loaded with ctypes: the library and a
    loaded model, freed after the block."""
    from minimlc.driver.shared_library import export_library
    from minimlc.frontend.onnx import import_model

    if shutil.which("cc") is None:
        pytest.skip("no C compiler to link the library with")
    export_library(import_model(model, symbolic=True), folder / f"lib{prefix}.so", prefix=prefix)
    library = ctypes.CDLL(str(folder / f"lib{prefix}.so"))
    getattr(library, f"{prefix}_load").restype = ctypes.c_void_p
    getattr(library, f"{prefix}_last_error").restype = ctypes.c_char_p
    handle = ctypes.c_void_p(getattr(library, f"{prefix}_load")(str(folder / f"lib{prefix}.weights").encode(), 1))
    assert handle.value, getattr(library, f"{prefix}_last_error")()
    try:
        yield library, handle
    finally:
        getattr(library, f"{prefix}_free")(handle)
