"""Per-kernel time of a model's native code, sampled with Linux `perf`.

    python bench/profile_kernels.py MODEL.onnx [--random-weights] [--threads N] [--runs 20] [--dim batch=8]

Compiles the model as `InferenceSession` does, except that every kernel function is kept out of line (`noinline`,
external linkage) so that its address range is known; then runs the model `--runs` times under `perf record`
(attached to this process) and charges each sample to the function whose code contains it. Prints, per function,
the share of samples and the implied milliseconds per call and, with `--threads` above 1, how many of its samples
came from the calling thread and how many from the pool's workers (a kernel whose samples are all the caller's ran
serially while the workers waited). A model with symbolic dimensions compiles once with run-time extents and runs at
the sizes `--dim NAME=VALUE` gives (each symbol is 1 unless given). Samples outside the JIT-compiled code (Python, the
thread pool's waiting) are reported as one line. Needs `perf` on the PATH and perf_event_paranoid <= 2.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import bisect  # noqa: E402
import dataclasses  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import onnx  # noqa: E402
from bench_models import random_feeds  # noqa: E402

import minimlc.driver.codegen as codegen  # noqa: E402
from minimlc import InferenceSession  # noqa: E402
from minimlc.tools.model_tools import randomise_weights  # noqa: E402

_DEFINE = re.compile(r"^define internal (.*?)@([\w.]+)\((.*?)\)(.*)$", re.MULTILINE)


def out_of_line(llvm_ir: str) -> str:
    """`llvm_ir` with every internal function external and `noinline`, so it keeps its own address range."""
    return _DEFINE.sub(lambda m: f"define {m[1]}@{m[2]}({m[3]}) noinline{m[4]}", llvm_ir)


def _addresses(jit: object, names: list[str]) -> Iterator[tuple[int, str]]:
    """(address, name) of each function the loaded code has; the entries' unpacked wrappers (`main`, `main_init`)
    are internal in a model's code and dropped, and have none."""
    for name in names:
        try:
            yield jit.function_address(name), name  # type: ignore[attr-defined]
        except KeyError:
            continue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--random-weights", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="a symbol's run size")
    args = parser.parse_args()
    model = onnx.load(args.model)
    if args.random_weights:
        model = randomise_weights(model, seed=0)
    emit, translate = codegen.emit_llvm_ir, codegen.translate_to_llvm_ir
    codegen.emit_llvm_ir = lambda module: out_of_line(emit(module))
    codegen.translate_to_llvm_ir = lambda module: out_of_line(translate(module))
    session = InferenceSession(model, num_threads=args.threads, cache=False)
    names = re.findall(r"^define .*?@([\w.]+)\(", session._model.llvm_ir, re.MULTILINE)
    starts = sorted(_addresses(session._model.jit, names))
    sizes = {name: int(value) for name, value in (dim.split("=", 1) for dim in args.dim)}
    inputs = [
        dataclasses.replace(info, shape=[d if isinstance(d, int) else sizes.get(d, 1) for d in info.shape])
        for info in session.get_inputs()
    ]
    feeds = random_feeds(inputs)
    session.run(None, feeds)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        recorder = subprocess.Popen(
            ["perf", "record", "-q", "-F", "4000", "-p", str(os.getpid()), "-o", data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # perf needs a moment to attach before the timed runs
        start = time.perf_counter()
        for _ in range(args.runs):
            session.run(None, feeds)
        elapsed = (time.perf_counter() - start) / args.runs
        recorder.send_signal(signal.SIGINT)
        recorder.wait()
        script = subprocess.run(
            ["perf", "script", "-i", data, "-F", "tid,ip,sym,dso"], capture_output=True, text=True, check=True
        ).stdout
    addresses = [start for start, _ in starts]
    counts: Counter[str] = Counter()
    by_workers: Counter[str] = Counter()
    outside: Counter[str] = Counter()
    for line in script.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        ip = int(fields[1], 16)
        slot = bisect.bisect_right(addresses, ip) - 1
        worker = int(fields[0]) != os.getpid()
        # Samples in anonymous memory within 1 MiB after a function's start are the JIT's code.
        if slot >= 0 and ip - addresses[slot] < 1 << 20 and ("/perf-" in fields[-1] or "unknown" in fields[-1]):
            counts[starts[slot][1]] += 1
            by_workers[starts[slot][1]] += worker
        else:
            outside[f"{'worker' if worker else 'caller'} {fields[-1]} {' '.join(fields[2:-1])}"] += 1
    inside = sum(counts.values())
    print(f"{args.model}: {elapsed * 1e3:.1f} ms per run (under perf), {inside} samples in model code")
    threads = f"  {'caller':>7s} {'workers':>7s}" if args.threads > 1 else ""
    print(f"  {'function':40s} {'samples':>7s}  {'share':>7s}  {'ms/run':>7s}{threads}")
    for name, n in counts.most_common(args.top):
        share = n / max(inside, 1)
        threads = f"  {n - by_workers[name]:7d} {by_workers[name]:7d}" if args.threads > 1 else ""
        print(f"  {name:40s} {n:7d}  {share * 100:5.1f} %  {share * elapsed * 1e3:7.2f}{threads}")
    print(f"outside the model's code: {sum(outside.values())} samples; most frequent:")
    for name, n in outside.most_common(12):
        print(f"  {n:7d}  {name[:100]}")


if __name__ == "__main__":
    main()
