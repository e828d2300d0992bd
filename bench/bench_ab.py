"""Same-run A/B of saved models: is build B of a model as fast as build A?

    minimlc compile light_resnet50.onnx -o a.mlc       # with one minimlc (say, main)
    minimlc compile light_resnet50.onnx -o b.mlc       # with another (a branch)
    python bench/bench_ab.py a.mlc b.mlc --threads 1,2

Both files load into this one process (`minimlc.runtime.load`, so they must come from the same minimlc version) and
run on the same random input. After a warm-up they run interleaved, one call each per round with the order reversed
every round, so machine noise hits both alike, for `--rounds` rounds at every thread count; the table gives each
median in ms and the ratio B/A (above 1: B is slower). Outputs must agree within `--rtol` (a build that is fast and
wrong is reported, not timed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from minimlc import InferenceSession
from minimlc.runtime import load

CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
"""`--clock cpu`: the calling thread's CPU time, which other processes preempting it do not advance (one thread
only: a one-thread pool runs every task in the caller)."""


def timed(session: InferenceSession, feeds: dict[str, np.ndarray], clock: Callable[[], float]) -> float:
    start = clock()
    session.run(None, feeds)
    return clock() - start


def compare(
    a: InferenceSession, b: InferenceSession, rounds: int, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    """Medians (seconds) of `a` and `b`, run interleaved on one seeded random input."""
    rng = np.random.default_rng(0)
    feeds = {info.name: rng.standard_normal(info.shape).astype(info.dtype) for info in a.get_inputs()}
    for session in (a, b):
        session.run(None, feeds)
    samples: tuple[list[float], list[float]] = ([], [])
    for round_index in range(rounds):
        order = ((0, a), (1, b)) if round_index % 2 == 0 else ((1, b), (0, a))
        for slot, session in order:
            samples[slot].append(timed(session, feeds, clock))
    return statistics.median(samples[0]), statistics.median(samples[1])


def outputs_agree(a: InferenceSession, b: InferenceSession, rtol: float) -> bool:
    rng = np.random.default_rng(1)
    feeds = {info.name: rng.standard_normal(info.shape).astype(info.dtype) for info in a.get_inputs()}
    return all(
        np.allclose(x, y, rtol=rtol, atol=rtol) for x, y in zip(a.run(None, feeds), b.run(None, feeds), strict=True)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="the reference build (.mlc)")
    parser.add_argument("b", help="the build to compare (.mlc)")
    parser.add_argument("--threads", default="1", help="comma-separated thread counts (default 1)")
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per thread count (default 30)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="output agreement tolerance (default 1e-4)")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="wall time, or thread CPU time (with --threads 1)"
    )
    args = parser.parse_args()
    if args.clock == "cpu" and args.threads != "1":
        parser.error("--clock cpu times the calling thread only: use it with --threads 1")
    print(f"{'threads':>7}  {'A ms':>9}  {'B ms':>9}  {'B/A':>6}")
    for threads in (int(t) for t in args.threads.split(",")):
        a, b = load(args.a, num_threads=threads), load(args.b, num_threads=threads)
        if not outputs_agree(a, b, args.rtol):
            print(f"{threads:>7}  outputs differ beyond rtol {args.rtol}", flush=True)
            return 1
        median_a, median_b = compare(a, b, args.rounds, CLOCKS[args.clock])
        print(f"{threads:>7}  {median_a * 1e3:9.2f}  {median_b * 1e3:9.2f}  {median_b / median_a:6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
