"""A TE matmul scheduled by hand from Python, its trace replayed with `mini-opt`, checked against numpy.

    python examples/te_matmul.py [N]     # N x N x N, default 256

The schedule is the classic CPU GEMM: zero the output in its own vectorized nest (decompose_reduction), a register
tile of 8 rows x 32 columns over blocks of 256 terms (split, reorder, unroll, vectorize, cache_write) and parallel
row blocks. `sch.trace` prints it as a `mini-opt` pass list; `replayed_loop_ir` runs `mini-opt -p te-to-loop` on the
printed te function and then that pass list, which must give the same loop IR as `sch.mod`.
`bench/bench_te_matmul.py` times it against the default schedule.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import minimlc
from minimlc import te
from minimlc.schedule import Schedule

MINI_OPT = str(Path(sys.executable).parent / "mini-opt")


def matmul_function(n: int = 256, m: int | None = None, k: int | None = None):
    """C = A @ B for A of (n, k) and B of (k, m) (square by default) as a te function."""
    m, k = m or n, k or n
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_function([A, B, C], name="matmul")


def hand_schedule(sch: Schedule, rows: int = 8, columns: int = 32, depth: int = 256) -> Schedule:
    """Register tile of `rows` x `columns` accumulators over blocks of `depth` terms (so that a block of B stays in
    cache while every row block reads it), row blocks in parallel."""
    block = sch.get_block("C")
    i_init, j_init, i, j, r = [*sch.decompose_reduction(block), *sch.get_loops(block)[2:]]
    _, j_init_i = sch.split(j_init, factors=[None, columns])
    sch.vectorize(j_init_i)
    sch.parallel(i_init)
    i_o, i_i = sch.split(i, factors=[None, rows])
    j_o, j_i = sch.split(j, factors=[None, columns])
    r_o, r_i = sch.split(r, factors=[None, min(depth, sch.trip_count(r))])
    sch.reorder(r_o, i_o, j_o, r_i, i_i, j_i)
    sch.unroll(i_i)
    sch.vectorize(j_i)
    sch.cache_write(j_o, accumulate=True)
    sch.parallel(i_o)
    return sch


def replayed_loop_ir(function, trace: str) -> str:
    """The loop IR `mini-opt` gives for the printed te function lowered by te-to-loop, then `trace` replayed."""
    unscheduled = subprocess.run(
        [MINI_OPT, "-p", "te-to-loop"], input=str(function), capture_output=True, text=True, check=True
    ).stdout
    return subprocess.run([MINI_OPT, "-p", trace], input=unscheduled, capture_output=True, text=True, check=True).stdout


def main(n: int = 256) -> None:
    function = matmul_function(n)
    sch = hand_schedule(Schedule(function))
    print(f"trace: {sch.trace}")
    assert replayed_loop_ir(function, str(sch.trace)).rstrip("\n") == str(sch.mod), "the replay differs"
    print("mini-opt replay: identical loop IR")
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    minimlc.build(sch)(a, b, c)
    error = float(np.abs(c - a @ b).max() / n)
    print(f"max |minimlc - numpy| / n = {error:.2e}")
    assert error < 1e-5


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 256)
