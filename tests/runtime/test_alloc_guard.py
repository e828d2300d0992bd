"""Issue #54: a model whose intermediates need more memory than there is raises `AllocationError` (a MemoryError
naming the bytes) instead of running on a NULL buffer (a segfault): compiled, saved and loaded, at O0 (one buffer per
intermediate) as at O3 (one arena), from several threads; the guard leaves later runs as they were."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.runtime import AllocationError, load

ROWS, COLUMNS = 2**25, 2**24
"""2**49 float32 elements: an intermediate of 2**51 bytes, more than any machine's address space (2**47 or 2**56
bytes, but no allocator gives 2 PiB), so its allocation fails everywhere."""


def expanded_model(rows: int = ROWS, columns: int = COLUMNS) -> onnx.ModelProto:
    """y = sum(exp(e)) + max(exp(e)), e the [1, 1] input expanded to [rows, columns]: two reductions read exp(e),
    which therefore lives in memory, rows * columns float32."""
    nodes = [
        helper.make_node("Expand", ["x", "shape"], ["e"]),
        helper.make_node("Exp", ["e"], ["z"]),
        helper.make_node("ReduceSum", ["z"], ["total"], keepdims=0),
        helper.make_node("ReduceMax", ["z"], ["largest"], keepdims=0),
        helper.make_node("Add", ["total", "largest"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "expanded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array([rows, columns], np.int64), "shape")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


FEED = {"x": np.zeros((1, 1), np.float32)}


@pytest.fixture(scope="module")
def impossible() -> InferenceSession:
    return InferenceSession(expanded_model(), num_threads=2)


@pytest.fixture(scope="module")
def small() -> InferenceSession:
    return InferenceSession(expanded_model(100, 100), num_threads=2)


def test_run_raises_a_memory_error_naming_the_bytes(impossible: InferenceSession, small: InferenceSession) -> None:
    assert impossible.stats["arena_bytes"] >= 4 * ROWS * COLUMNS
    with pytest.raises(AllocationError, match=rf"could not allocate {impossible.stats['arena_bytes']} bytes") as error:
        impossible.run(None, FEED)
    assert isinstance(error.value, MemoryError) and error.value.size == impossible.stats["arena_bytes"]
    assert small.run(None, FEED)[0] == np.float32(100 * 100 + 1)  # exp(0) everywhere: the guard left nothing behind
    with pytest.raises(AllocationError):
        impossible.run(None, FEED)


def test_a_loaded_model_raises_too(impossible: InferenceSession, tmp_path: Path) -> None:
    impossible.save(tmp_path / "impossible.mlc")
    with pytest.raises(AllocationError, match="could not allocate"):
        load(tmp_path / "impossible.mlc", num_threads=1).run(None, FEED)


def test_one_allocation_per_intermediate_at_o0() -> None:
    session = InferenceSession(expanded_model(), opt_level=0, num_threads=1)
    assert session.stats["arena_bytes"] == 0
    with pytest.raises(AllocationError, match=f"could not allocate {4 * ROWS * COLUMNS} bytes"):
        session.run(None, FEED)


def test_failing_and_working_runs_from_several_threads(impossible: InferenceSession, small: InferenceSession) -> None:
    """Each thread's guarded call catches its own failures; the others' runs go on."""
    outcomes: list[str] = []

    def work(session: InferenceSession) -> None:
        for _ in range(20):
            try:
                outcomes.append(str(session.run(None, FEED)[0]))
            except AllocationError:
                outcomes.append("out of memory")

    threads = [threading.Thread(target=work, args=(session,)) for session in (impossible, small, impossible, small)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(outcomes)) == ["10001.0", "out of memory"]
    assert outcomes.count("out of memory") == 40
