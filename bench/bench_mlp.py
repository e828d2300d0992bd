"""Benchmark the example MLP (784-128-10) against ONNX Runtime and numpy, at batch 1 and 64.

    python bench/bench_mlp.py                 # table on stdout
    python bench/bench_mlp.py --runs 5000 --json bench/results/mlp.json

All contenders run interleaved in one loop (one call of each per round, after a warm-up), so machine noise hits
them alike; the figures are medians. ONNX Runtime is optional: it is skipped with a note when not installed. It runs
with 1 intra-op thread (as minimlc does today) and with its default thread count.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from make_mlp import SIZES, build_mlp

from minimlc import InferenceSession


def interleaved_medians(contenders: dict[str, Callable[[], object]], runs: int, warmup: int) -> dict[str, float]:
    """Median seconds per call of each contender, timed round-robin."""
    for _ in range(warmup):
        for call in contenders.values():
            call()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(runs):
        for name, call in contenders.items():
            start = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def numpy_mlp(model: onnx.ModelProto) -> Callable[[np.ndarray], np.ndarray]:
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    w0, b0 = weights["fc0.weight"].T.copy(), weights["fc0.bias"]
    w1, b1 = weights["fc1.weight"].T.copy(), weights["fc1.bias"]
    return lambda x: np.maximum(x @ w0 + b0, 0.0) @ w1 + b1


def ort_sessions(model: onnx.ModelProto) -> dict[str, Callable[[np.ndarray], object]]:
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed: skipping it", file=sys.stderr)
        return {}
    sessions = {}
    for label, threads in (("ort-1t", 1), ("ort", 0)):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        sessions[label] = lambda x, s=session: s.run(None, {"input": x})
    return sessions


@dataclass
class BatchResult:
    """Medians for one batch size; `median_us` maps contender -> microseconds per call."""

    batch: int
    compile_seconds: float
    max_abs_error_vs_numpy: float
    median_us: dict[str, float]
    minimlc_gflops: float


def bench_batch(batch: int, runs: int, warmup: int) -> BatchResult:
    model = build_mlp(batch=batch)
    x = np.random.default_rng(batch).standard_normal((batch, SIZES[0])).astype(np.float32)
    session = InferenceSession(model, cache=False)
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, {"input": x})}
    reference = numpy_mlp(model)
    contenders["numpy"] = lambda: reference(x)
    for label, run in ort_sessions(model).items():
        contenders[label] = lambda run=run: run(x)
    (ours,) = session.run(None, {"input": x})
    max_error = float(np.abs(ours - reference(x)).max())
    medians = interleaved_medians(contenders, runs, warmup)
    flops = 2 * batch * sum(a * b for a, b in zip(SIZES, SIZES[1:]))
    return BatchResult(
        batch=batch,
        compile_seconds=session.compile_seconds,
        max_abs_error_vs_numpy=max_error,
        median_us={name: seconds * 1e6 for name, seconds in medians.items()},
        minimlc_gflops=flops / medians["minimlc"] / 1e9,
    )


def print_table(results: list[BatchResult]) -> None:
    names = list(results[0].median_us)
    header = f"{'batch':>5} " + "".join(f"{name + ' us':>14}" for name in names)
    header += "".join(f"{'minimlc/' + name:>16}" for name in names if name != "minimlc")
    header += f"{'GFLOP/s':>10}{'compile s':>11}"
    print(header)
    for result in results:
        medians = result.median_us
        row = f"{result.batch:>5} " + "".join(f"{medians[name]:>14.1f}" for name in names)
        row += "".join(f"{medians['minimlc'] / medians[name]:>16.2f}" for name in names if name != "minimlc")
        row += f"{result.minimlc_gflops:>10.2f}{result.compile_seconds:>11.2f}"
        print(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="timed rounds per batch size (default 2000)")
    parser.add_argument("--warmup", type=int, default=100, help="untimed rounds first (default 100)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    results = []
    for batch in args.batches:
        print(f"batch {batch}: compiling and timing {args.runs} rounds ...", file=sys.stderr, flush=True)
        results.append(bench_batch(batch, args.runs, args.warmup))
    print_table(results)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([asdict(result) for result in results], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
