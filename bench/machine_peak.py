"""This machine's single-core fp32 peak: a JIT-compiled loop of independent vector FMAs, and numpy's sgemm.

    python bench/machine_peak.py            # both figures, GFLOP/s on one core

The FMA loop is LLVM IR built here and compiled by minimlc's JIT (`runtime.jit`, host CPU, O3): one
`llvm.fma.v<lanes>f32` per accumulator per iteration, with as many independent accumulators as half the vector
registers, so the FMA units' latency is hidden and nothing but FMA throughput bounds the loop. numpy's figure is a
1024^3 float32 matmul with its BLAS pinned to one thread (the environment variables must be set before numpy loads:
run this file, or set OPENBLAS_NUM_THREADS=1 yourself). Both time the calling thread's CPU time (not wall time) and
keep the best of several repeats: a peak is what the core can do, and on a machine other processes load, wall time
would count the slices they take.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import ctypes  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from minimlc.lowering.target import target_from_name  # noqa: E402
from minimlc.runtime.jit import JitModule  # noqa: E402

FMA_FUNCTION = "fma_peak"


def fma_loop_ir(lanes: int, accumulators: int) -> str:
    """`void fma_peak(ptr state, i64 iterations)`: acc_k = fma(acc_k, m, c), `iterations` >= 1 times.

    `state` holds vectors m, c, then the accumulators' initial values; the final accumulators are stored back, so
    the loop cannot be folded away.
    """
    vector = f"<{lanes} x float>"
    fma = f"@llvm.fma.v{lanes}f32"

    def load(index: int, name: str) -> list[str]:
        return [
            f"  %{name}.ptr = getelementptr {vector}, ptr %state, i64 {index}",
            f"  %{name} = load {vector}, ptr %{name}.ptr, align 4",
        ]

    entry = load(0, "m") + load(1, "c")
    phis, body, stores = [], [], []
    for k in range(accumulators):
        entry += load(2 + k, f"init{k}")
        phis.append(f"  %acc{k} = phi {vector} [ %init{k}, %entry ], [ %next{k}, %loop ]")
        body.append(f"  %next{k} = call {vector} {fma}({vector} %acc{k}, {vector} %m, {vector} %c)")
        stores.append(f"  store {vector} %next{k}, ptr %init{k}.ptr, align 4")
    return "\n".join(
        [
            f"declare {vector} {fma}({vector}, {vector}, {vector})",
            "",
            f"define void @{FMA_FUNCTION}(ptr %state, i64 %iterations) {{",
            "entry:",
            *entry,
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]",
            *phis,
            *body,
            "  %i.next = add i64 %i, 1",
            "  %done = icmp uge i64 %i.next, %iterations",
            "  br i1 %done, label %exit, label %loop",
            "exit:",
            *stores,
            "  ret void",
            "}",
        ]
    )


def best_cpu_seconds(call: Callable[[], object], repeats: int) -> float:
    """The least CPU time (of this thread) any of `repeats` calls of `call()` took."""
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        call()
        best = min(best, time.thread_time() - start)
    return best


def fma_peak_gflops(seconds_per_repeat: float = 0.05, repeats: int = 7) -> float:
    """Single-core fp32 GFLOP/s of the FMA loop (2 FLOPs per lane per FMA), best of `repeats`."""
    info = target_from_name("host")
    lanes, accumulators = info.vector_lanes, info.vector_registers // 2
    jit = JitModule(fma_loop_ir(lanes, accumulators))
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(jit.function_address(FMA_FUNCTION))
    state = np.empty((2 + accumulators, lanes), dtype=np.float32)
    state[0], state[1], state[2:] = 0.999, 0.001, 1.0  # converges to 1.0: no overflow, no denormals
    address = state.ctypes.data
    flops_per_iteration = 2 * lanes * accumulators
    iterations = 1000
    while (elapsed := best_cpu_seconds(lambda: run(address, iterations), 1)) < seconds_per_repeat / 4:
        iterations *= 4
    iterations = max(1, int(iterations * seconds_per_repeat / elapsed))
    seconds = best_cpu_seconds(lambda: run(address, iterations), repeats)
    return flops_per_iteration * iterations / seconds / 1e9


def numpy_sgemm_gflops(size: int = 1024, repeats: int = 7) -> float:
    """GFLOP/s of numpy's float32 `a @ b` at `size`^3 (one BLAS thread when the environment says so), best of."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    a @ b
    return 2 * size**3 / best_cpu_seconds(lambda: a @ b, repeats) / 1e9


@dataclass(frozen=True)
class MachinePeak:
    """One core's measured fp32 GFLOP/s: the FMA loop (the peak) and numpy's sgemm (what a tuned BLAS reaches)."""

    fma_gflops: float
    numpy_sgemm_gflops: float
    vector_lanes: int


def measure(seconds_per_repeat: float = 0.05, repeats: int = 7) -> MachinePeak:
    """Measure both figures on this machine (the FMA loop runs about `seconds_per_repeat` per repeat)."""
    return MachinePeak(
        fma_peak_gflops(seconds_per_repeat, repeats), numpy_sgemm_gflops(repeats=repeats), target_from_name("host").vector_lanes
    )


if __name__ == "__main__":
    peak = measure()
    print(f"FMA loop ({peak.vector_lanes} lanes): {peak.fma_gflops:.1f} GFLOP/s on one core")
    print(f"numpy sgemm 1024^3, 1 thread: {peak.numpy_sgemm_gflops:.1f} GFLOP/s")
