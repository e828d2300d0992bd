"""What `minimlc` prints on stderr while it compiles: `compiling MODEL ...`, then each stage on a short line of its own
as it completes (a large model takes seconds per stage), and latencies in milliseconds.

    with compile_progress("model.onnx"):
        session = InferenceSession("model.onnx")
    # compiling model.onnx ...
    #   import     0.412 s
    #   lower      5.103 s
    #   codegen    9.801 s  (4 partitions)
    #   load       0.052 s

A compile the compile cache answers prints the first line only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def compile_progress(model: str, note: str = "") -> Iterator[None]:
    """Print `compiling MODEL NOTE ...`, then the stages of the compiles in this block as they complete
    (`driver.compiler.stage_listener`); the time before the first is the import."""
    from minimlc.driver.compiler import stage_listener

    print(f"compiling {model}{note} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    stages: list[str] = []

    def report(stage: str, seconds: float, detail: str) -> None:
        if not stages:
            _print_stage("import", time.perf_counter() - start - seconds)
        stages.append(stage)
        _print_stage(stage, seconds, detail)

    with stage_listener(report):
        yield


def _print_stage(stage: str, seconds: float, detail: str = "") -> None:
    print(f"  {stage:<8} {seconds:7.3f} s{f'  ({detail})' if detail else ''}", file=sys.stderr, flush=True)


def milliseconds(seconds: float) -> str:
    """A latency in milliseconds, with three significant digits below 1 ms: `0.0123 ms`, `4.567 ms`."""
    value = seconds * 1e3
    return f"{value:.3f} ms" if value >= 1 or value == 0 else f"{value:#.3g} ms"
