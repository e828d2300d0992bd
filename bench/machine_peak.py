"""This machine's single-core peaks: a JIT-compiled loop of independent vector FMAs, numpy's sgemm, and (where the CPU
has one) a loop of its bfloat16 pair dot product.

    python bench/machine_peak.py            # the figures, GFLOP/s on one core

The FMA loop is `minimlc.runtime.machine_peak`'s (the peak the profiler and the tuner divide by): independent
vector FMAs compiled by minimlc's JIT, so nothing but FMA throughput bounds it. numpy's figure is a
1024^3 float32 matmul with its BLAS pinned to one thread (the environment variables must be set before numpy loads:
run this file, or set OPENBLAS_NUM_THREADS=1 yourself). Both time the calling thread's CPU time (not wall time) and
keep the best of several repeats: a peak is what the core can do, and on a machine other processes load, wall time
would count the slices they take.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from minimlc.lowering.target import target_from_name  # noqa: E402
from minimlc.runtime.machine_peak import best_cpu_seconds, dot_bf16_peak_gflops, fma_peak_gflops  # noqa: E402


def numpy_sgemm_gflops(size: int = 1024, repeats: int = 7) -> float:
    """GFLOP/s of numpy's float32 `a @ b` at `size`^3 (one BLAS thread when the environment says so), best of."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    a @ b
    return 2 * size**3 / best_cpu_seconds(lambda: a @ b, repeats) / 1e9


@dataclass(frozen=True)
class MachinePeak:
    """One core's measured GFLOP/s: the FMA loop (the fp32 peak), numpy's sgemm (what a tuned BLAS reaches) and the
    bfloat16 dot product loop (the peak of a bf16 build's products; None where not measured or the CPU has none)."""

    fma_gflops: float
    numpy_sgemm_gflops: float
    vector_lanes: int
    bf16_dot_gflops: float | None = None


def measure(seconds_per_repeat: float = 0.05, repeats: int = 7, bf16: bool = False) -> MachinePeak:
    """Measure the figures on this machine (each loop runs about `seconds_per_repeat` per repeat), the bfloat16 dot
    product's where `bf16` and the CPU has one."""
    host = target_from_name("host")
    return MachinePeak(
        fma_peak_gflops(seconds_per_repeat, repeats),
        numpy_sgemm_gflops(repeats=repeats),
        host.vector_lanes,
        dot_bf16_peak_gflops(seconds_per_repeat, repeats) if bf16 and host.dot_bf16_bits else None,
    )


if __name__ == "__main__":
    peak = measure(bf16=True)
    print(f"FMA loop ({peak.vector_lanes} lanes): {peak.fma_gflops:.1f} GFLOP/s on one core")
    print(f"numpy sgemm 1024^3, 1 thread: {peak.numpy_sgemm_gflops:.1f} GFLOP/s")
    if peak.bf16_dot_gflops is not None:
        print(f"bfloat16 dot product loop: {peak.bf16_dot_gflops:.1f} GFLOP/s on one core")
