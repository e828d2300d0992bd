"""Weight-only quantized GEMV (decode at batch 1): float32 MatMul against int8 and int4 MatMulNBits (float32
activations, and `-al4`: `accuracy_level=4`, activations quantized to int8 per block, integer dot products),
minimlc beside ONNX Runtime, one thread.

    python bench/bench_weight_only.py                       # K=4096, N=11008 (a LLaMA-7B MLP: 180 MB of float32)
    python bench/bench_weight_only.py --shape 896x4864 --shape 4096x4096 --rounds 50
    python bench/bench_weight_only.py --kind float32 --kind int4-al4     # only these (float32: the ratio's base)

Each shape's float32 weight (seeded Gaussian) is quantized with `minimlc.frontend.onnx_weight_quantization`
(symmetric, blocks of `--block-size`), so the models compute the same product. Two sessions (minimlc and ORT) of each
of `KINDS` (or of those `--kind` names, and float32) run on one input, interleaved: one call each per round, the order
rotated every round, so machine noise hits all alike; the table gives medians in ms, the GB/s of the bytes each call
must read (weights, scales, A and Y), and the ratio float32 / this of minimlc (above 1: faster than minimlc's
float32). Outputs are checked first: minimlc against ORT on each model within 1e-4 of the largest |output|.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx_weight_quantization import quantize_model

KINDS = {"float32": (None, None), "int8": (8, None), "int4": (4, None), "int8-al4": (8, 4), "int4-al4": (4, 4)}
"""Kind -> (weight bits, MatMulNBits' accuracy_level)."""


def gemv_model(k: int, n: int, seed: int = 0) -> onnx.ModelProto:
    weight = (np.random.default_rng(seed).standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["y"])],
        "gemv",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def bytes_read(model: onnx.ModelProto, k: int, n: int) -> int:
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer) + 4 * (k + n)


def bench_shape(k: int, n: int, block_size: int, rounds: int, kinds: list[str]) -> list[tuple[str, str, float, float]]:
    """(engine, kind, median seconds, bytes) per session of each of `kinds`."""
    base = gemv_model(k, n)
    models = {
        kind: base if bits is None else quantize_model(base, bits, block_size, accuracy_level=level)
        for kind, (bits, level) in KINDS.items()
        if kind in kinds
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    runs = {}
    a = np.random.default_rng(1).standard_normal((1, k)).astype(np.float32)
    for kind, model in models.items():
        ours = InferenceSession(model, num_threads=1)
        theirs = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        mine, expected = ours.run(None, {"a": a})[0], theirs.run(None, {"a": a})[0]
        error = float(np.abs(mine - expected).max() / np.abs(expected).max())
        if error > 1e-4:
            raise SystemExit(f"{k}x{n} {kind}: minimlc differs from ONNX Runtime by {error:.2e} of max |y|")
        runs[("minimlc", kind)] = lambda session=ours: session.run(None, {"a": a})
        runs[("onnxruntime", kind)] = lambda session=theirs: session.run(None, {"a": a})
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    keys = list(runs)
    for round_index in range(rounds):
        shift = round_index % len(keys)
        for key in keys[shift:] + keys[:shift]:
            start = time.perf_counter()
            runs[key]()
            samples[key].append(time.perf_counter() - start)
    return [
        (engine, kind, statistics.median(samples[(engine, kind)]), bytes_read(models[kind], k, n))
        for engine, kind in keys
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", action="append", metavar="KxN", help="GEMV shape (repeatable; default 4096x11008)")
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--kind", action="append", choices=list(KINDS), help="kind to run (repeatable; default all)")
    args = parser.parse_args()
    kinds = sorted(set(args.kind or KINDS) | {"float32"}, key=list(KINDS).index)
    print(f"{'K x N':>12} {'engine':>12} {'weights':>9} {'ms':>8} {'GB/s':>7} {'MB read':>8} {'vs f32':>7}")
    for shape in args.shape or ["4096x11008"]:
        k, n = (int(part) for part in shape.lower().split("x"))
        rows = bench_shape(k, n, args.block_size, args.rounds, kinds)
        baseline = next(seconds for engine, kind, seconds, _ in rows if (engine, kind) == ("minimlc", "float32"))
        order = sorted(rows, key=lambda row: (row[0] != "minimlc", list(KINDS).index(row[1])))
        for engine, kind, seconds, nbytes in order:
            print(
                f"{k:>5} x {n:<5} {engine:>12} {kind:>9} {seconds * 1e3:8.3f} {nbytes / seconds / 1e9:7.1f} "
                f"{nbytes / 1e6:8.1f} {baseline / seconds:7.2f}"
            )


if __name__ == "__main__":
    main()
