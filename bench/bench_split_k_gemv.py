"""The split-K GEMV (`split_k`, `loop-rfactor`) against the packed GEMV, kernel alone, at one and two threads.

    python bench/bench_split_k_gemv.py                    # [65536, 1024] (256 MB) and [4096, 1024] (16 MB)
    python bench/bench_split_k_gemv.py --rounds 5 --shapes 65536x1024

Each round times, per thread count, the kernel's default config paired with the other one (`Measurer` with
`paired=True`: the two builds timed in alternation in one worker), and the table gives the medians over the rounds
of split-K's time over packed's. Weights are random (the timing does not depend on them).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from minimlc.frontend.onnx import import_model
from minimlc.lowering.target import target_from_name
from minimlc.tuner.measure import Measurer
from minimlc.tuner.tasks import extract_tasks


def _gemv(depth: int, width: int):
    weight = np.random.default_rng(0).standard_normal((depth, width), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "gemv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="+", default=["65536x1024", "4096x1024"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--split-k", type=int, default=32, help="the split-K config's depth ranges")
    args = parser.parse_args()
    target = target_from_name("host")
    print("| weight | threads | packed (ms) | split-K (ms) | split-K / packed (median of rounds) |")
    print("| --- | --- | --- | --- | --- |")
    for shape in args.shapes:
        depth, width = map(int, shape.split("x"))
        (task,) = extract_tasks(import_model(_gemv(depth, width)), target)
        default = task.space.default()
        packed = {**default, "split_k": 0, "pack": True}
        split = {**default, "split_k": args.split_k, "pack": False}
        other = packed if default["split_k"] else split
        for threads in args.threads:
            measurer = Measurer(threads=threads, timeout=300.0, min_seconds=0.05, repeats=5)
            times: dict[str, list[float]] = {"packed": [], "split": []}
            try:
                for _ in range(args.rounds):
                    result = measurer.measure(task, other, paired=True)
                    if result.latency is None or result.baseline is None:
                        raise SystemExit(f"bench_split_k_gemv: [{depth}, {width}] not timed: {result.error}")
                    times["split" if other is split else "packed"].append(result.latency)
                    times["packed" if other is split else "split"].append(result.baseline)
            finally:
                measurer.close()
            ratios = [s / p for s, p in zip(times["split"], times["packed"])]
            print(
                f"| [{depth}, {width}] | {threads} | {statistics.median(times['packed']) * 1e3:.2f} "
                f"| {statistics.median(times['split']) * 1e3:.2f} | {statistics.median(ratios):.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
