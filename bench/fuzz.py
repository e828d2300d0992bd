"""Long-run differential fuzzing: the suite's fuzzers (`tests/fuzz/`) at any size, with counts per outcome.

    python bench/fuzz.py --graphs 2000 --levels 0,1,2,3 --loader 10000 --parser 10000 --seed 1

Random valid ONNX graphs (`tests/fuzz/strategies.py`) run through minimlc at each level against ONNX Runtime; random
and mutated bytes go into the ONNX loader; mutated `.mlir` test inputs go into `mini-opt`. Each case is `ok`,
`refused` (a clear unsupported-feature or import error), `mismatch` or `crash`; the first few failures are printed
with the graph's ops. A case running longer than `--timeout` seconds is a hang: the watchdog prints every thread's
stack and exits with status 3 (the case is the one the last progress line names). Exit status 1 if anything
mismatched or crashed.
"""

from __future__ import annotations

import argparse
import faulthandler
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from hypothesis import HealthCheck, given, seed, settings
from oracles import Outcome, differential, load_bytes, mlir_seeds, mutate, parse_text
from strategies import onnx_graphs

SHOWN_FAILURES = 10


class Tally:
    """Outcome counts of one fuzzer, its first failures, and a progress line every few seconds."""

    def __init__(self, name: str, total: int, timeout: float) -> None:
        self.name, self.total, self.timeout = name, total, timeout
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.start = self.last_report = time.perf_counter()

    def add(self, outcome: Outcome, label: str) -> None:
        faulthandler.dump_traceback_later(self.timeout, exit=True)  # re-armed: the next case gets the whole timeout
        self.counts[outcome.kind] += 1
        if outcome.kind in ("mismatch", "crash") and len(self.failures) < SHOWN_FAILURES:
            self.failures.append(f"{outcome.kind}: {label}: {outcome.message}")
        now = time.perf_counter()
        if now - self.last_report > 5:
            self.last_report = now
            done = sum(self.counts.values())
            print(f"  {self.name}: {done}/{self.total} {dict(self.counts)} (last: {label[:80]})", flush=True)

    def report(self) -> bool:
        seconds = time.perf_counter() - self.start
        print(f"{self.name}: {sum(self.counts.values())} cases in {seconds:.0f} s: {dict(sorted(self.counts.items()))}")
        for failure in self.failures:
            print(f"  {failure}")
        return not (self.counts["mismatch"] or self.counts["crash"])


def fuzz_graphs(count: int, level: int, seed_value: int, timeout: float) -> Tally:
    tally = Tally(f"graphs O{level}", count, timeout)

    @seed(seed_value * 10 + level)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=onnx_graphs())
    def run(case: tuple[object, dict[str, np.ndarray]]) -> None:
        model, feeds = case
        tally.add(differential(model, feeds, level), " -> ".join(n.op_type for n in model.graph.node))  # type: ignore[attr-defined]

    run()
    return tally


def fuzz_inputs(name: str, count: int, make: Callable[[int], tuple[Outcome, str]], timeout: float) -> Tally:
    tally = Tally(name, count, timeout)
    for index in range(count):
        tally.add(*make(index))
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=200, help="random graphs per level (default 200; 0: none)")
    parser.add_argument("--levels", default="0,3", help="opt levels, comma-separated (default 0,3)")
    parser.add_argument("--loader", type=int, default=1000, help="byte strings into the ONNX loader (default 1000)")
    parser.add_argument("--parser", type=int, default=1000, help="mutated .mlir inputs into mini-opt (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120, help="seconds one case may take before it is a hang")
    args = parser.parse_args()
    faulthandler.dump_traceback_later(args.timeout, exit=True)
    rng = np.random.default_rng(args.seed)
    tallies: list[Tally] = []
    for level in (int(text) for text in args.levels.split(",") if args.graphs):
        tallies.append(fuzz_graphs(args.graphs, level, args.seed, args.timeout))
    valid = Path(__file__).resolve().parents[1] / "examples" / "make_mlp.py"
    seed_model = _mlp_bytes(valid)

    def loader_case(index: int) -> tuple[Outcome, str]:
        data = rng.bytes(int(rng.integers(0, 400))) if index % 2 else mutate(seed_model, rng)
        return load_bytes(data), f"input {index} ({len(data)} bytes)"

    tallies.append(fuzz_inputs("loader", args.loader, loader_case, args.timeout))
    seeds = mlir_seeds()
    with tempfile.TemporaryDirectory() as tmp:

        def parser_case(index: int) -> tuple[Outcome, str]:
            text = mutate(seeds[index % len(seeds)].encode(), rng).decode(errors="replace")
            return parse_text(text, Path(tmp)), f"input {index} (seed file {index % len(seeds)})"

        tallies.append(fuzz_inputs("parser", args.parser, parser_case, args.timeout))
    faulthandler.cancel_dump_traceback_later()
    print()
    clean = [tally.report() for tally in tallies]
    return 0 if all(clean) else 1


def _mlp_bytes(script: Path) -> bytes:
    """The bundled example model, written by its script into a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp.onnx"
        subprocess.run([sys.executable, str(script), str(path)], check=True, capture_output=True)
        return path.read_bytes()


if __name__ == "__main__":
    sys.exit(main())
