"""runtime/machine_peak.py's memory bandwidth: the streaming sum adds every element it is given, lane by lane, and
the bandwidth it times is measured on one and on two threads."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from minimlc.runtime.jit import JitModule
from minimlc.runtime.machine_peak import (
    STREAM_ACCUMULATORS,
    STREAM_FUNCTION,
    memory_bandwidth_gbs,
    stream_sum_ir,
)


@pytest.mark.parametrize(("lanes", "groups"), [(4, 1), (8, 3), (16, 5)])
def test_stream_sum_adds_every_vector_lane_by_lane(lanes: int, groups: int) -> None:
    jit = JitModule(stream_sum_ir(lanes))
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)(
        jit.function_address(STREAM_FUNCTION)
    )
    data = np.arange(groups * STREAM_ACCUMULATORS * lanes, dtype=np.float32)
    out = np.zeros(lanes, np.float32)
    run(data.ctypes.data, groups, out.ctypes.data)
    np.testing.assert_array_equal(out, data.reshape(-1, lanes).sum(axis=0))


@pytest.mark.parametrize("threads", [1, 2])
def test_bandwidth_is_measured(threads: int) -> None:
    assert 0.1 < memory_bandwidth_gbs(threads, mebibytes=8, repeats=2) < 10_000
