"""The quantized ResNet-style network (`examples/quantized_resnet.py`) against ONNX Runtime at one thread.

    python bench/bench_quantized.py                     # 56x56x64, two residual blocks
    python bench/bench_quantized.py --size 28 --rounds 10

Both run in this process on one seeded input: after a warm-up, interleaved rounds (the order flips every round) so
that machine noise hits both alike; the table gives each median in ms and the ratio minimlc / ONNX Runtime (above
1: minimlc is slower). ONNX Runtime runs twice: at its default level (ORT_ENABLE_ALL, which fuses the residual join
into its contrib QLinearAdd, with its own rounding) and at ORT_ENABLE_BASIC (ONNX's semantics, the exactness oracle);
minimlc's uint8 outputs are checked to equal the latter's before anything is timed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_models import CLOCKS, interleaved_medians, ort_module, ort_session
from quantized_resnet import onnxruntime_saturates_u8s8, quantized_resnet

from minimlc import InferenceSession


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=56, help="input height and width (default 56)")
    parser.add_argument("--channels", type=int, default=64, help="channels of the residual blocks (default 64)")
    parser.add_argument("--blocks", type=int, default=2, help="residual blocks (default 2)")
    parser.add_argument("--rounds", type=int, default=30, help="most interleaved rounds (default 30)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timed rounds at most (default 20)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time, or the calling thread's CPU time (all three run in the caller at one thread) (default wall)",
    )
    args = parser.parse_args()
    ort = ort_module()
    if ort is None:
        print("onnxruntime is not installed")
        return 1
    reduce_range = onnxruntime_saturates_u8s8()
    if reduce_range:
        print("no VNNI on this host: ONNX Runtime's u8 x s8 kernels saturate, so the weights use 7 bits (reduce_range)")
    model = quantized_resnet(channels=args.channels, size=args.size, blocks=args.blocks, reduce_range=reduce_range)
    feeds = {"x": np.random.default_rng(0).normal(0.0, 1.0, (1, 3, args.size, args.size)).astype(np.float32)}
    session = InferenceSession(model, num_threads=1)
    default = ort_session(ort, model, 1)
    basic = ort_session(ort, model, 1, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    for got, want in zip(session.run(None, feeds), basic(feeds), strict=True):
        if not np.array_equal(got, want):
            print(f"MISMATCH: {int((got != want).sum())} of {got.size} outputs differ from ONNX Runtime's")
            return 1
    medians, rounds = interleaved_medians(
        {
            "minimlc": lambda: session.run(None, feeds),
            "ort (ENABLE_ALL)": lambda: default(feeds),
            "ort (ENABLE_BASIC)": lambda: basic(feeds),
        },
        warmup=2,
        max_rounds=args.rounds,
        budget_seconds=args.budget,
        clock=CLOCKS[args.clock],
    )
    print(
        f"quantized resnet {args.channels}x{args.size}x{args.size}, {args.blocks} blocks, 1 thread, {rounds} rounds, "
        f"clock: {args.clock}"
    )
    print("outputs: equal to ONNX Runtime's (ORT_ENABLE_BASIC), bit for bit")
    for name, seconds in medians.items():
        ratio = medians["minimlc"] / seconds
        print(f"{name:20s} {seconds * 1e3:9.2f} ms   minimlc / this = {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
