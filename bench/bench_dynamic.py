"""Dynamic shapes: one session over a model with symbolic dimensions vs the same model compiled for each shape.

    python bench/bench_dynamic.py                                   # bert at (1, 128), resnet50 at batch 1 and 8
    python bench/bench_dynamic.py --models mlp --quick --json dyn.json

Workloads, each a model whose inputs declare `dim_param`s as the dynamo exporter writes them:
`bert` (`examples/dynamic_transformers.py`: bench_models' BERT sizes, 4 layers, hidden 256, 4 heads, FFN 1024, inputs
`input_ids` and `attention_mask` [batch, sequence]) at (batch, sequence) = (1, 128); `resnet50` (onnx's light
ResNet-50 with its batch made symbolic: the input's and output's first dimension named `batch`, the flattening
Reshape's target `[1, 2048]` written `[0, 2048]`) at batch 1 and 8; `mlp` (the example MLP 784-128-10 with a symbolic
batch) at batch 1 and 8.

Per workload, one `dynamic` session serves every shape (`InferenceSession(model)`: its `stats["compiles"]` says how
many compiles that took, `symbolic` whether it compiled once with run-time extents or fell back to one
specialisation per shape, and why); per shape a `static` session compiles the model with `input_shapes` fixing every
dimension. Both run the same feeds, interleaved (one call each per round, order flipped every round), and the table
gives medians and `dyn/static`. Progress goes to stderr, the table to stdout; `--json` also writes every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import CLOCKS, interleaved_medians
from dynamic_transformers import bert
from make_mlp import build_mlp
from transformer_models import Dims

from minimlc import InferenceSession
from minimlc.tools.conformance import light_model_paths

Shape = dict[str, tuple[int, ...]]


def with_symbolic_batch(model: onnx.ModelProto, batch_reshapes: bool = True) -> onnx.ModelProto:
    """`model` with the first dimension of its non-initializer inputs and of its outputs named `batch`, value infos
    dropped, and (`batch_reshapes`) constant Reshape targets that start with 1 starting with 0 (copy the batch)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    weights = {init.name for init in model.graph.initializer}
    for value in [*(i for i in model.graph.input if i.name not in weights), *model.graph.output]:
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    del model.graph.value_info[:]
    if batch_reshapes:
        targets = {node.input[1] for node in model.graph.node if node.op_type == "Reshape"}
        for init in model.graph.initializer:
            if init.name in targets:
                target = onnx.numpy_helper.to_array(init).copy()
                if target.ndim == 1 and target.size and target[0] == 1:
                    target[0] = 0
                    init.CopyFrom(onnx.numpy_helper.from_array(target, init.name))
    return model


def _light_resnet50() -> onnx.ModelProto:
    path = next(path for path in light_model_paths() if path.stem == "light_resnet50")
    return with_symbolic_batch(onnx.load(path))


WORKLOADS: dict[str, tuple[Callable[[], onnx.ModelProto], list[dict[str, int]]]] = {
    "bert": (
        lambda: bert(Dims(tokens=128, hidden=256, heads=4, ffn=1024), layers=4, vocab=30522),
        [{"batch": 1, "sequence": 128}],
    ),
    "resnet50": (_light_resnet50, [{"batch": 1}, {"batch": 8}]),
    "mlp": (lambda: with_symbolic_batch(build_mlp(batch=1)), [{"batch": 1}, {"batch": 8}]),
}
"""Workload -> (model builder, the symbol values it is timed at)."""


@dataclass
class Row:
    """One workload at one shape."""

    workload: str
    shape: str
    static_ms: float | None = None
    dynamic_ms: float | None = None
    dynamic_over_static: float | None = None
    static_compile_seconds: float | None = None
    dynamic_compiles: int | None = None
    symbolic: str = ""
    """`yes` when the dynamic session compiled once with run-time extents, else the fallback's reason."""
    max_abs_diff: float | None = None
    rounds: int = 0
    error: str = ""


