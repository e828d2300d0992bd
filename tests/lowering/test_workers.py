"""`lowering/workers.py`: work on forked processes, results in order, failures raised here."""

from __future__ import annotations

import os
import signal

import pytest

from minimlc.lowering.workers import WorkerError, fork_map


def test_results_come_back_in_order_and_only_the_first_item_runs_here() -> None:
    parent = os.getpid()
    results = fork_map(lambda n: (n * n, os.getpid() == parent), [1, 2, 3, 4])
    assert [square for square, _ in results] == [1, 4, 9, 16]
    assert [here for _, here in results] == [True, False, False, False]


def test_an_exception_in_a_child_is_raised_with_its_traceback_as_cause() -> None:
    def check(n: int) -> int:
        if n == 3:
            raise ValueError(f"item {n} is bad")
        return n

    with pytest.raises(ValueError, match="item 3 is bad") as raised:
        fork_map(check, [1, 2, 3], describe=lambda n: f"item {n}")
    assert "in the worker process for item 3" in str(raised.value.__cause__)
    assert "raise ValueError" in str(raised.value.__cause__)


def test_a_child_that_dies_is_a_worker_error() -> None:
    def die(n: int) -> int:
        if n == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    with pytest.raises(WorkerError, match="the worker process for item 2 failed: it was killed by signal 9"):
        fork_map(die, [1, 2], describe=lambda n: f"item {n}")


def test_without_fork_everything_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    parent = os.getpid()
    assert fork_map(lambda n: os.getpid() == parent, [1, 2, 3]) == [True, True, True]


def test_a_compile_raises_the_collectors_thresholds_until_the_last_one_ends() -> None:
    """Compiles in two threads: the thresholds stay raised while either runs, and the process's own come back after
    the last (a compile that fails included)."""
    import gc
    import threading

    from minimlc.lowering.workers import COMPILE_GC_THRESHOLDS, fewer_collections

    own = (900, 11, 12)
    saved = gc.get_threshold()
    gc.set_threshold(*own)
    try:
        started, release = threading.Event(), threading.Event()

        def other_compile() -> None:
            with fewer_collections():
                started.set()
                release.wait(10)

        thread = threading.Thread(target=other_compile)
        thread.start()
        assert started.wait(10)

        def failing_compile() -> None:
            with fewer_collections():
                assert gc.get_threshold() == COMPILE_GC_THRESHOLDS
                raise RuntimeError("a failed compile")

        with pytest.raises(RuntimeError):
            failing_compile()
        assert gc.get_threshold() == COMPILE_GC_THRESHOLDS  # the other thread's compile still runs
        release.set()
        thread.join()
        assert gc.get_threshold() == own
    finally:
        gc.set_threshold(*saved)


def test_without_here_every_item_runs_in_a_child_that_never_collects_garbage() -> None:
    import gc

    from minimlc.lowering.workers import in_worker

    parent = os.getpid()
    results = fork_map(lambda n: (n, os.getpid() != parent, in_worker(), gc.isenabled()), [7], here=False)
    assert results == [(7, True, True, False)]
    assert not in_worker() and gc.isenabled()


def test_events_reach_the_parent_in_order_before_the_result() -> None:
    from minimlc.lowering.workers import send_event

    seen: list[object] = []

    def work(n: int) -> int:
        send_event(("started", n))
        send_event(("half", n))
        seen.append("in the child only")
        return n * 10

    assert fork_map(work, [1, 2], here=False, on_event=seen.append) == [10, 20]
    assert seen == [("started", 1), ("half", 1), ("started", 2), ("half", 2)]
    with pytest.raises(RuntimeError, match="fork_map worker only"):
        send_event("here")


def test_a_childs_warnings_are_raised_again_in_the_parent() -> None:
    import warnings

    def warn(n: int) -> int:
        warnings.warn(f"item {n} looks odd", RuntimeWarning)
        return n

    with pytest.warns(RuntimeWarning, match="looks odd") as caught:
        assert fork_map(warn, [1, 2]) == [1, 2]
    assert sorted(str(warning.message) for warning in caught) == ["item 1 looks odd", "item 2 looks odd"]


class _NeedsTwoArguments(Exception):
    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} and {second}")


def test_an_exception_that_does_not_unpickle_comes_back_as_its_traceback() -> None:
    def fail(n: int) -> int:
        raise _NeedsTwoArguments("this", "that")

    with pytest.raises(RuntimeError, match="in the worker process for 1:(.|\n)*_NeedsTwoArguments: this and that"):
        fork_map(fail, [1], here=False)
