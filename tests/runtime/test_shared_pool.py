"""Issue #54: sessions share one thread pool per thread count (200 live sessions held 202 threads, a pool each):
many sessions hold one pool's workers per thread count, run right alone and at once from several threads (a run that
finds the pool busy runs its loops on its own thread), count their own tasks, and the workers leave with the last
session."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import numpy as np
import pytest
from test_artifact import conv_model, feed
from test_threadpool import assert_threads_exit, pool_workers

from minimlc import InferenceSession
from minimlc.runtime import Session, load


@pytest.fixture(scope="module")
def compiled() -> InferenceSession:
    return InferenceSession(conv_model(), num_threads=1)


def test_many_sessions_share_one_pool_per_thread_count(compiled: InferenceSession, tmp_path: Path) -> None:
    assert compiled.task_counts() == [0]  # a one-thread pool: no worker, nothing dispatched
    compiled.save(tmp_path / "conv.mlc")
    before = pool_workers()
    sessions: list[Session] = [compiled.with_num_threads(threads) for threads in (2, 3) * 90]
    sessions += [load(tmp_path / "conv.mlc", num_threads=threads) for threads in (2, 3) * 10]
    workers = pool_workers() - before
    assert len(workers) <= 1 + 2, f"{len(workers)} pool workers for 200 sessions of 2 and 3 threads"
    (expected,) = compiled.run(["y"], feed())
    outputs: list[np.ndarray] = []

    def run_all(chunk: list[Session]) -> None:
        outputs.extend(session.run(["y"], feed())[0] for session in chunk)

    callers = [threading.Thread(target=run_all, args=(sessions[i::4],)) for i in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(outputs) == len(sessions)
    for output in outputs:
        np.testing.assert_array_equal(output, expected)
    assert pool_workers() - before == workers, "runs must not start threads"
    sessions.clear()  # the last references to the pools: their workers are joined
    gc.collect()
    assert_threads_exit(workers)


def test_task_counts_start_with_the_session(compiled: InferenceSession) -> None:
    first = compiled.with_num_threads(2)
    for _ in range(5):
        first.run(None, feed())
    ran = sum(first.task_counts())
    assert ran > 0
    second = compiled.with_num_threads(2)  # the same pool: its counts start at zero
    assert second.task_counts() == [0, 0]
    second.run(None, feed())
    assert 0 < sum(second.task_counts()) == sum(first.task_counts()) - ran