def _shapes(session: InferenceSession, symbols: dict[str, int]) -> Shape:
    """Each input's shape with its symbols set to `symbols`."""
    return {
        info.name: tuple(symbols[dim] if isinstance(dim, str) else dim for dim in info.shape)
        for info in session.get_inputs()
    }


def _feeds(session: InferenceSession, shapes: Shape) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        info.name: rng.integers(0, 2 if "mask" in info.name else 100, shapes[info.name]).astype(info.dtype)
        if np.issubdtype(info.dtype, np.integer)
        else rng.standard_normal(shapes[info.name]).astype(info.dtype)
        for info in session.get_inputs()
    }


def bench_workload(name: str, args: argparse.Namespace) -> list[Row]:
    build, sizes = WORKLOADS[name]
    model = build()
    print(f"{name}: compiling the dynamic session ...", file=sys.stderr, flush=True)
    dynamic = InferenceSession(model, cache=False, num_threads=args.threads)
    rows = []
    for symbols in sizes:
        row = Row(name, ",".join(f"{key}={value}" for key, value in symbols.items()))
        rows.append(row)
        shapes = _shapes(dynamic, symbols)
        feeds = _feeds(dynamic, shapes)
        try:
            ours = dynamic.run(None, feeds)
            start = time.perf_counter()
            static = InferenceSession(model, cache=False, num_threads=args.threads, input_shapes=shapes)
            row.static_compile_seconds = time.perf_counter() - start
            theirs = static.run(None, feeds)
        except Exception as error:  # a benchmark reports every row, whatever stops one of them
            row.error = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            print(f"{name} {row.shape}: {row.error}", file=sys.stderr, flush=True)
            continue
        row.max_abs_diff = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs))
        print(f"{name} {row.shape}: timing ...", file=sys.stderr, flush=True)
        contenders = {"static": lambda: static.run(None, feeds), "dynamic": lambda: dynamic.run(None, feeds)}
        medians, row.rounds = interleaved_medians(
            contenders, args.warmup, args.runs, args.budget_seconds, CLOCKS[args.clock]
        )
        row.static_ms, row.dynamic_ms = medians["static"] * 1e3, medians["dynamic"] * 1e3
        row.dynamic_over_static = medians["dynamic"] / medians["static"]
    for row in rows:
        row.dynamic_compiles = dynamic.stats.get("compiles")
        fallback = dynamic.stats.get("symbolic_fallback")
        row.symbolic = "yes" if not fallback else f"no: {fallback}"
    return rows


def table(rows: list[Row]) -> str:
    def cell(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    header = f"{'workload':<10}{'shape':<26}{'static ms':>10}{'dynamic ms':>12}{'dyn/static':>11}{'compiles':>9}"
    lines = [header + "  symbolic"]
    for row in rows:
        lines.append(
            f"{row.workload:<10}{row.shape:<26}{cell(row.static_ms, 3):>10}{cell(row.dynamic_ms, 3):>12}"
            f"{cell(row.dynamic_over_static, 2):>11}{row.dynamic_compiles or '-':>9}  {row.error or row.symbolic}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bert,resnet50", help="comma-separated workloads: " + ",".join(WORKLOADS))
    parser.add_argument("--threads", type=int, default=1, help="threads of every session (default 1)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall or cpu time (one thread)")
    parser.add_argument("--budget-seconds", type=float, default=5.0, help="timing budget per row (default 5)")
    parser.add_argument("--runs", type=int, default=1000, help="at most this many rounds per row")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--quick", action="store_true", help="a short budget (for tests)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.models.split(",") if name.strip()]
    if unknown := [name for name in names if name not in WORKLOADS]:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    if args.threads < 1 or args.budget_seconds < 0 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be positive, --budget-seconds and --warmup not negative")
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu needs --threads 1")
    if args.quick:
        args.budget_seconds, args.runs, args.warmup = 0.2, 20, 1
    rows = [row for name in names for row in bench_workload(name, args)]
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(row) for row in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
