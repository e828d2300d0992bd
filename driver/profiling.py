"""Compiling for the profiler: the pipeline that times every kernel call, and the calls it recorded.

    passes = with_profiling(pipeline_passes(3))          # ... loop-profile-calls, loop-outline-parallel ...
    calls = profiled_calls(module)                       # after the pipeline ran: ProfiledCall per kernel call

The runtime's `Profiler` (`runtime/profiler.py`) reads the clock buffer of such a build as it runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr

from minimlc.lowering.abi import PROFILE_ATTR, entry_function
from minimlc.runtime.profiler import PROFILING_CLOCKS, ProfiledCall

PROFILE_PASS = "loop-profile-calls"
_BEFORE = "loop-outline-parallel"


def with_profiling(passes: Sequence[str], clock: str = "wall") -> list[str]:
    """`passes` with `loop-profile-calls` (reading `clock`, see `PROFILING_CLOCKS`) before `loop-outline-parallel`
    and `default-schedule` annotating kernels."""
    profile = PROFILE_PASS if clock == "wall" else f"{PROFILE_PASS}{{clock={PROFILING_CLOCKS[clock]}}}"
    result: list[str] = []
    for item in passes:
        if item.split("{")[0] == _BEFORE:
            result.append(profile)
        if item == "default-schedule":
            item = "default-schedule{annotate=true}"
        elif item.startswith("default-schedule{"):
            item = item[:-1] + " annotate=true}"
        result.append(item)
    return result


def profiled_calls(module: ModuleOp) -> list[ProfiledCall]:
    """The entry's `minimlc.profile` (after `loop-profile-calls`, at any later level); ValueError if it has none."""
    described = entry_function(module).attributes.get(PROFILE_ATTR)
    if not isinstance(described, ArrayAttr):
        raise ValueError("the module was not compiled with loop-profile-calls")
    calls = []
    for entry in described.data:
        assert isinstance(entry, DictionaryAttr)
        kernel, flops, schedule, tasks = (entry.data[k] for k in ("kernel", "flops", "schedule", "tasks"))
        assert isinstance(kernel, StringAttr)
        assert isinstance(flops, IntegerAttr)
        assert isinstance(schedule, StringAttr)
        assert isinstance(tasks, StringAttr)
        keys = tuple(tasks.data.split(" + ")) if tasks.data else ()
        calls.append(ProfiledCall(kernel.data, flops.value.data, schedule.data, keys))
    return calls
