"""Lone MatMuls with a run-time row count (a decoder's projections) at one and two threads, minimlc beside ONNX Runtime.

    python bench/bench_gemv_threads.py                               # 1 x K x N for (K, N) in the 0.5b config's
    python bench/bench_gemv_threads.py --rows 1,7 --shapes 896x128 --clock cpu

Each model is `y[1, rows, N] = x[1, rows, K] @ w[K, N]` with `rows` a symbolic dimension (`sequence`), compiled once
by minimlc (the dynamic GEMM rule) and run at every `--rows`; ONNX Runtime runs the same file at `--threads`
intra-op threads without spinning. A sample times `--calls` calls in a row (a lone GEMV takes microseconds); rounds
interleave the contenders and flip their order, and the table gives the median milliseconds per call and the ratio
to ONNX Runtime. `--clock cpu` counts the process's CPU time (all threads' work), which other processes' slices on a
shared machine do not advance.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import onnx
from bench_generate import onnx_runtime_session
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession

SHAPES = ("896x128", "896x4864", "4864x896")


def matmul_model(depth: int, width: int) -> onnx.ModelProto:
    """`x[1, sequence, depth] @ w[depth, width]`, a random weight."""
    weight = np.random.default_rng(0).standard_normal((depth, width), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "sequence", depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "sequence", width])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated KxN (default: %(default)s)")
    parser.add_argument("--rows", default="1", help="comma-separated run-time row counts (default 1)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--calls", type=int, default=50, help="calls per sample (default 50)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(f"{'M x K x N':>16} {'threads':>7} {'minimlc ms':>11} {'ORT ms':>9} {'minimlc/ORT':>12}")
    for shape in args.shapes.split(","):
        depth, width = (int(part) for part in shape.split("x"))
        model = matmul_model(depth, width)
        for threads in (int(t) for t in args.threads.split(",")):
            ours, theirs = InferenceSession(model, num_threads=threads), onnx_runtime_session(model, threads)
            for rows in (int(r) for r in args.rows.split(",")):
                x = np.random.default_rng(1).standard_normal((1, rows, depth), dtype=np.float32)
                expected = theirs.run(None, {"x": x})[0]
                got = ours.run(None, {"x": x})[0]
                np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
                contenders = {
                    "minimlc": lambda: ours.run(None, {"x": x}),
                    "onnxruntime": lambda: theirs.run(None, {"x": x}),
                }
                mini, ort_ms = (1e3 * t / args.calls for t in _medians(contenders, args.calls, args.rounds, clock))
                label = f"{rows}x{depth}x{width}"
                print(f"{label:>16} {threads:>7} {mini:11.4f} {ort_ms:9.4f} {mini / ort_ms:12.2f}", flush=True)
    return 0


def _medians(contenders: dict[str, Callable[[], object]], calls: int, rounds: int, clock) -> list[float]:
    """Median seconds of `calls` calls of each contender, rounds interleaved and their order flipped each round."""
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        contenders[name]()
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            start = clock()
            for _ in range(calls):
                contenders[name]()
            samples[name].append(clock() - start)
    return [statistics.median(samples[name]) for name in names]


if __name__ == "__main__":
    sys.exit(main())
