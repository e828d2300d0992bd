"""Start-up cost of a saved model in a fresh process: importing minimlc, `minimlc.runtime.load`, the first run.

    python bench/bench_load.py                          # light ResNet-50, compiled and saved to a temporary file
    python bench/bench_load.py squeezenet --runs 5      # another light model (or a path to an .onnx file)
    python bench/bench_load.py --mlc resnet50.mlc       # a model saved before (minimlc compile M.onnx -o M.mlc)

Each of `--runs` fresh interpreters imports `minimlc.runtime` (with numpy and llvmlite), loads the file, runs the
model twice on zeros and reports its times; the table gives their medians and minima. `process` is the parent's
wall time for the whole child, interpreter start-up and exit included. The file is read once before the first run,
so every run finds it in the page cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
from minimlc.runtime import load
imported = time.perf_counter()
session = load(sys.argv[1], num_threads=int(sys.argv[2]) if sys.argv[2] else None)
loaded = time.perf_counter()
feeds = {info.name: np.zeros(info.shape, info.dtype) for info in session.get_inputs()}
session.run(None, feeds)
first = time.perf_counter()
session.run(None, feeds)
second = time.perf_counter()
print(json.dumps({"import": imported - start, "load": loaded - imported, "first run": first - loaded,
                  "second run": second - first}))
"""
STEPS = ("import", "load", "first run", "second run", "process")


def save_model(model: str, directory: Path) -> Path:
    """Compile `model` (a light model's name or an .onnx path) without the compile cache and save it in `directory`."""
    from minimlc import InferenceSession
    from minimlc.tools.conformance import light_model_paths

    paths = {path.stem.removeprefix("light_"): path for path in light_model_paths()}
    source = paths.get(model, Path(model))
    if not source.is_file():
        raise SystemExit(f"bench_load: no model '{model}': give an .onnx path or one of {', '.join(paths)}")
    print(f"compiling {source.name} ...", file=sys.stderr, flush=True)
    saved = directory / f"{source.stem}.mlc"
    InferenceSession(source, cache=False).save(saved)
    return saved


def measure(saved: Path, runs: int, threads: int | None) -> dict[str, list[float]]:
    """Seconds per step (`STEPS`) in each of `runs` fresh processes."""
    samples: dict[str, list[float]] = {step: [] for step in STEPS}
    saved.read_bytes()  # into the page cache
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(saved), str(threads or "")], capture_output=True, text=True, check=True
        )
        samples["process"].append(time.perf_counter() - start)
        for step, seconds in json.loads(child.stdout).items():
            samples[step].append(seconds)
    return samples


def table(saved: Path, samples: dict[str, list[float]]) -> str:
    lines = [f"{saved.name} ({saved.stat().st_size / 1e6:.1f} MB), {len(samples['load'])} fresh processes",
             f"{'step':<11} {'median ms':>10} {'min ms':>8}"]
    for step, seconds in samples.items():
        lines.append(f"{step:<11} {statistics.median(seconds) * 1e3:>10.1f} {min(seconds) * 1e3:>8.1f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="resnet50", help="a light model's name or an .onnx path")
    parser.add_argument("--mlc", type=Path, help="time this saved model instead of compiling MODEL")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes (default 7)")
    parser.add_argument("--threads", type=int, help="the loaded session's threads (default: one per core)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        saved = args.mlc or save_model(args.model, Path(directory))
        print(table(saved, measure(saved, args.runs, args.threads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
