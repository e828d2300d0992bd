"""Compiling for the profiler: the calls a profiled build recorded.

    passes = build_pipeline(3, profiling="monotonic")   # ... loop-profile-calls, loop-outline-parallel ...
    calls = profiled_calls(module)                       # after the pipeline ran: ProfiledCall per kernel call

`build_pipeline` (`lowering/pipeline.py`) builds the pipeline, with the clock `PROFILING_CLOCKS` names for a
`profiling_clock`; the runtime's `Profiler` (`runtime/profiler.py`) reads the clock buffer of such a build as it runs.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr

from minimlc.lowering.abi import PROFILE_ATTR, entry_function
from minimlc.runtime.profiler import ProfiledCall


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
        moved = entry.data.get("bytes")
        assert isinstance(moved, IntegerAttr)
        bf16 = entry.data.get("bf16_flops")
        assert isinstance(bf16, IntegerAttr)
        keys = tuple(tasks.data.split(" + ")) if tasks.data else ()
        calls.append(
            ProfiledCall(kernel.data, flops.value.data, schedule.data, keys, moved.value.data, bf16.value.data)
        )
    return calls
