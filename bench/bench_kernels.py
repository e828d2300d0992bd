"""Benchmark single kernels against numpy/OpenBLAS and ONNX Runtime, all on one thread.

    python bench/bench_kernels.py                        # table on stdout
    python bench/bench_kernels.py --runs 30 --json bench/results/kernels.json

- MatMul 1024^3 fp32 with a constant B: minimlc vs numpy (`a @ b`, OpenBLAS) vs ONNX Runtime; GFLOP/s and % of numpy.
- Conv 1x64x56x56, 3x3, 64 filters, pad 1, + ReLU: minimlc vs ONNX Runtime, once the graph dialect has `ConvOp`
  (skipped with a note until then).

numpy's BLAS and ONNX Runtime are pinned to one thread (the environment variables are set before numpy loads).
Contenders run interleaved, one call each per round after a warm-up, so noise hits them alike; figures are medians.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from xdsl.utils.exceptions import PassFailedException  # noqa: E402

import minimlc.dialects.graph  # noqa: E402
from minimlc.runtime import InferenceSession  # noqa: E402


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


def _ort_session(model: onnx.ModelProto) -> Callable[[dict[str, np.ndarray]], object] | None:
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def matmul_model(size: int, b: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [size, size])],
        [numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def bench_matmul(size: int, runs: int, warmup: int) -> dict[str, object]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    model = matmul_model(size, b)
    session = InferenceSession(model, num_threads=1)
    feeds = {"a": a}
    (ours,) = session.run(None, feeds)
    np.testing.assert_allclose(ours, a @ b, rtol=1e-3, atol=1e-3)
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, feeds), "numpy": lambda: a @ b}
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
    medians = interleaved_medians(contenders, runs, warmup)
    flops = 2 * size**3
    return {
        "kernel": f"MatMul {size}^3",
        "compile_seconds": session.compile_seconds,
        "results": {
            name: {"ms": seconds * 1e3, "gflops": flops / seconds / 1e9, "pct_of_numpy": medians["numpy"] / seconds * 100}
            for name, seconds in medians.items()
        },
    }


def bench_conv(runs: int, warmup: int) -> dict[str, object]:
    if not hasattr(minimlc.dialects.graph, "ConvOp"):
        return {"kernel": "Conv 1x64x56x56 3x3 64 pad 1 + ReLU", "skipped": "the graph dialect has no ConvOp yet"}
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["t"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["t"], ["y"])],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    try:
        session = InferenceSession(model, num_threads=1)
    except PassFailedException as error:
        return {"kernel": "Conv 1x64x56x56 3x3 64 pad 1 + ReLU", "skipped": f"minimlc cannot compile it yet ({error})"}
    feeds = {"x": x}
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, feeds)}
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
    medians = interleaved_medians(contenders, runs, warmup)
    base = medians.get("onnxruntime", medians["minimlc"])
    return {
        "kernel": "Conv 1x64x56x56 3x3 64 pad 1 + ReLU",
        "compile_seconds": session.compile_seconds,
        "results": {name: {"ms": s * 1e3, "x_onnxruntime": s / base} for name, s in medians.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--size", type=int, default=1024, help="MatMul size (default 1024)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    reports = [bench_matmul(args.size, args.runs, args.warmup), bench_conv(args.runs, args.warmup)]
    for report in reports:
        print(f"\n{report['kernel']}" + (f"  (compile {report['compile_seconds']:.2f} s)" if "compile_seconds" in report else ""))
        if "skipped" in report:
            print(f"  skipped: {report['skipped']}")
            continue
        for name, row in report["results"].items():  # type: ignore[union-attr]
            cells = "  ".join(f"{key} {value:8.2f}" for key, value in row.items())
            print(f"  {name:12s} {cells}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(reports, handle, indent=2)


if __name__ == "__main__":
    main()
