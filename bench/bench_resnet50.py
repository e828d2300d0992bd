"""ResNet-50 (onnx's light model, seeded random weights) latency: minimlc on 1 and 2 threads vs ONNX Runtime.

    python bench/bench_resnet50.py --runs 20

The light model generates its weights with ConstantOfShape; `randomise_weights` replaces them by seeded random
constants so the numerics are checked against ONNX Runtime (max relative error). Contenders run interleaved, one
call each per round after a warm-up, so noise hits them alike; figures are medians. ONNX Runtime runs on one thread
and on two (`intra_op_num_threads`), minimlc with `num_threads=1` and `2`.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

from minimlc.runtime import InferenceSession  # noqa: E402
from minimlc.tools.model_tools import randomise_weights  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernels import interleaved_medians  # noqa: E402

RESNET50 = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


def ort_session(model: onnx.ModelProto, threads: int) -> Callable[[dict[str, np.ndarray]], object]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", default="1,2", help="minimlc thread counts to time (default 1,2)")
    args = parser.parse_args()
    model = randomise_weights(onnx.load(RESNET50), seed=0)
    name = model.graph.input[0].name
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    feeds = {name: x}
    contenders: dict[str, Callable[[], object]] = {}
    reference = ort_session(model, 1)
    (expected,) = reference(feeds)  # type: ignore[misc]
    for threads in (int(t) for t in args.threads.split(",")):
        session = InferenceSession(model, num_threads=threads)
        (ours,) = session.run(None, feeds)
        error = float(np.max(np.abs(ours - expected)) / np.max(np.abs(expected)))
        print(f"minimlc {threads} thread(s): compile {session.compile_seconds:.1f} s, max error / max |y| {error:.2e}")
        contenders[f"minimlc x{threads}"] = lambda s=session: s.run(None, feeds)
    contenders["onnxruntime x1"] = lambda: reference(feeds)
    two = ort_session(model, 2)
    contenders["onnxruntime x2"] = lambda: two(feeds)
    medians = interleaved_medians(contenders, args.runs, args.warmup)
    base = medians["onnxruntime x1"]
    for label, seconds in medians.items():
        print(f"  {label:16s} {seconds * 1e3:8.2f} ms  {seconds / base:5.2f} x onnxruntime x1")


if __name__ == "__main__":
    main()
