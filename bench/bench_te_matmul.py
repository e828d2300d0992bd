"""The hand-scheduled TE matmul (`examples/te_matmul.py`) against the default schedule of the same te function.

    python bench/bench_te_matmul.py [--size 512] [--rounds 30] [--threads 1,2]

Both builds run in this process on the same inputs, interleaved (one call each per round, the order reversed every
round) so machine noise hits both alike; prints each median in ms and hand / default (above 1: the hand schedule is
slower). Outputs must agree with numpy first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import te_matmul  # noqa: E402

import minimlc  # noqa: E402
from minimlc.schedule import Schedule  # noqa: E402


def medians(functions, arrays, rounds: int) -> list[float]:
    samples: list[list[float]] = [[] for _ in functions]
    for function in functions:
        function(*arrays)
    for round_index in range(rounds):
        order = list(enumerate(functions))
        for slot, function in order if round_index % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            function(*arrays)
            samples[slot].append(time.perf_counter() - start)
    return [statistics.median(times) for times in samples]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="N of the N x N x N matmul (default 512)")
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds (default 30)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    args = parser.parse_args()
    n = args.size
    function = te_matmul.matmul_function(n)
    sch = te_matmul.hand_schedule(Schedule(function))
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    print(f"matmul {n}^3, {args.rounds} interleaved rounds; hand trace: {sch.trace}")
    print("threads | default ms | hand ms | hand / default")
    for threads in (int(t) for t in args.threads.split(",")):
        default = minimlc.build(function, num_threads=threads)
        hand = minimlc.build(sch, num_threads=threads)
        for built in (default, hand):
            c.fill(np.nan)
            built(a, b, c)
            if not np.allclose(c, a @ b, rtol=1e-4, atol=1e-3):
                print(f"{built.name}: output differs from numpy", file=sys.stderr)
                return 1
        default_s, hand_s = medians([default, hand], (a, b, c), args.rounds)
        print(f"{threads} | {default_s * 1e3:.3f} | {hand_s * 1e3:.3f} | {hand_s / default_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
