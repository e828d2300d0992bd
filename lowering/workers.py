"""Compile work on every core: independent pieces run at once in forked worker processes.

    results = fork_map(lambda share: [compile(item) for item in share], shares)
    # shares[0] runs in this process; shares[1:] each in a forked child, at the same time

Children inherit the IR as it is (no serialisation) and send back only their result, pickled: they are our own
processes, forked from this one, so their replies are as trusted as this process's memory. A child never collects
garbage (what it allocates goes when it exits), may report progress before its result (`send_event`), and its
warnings are raised again here. An exception in a child is raised here, the child's traceback as its cause; a child
that dies gives a `WorkerError` naming its share. Where there is no `os.fork`, every share runs here, one after the
other. `compile_jobs()` is the number of processes to use:
`$MINIMLC_COMPILE_JOBS`, else one per core.

Used by the driver (a session's compile in a child of its own, code generation's partitions): it sits in lowering,
the lower of the two rooms.

`fewer_collections()` raises the garbage collector's thresholds while a compile runs: lowering builds and drops
hundreds of thousands of small IR objects, and at Python's default (a young collection every 700 allocations) the
collector took 12-20% of a light ResNet-50's compile CPU.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class WorkerError(RuntimeError):
    """A worker process died before replying (killed, out of memory, a crash in native code)."""


class CompileJobsError(ValueError):
    """`$MINIMLC_COMPILE_JOBS` is set to something other than a positive integer."""


def compile_jobs() -> int:
    """Processes to compile with: `$MINIMLC_COMPILE_JOBS`, else one per core this process may run on; raises
    `CompileJobsError` (a ValueError) for a setting that is not a positive integer:

        MINIMLC_COMPILE_JOBS=4 -> 4; unset or empty -> one per core; 0 or abc -> CompileJobsError
    """
    configured = os.environ.get("MINIMLC_COMPILE_JOBS", "").strip()
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise CompileJobsError(
                f"MINIMLC_COMPILE_JOBS must be a positive integer, got '{configured}' (the number of compile "
                "processes; unset: one per core)"
            )
        return int(configured)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def fork_map(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    describe: Callable[[Item], str] = str,
    *,
    here: bool = True,
    on_event: Callable[[object], None] | None = None,
) -> list[Result]:
    """`[function(item) for item in items]`, computed at once: `items[0]` here (with `here`; else in a child too),
    each other item in a forked child. `describe(item)` names an item in the error of a child that died. What a
    child passes to `send_event` reaches `on_event` here, in order, before its result."""
    if not hasattr(os, "fork") or (here and len(items) <= 1):
        return [function(item) for item in items]
    children = [_fork(function, item) for item in (items[1:] if here else items)]
    try:
        first = [function(items[0])] if here else []
    except BaseException:
        for pid, reader in children:
            _kill(pid, reader)
        raise
    forked = items[1:] if here else items
    replies = [
        _collect(pid, reader, describe(item), on_event) for (pid, reader), item in zip(children, forked, strict=True)
    ]
    results = first
    for ok, value in replies:  # every child reaped before the first failure is raised
        if not ok:
            raise value
        results.append(value)
    return results


def in_worker() -> bool:
    """Whether this process is a worker `fork_map` forked (whose garbage goes when it exits)."""
    return _to_parent is not None


def send_event(event: object) -> None:
    """In a worker: pass `event` (picklable) to the `on_event` of the `fork_map` that forked it, at once."""
    if _to_parent is None:
        raise RuntimeError("send_event is called in a fork_map worker only")
    pickle.dump((_EVENT, event), _to_parent)
    _to_parent.flush()


_EVENT, _REPLY = "event", "reply"
_to_parent: BinaryIO | None = None
"""In a worker, the pipe to the process that forked it: events, then one reply."""


def _fork(function: Callable[[Item], Result], item: Item) -> tuple[int, int]:
    global _to_parent
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns when a process with threads forks (execnet's, a thread pool's): the child runs only
        # this function, which takes no lock those threads could hold, and leaves with os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: compute, reply, and exit without running the parent's clean-up
        os.close(reader)
        # Everything the child allocates goes when it exits: collecting its garbage (the IR it builds and drops,
        # tens of thousands of cyclic objects) would only delay its reply.
        gc.disable()
        try:
            with os.fdopen(writer, "wb") as pipe:
                _to_parent = pipe
                pipe.write(_reply(function, item))
        finally:
            os._exit(0)
    os.close(writer)
    return pid, reader


def _reply(function: Callable[[Item], Result], item: Item) -> bytes:
    """The child's reply: (True, the result) or (False, (the exception or None, its traceback)), and the warnings
    it raised, which the parent raises again (its filters decide)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple[bool, object] = (True, function(item))
        except Exception as error:  # sent to the parent, which raises it
            outcome = (False, (error, traceback.format_exc()))
    raised = [(str(warning.message), warning.category) for warning in caught]
    try:
        reply = pickle.dumps((_REPLY, (outcome, raised)))
        if not outcome[0]:
            pickle.loads(reply)  # an exception that does not come back whole comes back as its traceback
        return reply
    except Exception:
        text = traceback.format_exc() if outcome[0] else outcome[1][1]  # type: ignore[index]
        return pickle.dumps((_REPLY, ((False, (None, text)), raised)))


def _kill(pid: int, reader: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.close(reader)
    os.waitpid(pid, 0)


def _collect(pid: int, reader: int, share: str, on_event: Callable[[object], None] | None) -> tuple[bool, object]:
    """(True, the child's result), or (False, the exception to raise for it); its events passed to `on_event`."""
    reply = None
    with os.fdopen(reader, "rb") as pipe:
        try:
            while reply is None:
                kind, payload = pickle.load(pipe)
                if kind == _REPLY:
                    reply = payload
                elif on_event is not None:
                    on_event(payload)
        except (EOFError, pickle.UnpicklingError, ValueError, TypeError):
            pass  # the child died mid-message
        except BaseException:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
    _, status = os.waitpid(pid, 0)
    if reply is None:
        how = f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exited without replying"
        return False, WorkerError(f"the worker process for {share} failed: it was {how}")
    (ok, value), raised = reply
    for message, category in raised:
        warnings.warn(message, category, stacklevel=3)
    if ok:
        return True, value
    error, text = value
    cause = RuntimeError(f"in the worker process for {share}:\n{text}")
    if isinstance(error, Exception):
        error.__cause__ = cause
        return False, error
    return False, cause


COMPILE_GC_THRESHOLDS = (50_000, 20, 100)
"""The collector's thresholds during a compile (`gc.set_threshold`): a young collection every 50,000 allocations
(Python's default: 700), older generations as rarely; cyclic garbage still goes, a few MB at most between passes."""
_collector_lock = threading.Lock()
_compiles_running = 0
_saved_thresholds: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with `COMPILE_GC_THRESHOLDS`, restoring the process's own thresholds when the last compile
    running in it (of any thread) ends; forked workers inherit them."""
    global _compiles_running, _saved_thresholds
    with _collector_lock:
        if _compiles_running == 0:
            _saved_thresholds = gc.get_threshold()
            gc.set_threshold(*COMPILE_GC_THRESHOLDS)
        _compiles_running += 1
    try:
        yield
    finally:
        with _collector_lock:
            _compiles_running -= 1
            if _compiles_running == 0:
                gc.set_threshold(*_saved_thresholds)
