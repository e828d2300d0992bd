"""Issue #54: a model whose intermediates need more memory than there is raises `AllocationError` (a MemoryError
naming the bytes) instead of running on a NULL buffer (a segfault): compiled, saved and loaded, at O0 (one buffer per
intermediate) as at O3 (one arena), from several threads; the guard leaves later runs as they were."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from model_builder import UNALLOCATABLE_COLUMNS, UNALLOCATABLE_ROWS, expanded_exp_model

from minimlc import InferenceSession
from minimlc.runtime import AllocationError, load

ROWS, COLUMNS = UNALLOCATABLE_ROWS, UNALLOCATABLE_COLUMNS


FEED = {"x": np.zeros((1, 1), np.float32)}


@pytest.fixture(scope="module")
def impossible() -> InferenceSession:
    return InferenceSession(expanded_exp_model(), num_threads=2)


@pytest.fixture(scope="module")
def small() -> InferenceSession:
    return InferenceSession(expanded_exp_model(100, 100), num_threads=2)


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
    session = InferenceSession(expanded_exp_model(), opt_level=0, num_threads=1)
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
