"""Post-training int8 quantization (`minimlc.quantize_static`) of onnx's light ResNet-50 (seeded random weights,
`model_tools.randomise_weights`) and bench_models' BERT-style encoder: speed and accuracy against float32.

    python bench/bench_quantize.py                                   # both, 64 calibration inputs
    python bench/bench_quantize.py --models bert --rounds 10 --held-out 16

Per model, in one process and on one thread: the float model quantized to QDQ with `--calibration` seeded random
inputs (standard normals; BERT's token ids uniform in [0, 100)), then four contenders timed in interleaved rounds
(the order flips every round; medians): minimlc float32, minimlc on the QDQ file (QDQ fused onto its integer
kernels at import, `frontend/onnx_qdq_fusion.py`), ONNX Runtime on the QDQ file (its default optimisation level, which
fuses QDQ into its integer kernels) and ONNX Runtime float32. Accuracy over
`--held-out` other random inputs: top-1 agreement of the int8 build with minimlc's float32 build (ResNet-50, a
classifier), and the max relative error (max |int8 - float32| / max |float32| over all outputs), minimlc's and ORT's.
`--dynamic` adds the model `minimlc quantize --dynamic` writes (MatMuls: DynamicQuantizeLinear + MatMulInteger),
run by both; `--reduce-range` quantizes weights to 7 bits; `--clock cpu` times by the calling thread's CPU time (every
contender runs on it), for a loaded machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_models import CLOCKS, interleaved_medians, ort_module, ort_session
from transformer_models import Dims, bert

from minimlc import InferenceSession, quantize_static
from minimlc.frontend.onnx_dynamic_quantization import quantize_dynamic
from minimlc.tools.conformance import light_model_paths
from minimlc.tools.model_tools import random_inputs, randomise_weights


def models() -> dict[str, onnx.ModelProto]:
    resnet = next(path for path in light_model_paths() if path.stem == "light_resnet50")
    return {
        "resnet50": randomise_weights(onnx.load(resnet), seed=0),
        "bert": bert(Dims(tokens=128, hidden=256, heads=4, ffn=1024), layers=4, vocab=30522),
    }


def feeds(model: onnx.ModelProto, count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """`count` seeded inputs: normals for floats, token ids in [0, 100) for integers."""
    rng = np.random.default_rng(seed)
    result = []
    for _ in range(count):
        feed = random_inputs(model, int(rng.integers(1 << 31)))
        result.append(
            {
                name: rng.integers(0, 100, value.shape).astype(value.dtype) if value.dtype.kind in "iu" else value
                for name, value in feed.items()
            }
        )
    return result


def bench_model(name: str, model: onnx.ModelProto, args: argparse.Namespace) -> dict[str, object]:
    ort = ort_module()
    calibration = feeds(model, args.calibration, seed=1)
    start = time.perf_counter()
    quantized = quantize_static(model, calibration, method=args.method, reduce_range=args.reduce_range)
    print(f"{name}: quantized in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    float32 = InferenceSession(model, num_threads=1)
    int8 = InferenceSession(quantized, num_threads=1)
    runs = {"minimlc fp32": float32.run, "minimlc int8": int8.run}
    if ort is not None:
        ort_int8 = ort_session(ort, quantized, 1)
        runs |= {"ORT int8 (QDQ)": lambda _, feed: ort_int8(feed), "ORT fp32": _ort_float(ort, model)}
    if args.dynamic:
        dynamic = quantize_dynamic(model, reduce_range=args.reduce_range)
        runs["minimlc int8 dynamic"] = InferenceSession(dynamic, num_threads=1).run
        if ort is not None:
            ort_dynamic = ort_session(ort, dynamic, 1)
            runs["ORT int8 dynamic"] = lambda _, feed: ort_dynamic(feed)
    held_out = feeds(model, args.held_out, seed=2)
    expected = [float32.run(None, feed) for feed in held_out]
    row: dict[str, object] = {"model": name}
    for label in [label for label in runs if "int8" in label]:
        got = [runs[label](None, feed) for feed in held_out]
        row[f"{label} max rel err"] = max(
            float(np.abs(a - e).max() / np.abs(e).max()) for outs, exp in zip(got, expected) for a, e in zip(outs, exp)
        )
        if expected[0][0].ndim == 2:
            agree = sum(int(np.argmax(outs[0]) == np.argmax(exp[0])) for outs, exp in zip(got, expected))
            row[f"{label} top-1"] = f"{agree}/{len(held_out)}"
    timed = held_out[0]
    medians, rounds = interleaved_medians(
        {label: (lambda run=run: run(None, timed)) for label, run in runs.items()},
        2,
        args.rounds,
        args.budget,
        CLOCKS[args.clock],
    )
    row |= {f"{label} ms": seconds * 1e3 for label, seconds in medians.items()}
    row["rounds"] = rounds
    return row


def _ort_float(ort, model: onnx.ModelProto):
    session = ort_session(ort, model, 1)
    return lambda _, feed: session(feed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert", help="comma-separated: resnet50, bert")
    parser.add_argument("--calibration", type=int, default=64, help="calibration inputs (default 64)")
    parser.add_argument("--held-out", type=int, default=256, help="inputs the accuracy is measured on (default 256)")
    parser.add_argument("--method", default="minmax", choices=["minmax", "percentile"])
    parser.add_argument("--dynamic", action="store_true", help="also time `quantize_dynamic`'s model (MatMuls)")
    parser.add_argument("--reduce-range", action="store_true", help="7-bit weights (ORT's non-VNNI kernels)")
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds at most (default 20)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of timing per model at most (default 60)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (default), or the calling thread's CPU time, which a loaded machine's other processes do not "
        "advance",
    )
    args = parser.parse_args(argv)
    available = models()
    rows = [bench_model(name, available[name], args) for name in args.models.split(",")]
    for row in rows:
        print(
            "  ".join(
                f"{key}: {value:.3g}" if isinstance(value, float) else f"{key}: {value}" for key, value in row.items()
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
