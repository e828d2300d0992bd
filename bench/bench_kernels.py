"""Benchmark single kernels against numpy/OpenBLAS and ONNX Runtime, all on one thread.

    python bench/bench_kernels.py                        # table on stdout
    python bench/bench_kernels.py --runs 30 --json bench/results/kernels.json
    python bench/bench_kernels.py --all-convs
    python bench/bench_kernels.py --resnet50-convs      # every distinct ResNet-50 convolution, weighted total

- MatMul 1024^3 fp32 with a constant B: minimlc vs numpy (`a @ b`, OpenBLAS) vs ONNX Runtime; GFLOP/s and % of numpy.
- Conv 1x64x56x56, 3x3, 64 filters, pad 1, + ReLU: minimlc vs ONNX Runtime (GFLOP/s, time as a multiple of ONNX
  Runtime's); with `--all-convs` also ResNet-50's kinds of convolution (`CONV_SHAPES`).

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


CONV_SHAPES = [
    # (label, C, H=W, F, kernel, stride, pad): the bench row of issue 5, then ResNet-50's kinds of convolution.
    ("Conv 1x64x56x56 3x3 64 pad 1 + ReLU", 64, 56, 64, 3, 1, 1),
    ("ResNet-50 stem 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3),
    ("ResNet-50 1x1 64->256 @56", 64, 56, 256, 1, 1, 0),
    ("ResNet-50 1x1 256->64 @56", 256, 56, 64, 1, 1, 0),
    ("ResNet-50 3x3/2 128->128 @56", 128, 56, 128, 3, 2, 1),
    ("ResNet-50 1x1/2 256->512 @56", 256, 56, 512, 1, 2, 0),
    ("ResNet-50 3x3 256->256 @14", 256, 14, 256, 3, 1, 1),
    ("ResNet-50 1x1 1024->256 @14", 1024, 14, 256, 1, 1, 0),
    ("ResNet-50 1x1 512->2048 @7", 512, 7, 2048, 1, 1, 0),
]


RESNET50_CONVS = [
    # (C, H=W, F, kernel, stride, pad, calls per inference): every distinct convolution of ResNet-50 (light model).
    (3, 224, 64, 7, 2, 3, 1),
    (64, 56, 64, 1, 1, 0, 1),
    (64, 56, 64, 3, 1, 1, 3),
    (64, 56, 256, 1, 1, 0, 4),
    (256, 56, 64, 1, 1, 0, 2),
    (256, 56, 128, 1, 1, 0, 1),
    (128, 56, 128, 3, 2, 1, 1),
    (128, 28, 512, 1, 1, 0, 4),
    (256, 56, 512, 1, 2, 0, 1),
    (512, 28, 128, 1, 1, 0, 3),
    (128, 28, 128, 3, 1, 1, 3),
    (512, 28, 256, 1, 1, 0, 1),
    (256, 28, 256, 3, 2, 1, 1),
    (256, 14, 1024, 1, 1, 0, 6),
    (512, 28, 1024, 1, 2, 0, 1),
    (1024, 14, 256, 1, 1, 0, 5),
    (256, 14, 256, 3, 1, 1, 5),
    (1024, 14, 512, 1, 1, 0, 1),
    (512, 14, 512, 3, 2, 1, 1),
    (512, 7, 2048, 1, 1, 0, 3),
    (1024, 14, 2048, 1, 2, 0, 1),
    (2048, 7, 512, 1, 1, 0, 2),
    (512, 7, 512, 3, 1, 1, 2),
]


def resnet50_convs(runs: int, warmup: int) -> list[dict[str, object]]:
    """Every distinct ResNet-50 convolution (+ ReLU), with its calls per inference, and a weighted total row."""
    reports = []
    totals = {"minimlc": 0.0, "onnxruntime": 0.0}
    for c, size, f, kernel, stride, pad, calls in RESNET50_CONVS:
        label = f"{kernel}x{kernel}/{stride} {c}->{f} @{size} (x{calls})"
        report = bench_conv(label, c, size, f, kernel, stride, pad, runs, warmup)
        for name, row in report.get("results", {}).items():  # type: ignore[union-attr]
            totals[name] = totals.get(name, 0.0) + row["ms"] * calls
        reports.append(report)
    base = totals["onnxruntime"] or totals["minimlc"]
    reports.append(
        {
            "kernel": "ResNet-50 convolutions, weighted by calls per inference",
            "results": {name: {"ms": ms, "x_onnxruntime": ms / base} for name, ms in totals.items()},
        }
    )
    return reports


def conv_model(c: int, size: int, f: int, kernel: int, stride: int, pad: int) -> onnx.ModelProto:
    """Conv (no bias) + ReLU on a 1 x c x size x size input, with seeded weights."""
    w = (np.random.default_rng(0).standard_normal((f, c, kernel, kernel)) * 0.05).astype(np.float32)
    out = (size + 2 * pad - kernel) // stride + 1
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["t"], pads=[pad] * 4, strides=[stride] * 2),
            helper.make_node("Relu", ["t"], ["y"]),
        ],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, out, out])],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def bench_conv(label: str, c: int, size: int, f: int, kernel: int, stride: int, pad: int, runs: int, warmup: int):
    """One convolution (+ ReLU): minimlc vs ONNX Runtime, GFLOP/s and time relative to ONNX Runtime."""
    if not hasattr(minimlc.dialects.graph, "ConvOp"):
        return {"kernel": label, "skipped": "the graph dialect has no ConvOp yet"}
    model = conv_model(c, size, f, kernel, stride, pad)
    x = np.random.default_rng(1).standard_normal((1, c, size, size)).astype(np.float32)
    try:
        session = InferenceSession(model, num_threads=1)
    except PassFailedException as error:
        return {"kernel": label, "skipped": f"minimlc cannot compile it yet ({error})"}
    feeds = {"x": x}
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, feeds)}
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
        (ours,), (theirs,) = session.run(None, feeds), ort(feeds)  # type: ignore[misc]
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3)
    medians = interleaved_medians(contenders, runs, warmup)
    out = (size + 2 * pad - kernel) // stride + 1
    flops = 2 * c * f * kernel * kernel * out * out
    base = medians.get("onnxruntime", medians["minimlc"])
    return {
        "kernel": label,
        "compile_seconds": session.compile_seconds,
        "results": {
            name: {"ms": s * 1e3, "gflops": flops / s / 1e9, "x_onnxruntime": s / base} for name, s in medians.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--size", type=int, default=1024, help="MatMul size (default 1024)")
    parser.add_argument("--all-convs", action="store_true", help="also the ResNet-50 convolution shapes")
    parser.add_argument(
        "--resnet50-convs", action="store_true", help="only every distinct ResNet-50 convolution, with a weighted total"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.resnet50_convs:
        reports = resnet50_convs(args.runs, args.warmup)
    else:
        shapes = CONV_SHAPES if args.all_convs else CONV_SHAPES[:1]
        reports = [bench_matmul(args.size, args.runs, args.warmup)]
        reports += [bench_conv(*shape, runs=args.runs, warmup=args.warmup) for shape in shapes]
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
