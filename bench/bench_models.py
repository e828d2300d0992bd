"""Whole-model benchmark: minimlc vs ONNX Runtime on the MLP, a MatMul, a Conv+ReLU block, onnx's light CNNs and
transformers.

    python bench/bench_models.py                                  # every workload at 1 and 2 threads
    python bench/bench_models.py --models resnet50,squeezenet --threads 1 --json bench/results/models.json
    python bench/bench_models.py --quick --models mlp,matmul --matmul-size 256

Workloads: `mlp` (the example MLP 784-128-10, batch 1), `matmul` (MatMul `--matmul-size`^3 with a constant B),
`conv_relu` (Conv 1x64x56x56, 3x3, 64 filters, pad 1, + ReLU) and the nine light models (1x3x224x224 CNNs whose
weights are ConstantOfShape(0.02); `--random-weights` gives them seeded random ones, `model_tools.randomise_weights`,
as a trained model's: with equal weights OpenVINO merges the convolutions that read one input, Inception's sibling
1x1s, into one), and three transformers built as the exporter writes them
(`examples/transformer_models.py`): `bert` (4 post-norm layers, hidden 256, 4 heads, FFN 1024, erf-GELU, 128 int64
token ids through an embedding Gather), `vit` (224x224 image in 16x16 patches: 197 tokens of 192, 3 heads, FFN 768, 4
pre-norm layers, 1000 classes) and `gpt` (one causal decoder block, nanoGPT's, at BERT's sizes). Float inputs are
seeded random normals, integer inputs (token ids) seeded uniform integers in [0, 100).

Each workload compiles once (the compile time is the wall time to a ready `InferenceSession`, compile cache off); every
thread count runs that same compiled module (`InferenceSession.with_num_threads`) beside an ONNX Runtime session pinned
to the same thread count (intra-op threads = N, inter-op 1, sequential; its idle workers sleep instead of spinning, see
`ort_session`). After a warm-up all of a workload's contenders (minimlc and ONNX Runtime at every thread count) run
interleaved, one call each per round with the order reversed every round, so machine noise hits them alike, until
`--runs` rounds or `--budget-seconds` of timing per thread count (at least 3 rounds if `--runs` allows); figures are
medians. So the thread-scaling columns `mlc/first` and `ORT/first` (latency at this row's thread count over latency at
the first one, `--threads` order) compare times measured in the same rounds. FLOPs count Conv, Gemm and MatMul (2 x
MACs, shapes from onnx shape inference, `model_flops.py`); every other op is ignored. "% peak" is of this machine's
measured one-core fp32 peak (a JIT-compiled FMA loop, `machine_peak.py`) times the thread count; with `--precision
bf16` minimlc's is of the bfloat16 dot product loop's instead (its products run there), ONNX Runtime's still the
FMA's. ONNX Runtime is optional: without it its columns show "-". Progress goes to stderr, the table to stdout;
`--json` also writes every figure.

`--tuning-db PATH` (a database `minimlc tune` wrote) compiles each workload a second time with that database's best
schedules and times it as a third contender in the same interleaved rounds: the columns `tuned ms`, `tuned/def`
(tuned over default schedules) and `tuned/ORT` are medians of the same rounds, so they are the figures to quote on a
loaded machine:

    python bench/bench_models.py --models resnet50 --threads 1 --tuning-db tune.jsonl

`--openvino` adds OpenVINO's CPU plugin (`openvino_contender.py`; `pip install openvino`, or the `bench` extra) as a
contender in the same rounds, at its default precision on this CPU (bf16 where the CPU has AVX512-BF16 or AMX, else
f32; `--openvino-precision f32|bf16` states one): columns `OV ms`, `mlc/OV` and the largest output difference.

    python bench/bench_models.py --models resnet50,densenet121,bert,vit --threads 1 --openvino

`--precision bf16` compiles minimlc's side with bfloat16 products (`InferenceSession(precision="bf16")`: MatMul,
Gemm and Conv on the CPU's bfloat16 dot product); it is refused in one line on a CPU without one. Beside OpenVINO in
bf16 (`--openvino --openvino-precision bf16`) both sides compute alike:

    python bench/bench_models.py --models resnet50 --threads 1 --precision bf16 --openvino --openvino-precision bf16

`--dynamic` compares instead, for `bert`, `resnet50` and `mlp` exported with dynamic axes, one session serving every
shape against the same model compiled with static shapes, side by side (`bench_dynamic.py`; `--models`, the first of
`--threads`, `--clock`, `--runs`, `--warmup`, `--budget-seconds`, `--quick` and `--json` carry over):

    python bench/bench_models.py --dynamic --models bert,resnet50 --threads 1

`--clock cpu` (with `--threads 1`) times each call by the calling thread's CPU time instead of wall time: on a
machine other processes load, a preempted call's wall time includes the other process' slice, its CPU time does
not. Both minimlc's one-thread pool and ONNX Runtime at one intra-op thread compute in the calling thread, so the
figures stay comparable; the peak (`machine_peak.py`) is a CPU-time figure either way.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # numpy's sgemm peak is a one-core figure

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import llvmlite.binding as llvm  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from bench_kernels import conv_model, matmul_model  # noqa: E402
from bench_options import non_negative_float, non_negative_int, positive_int, thread_counts  # noqa: E402
from machine_peak import MachinePeak, measure  # noqa: E402
from make_mlp import build_mlp  # noqa: E402
from model_flops import count_flops  # noqa: E402
from models_table import Row, table_header, table_row  # noqa: E402
from openvino_contender import PRECISIONS, openvino_module, openvino_session  # noqa: E402
from transformer_models import Dims, bert, gpt, vit  # noqa: E402

from minimlc import InferenceSession  # noqa: E402
from minimlc.lowering.abi import PARALLEL_FOR  # noqa: E402
from minimlc.lowering.target import BF16_FEATURES, target_from_name  # noqa: E402
from minimlc.tools.conformance import light_model_paths  # noqa: E402
from minimlc.tools.model_tools import randomise_weights  # noqa: E402

MIN_ROUNDS = 3
Feeds = dict[str, np.ndarray]


def workloads(matmul_size: int, random_weights: bool = False) -> dict[str, Callable[[], onnx.ModelProto]]:
    """Workload name -> a function building its model, in table order; with `random_weights` the light CNNs get
    seeded random weights (`randomise_weights`) instead of their constant ones."""
    rng = np.random.default_rng(0)
    builders: dict[str, Callable[[], onnx.ModelProto]] = {
        "mlp": lambda: build_mlp(batch=1),
        "matmul": lambda: matmul_model(matmul_size, rng.standard_normal((matmul_size, matmul_size), dtype=np.float32)),
        "conv_relu": lambda: conv_model(64, 56, 64, 3, 1, 1),
    }
    for path in light_model_paths():
        load = (lambda path: randomise_weights(onnx.load(path), seed=0)) if random_weights else onnx.load
        builders[path.stem.removeprefix("light_")] = lambda path=path, load=load: load(path)
    text = Dims(tokens=128, hidden=256, heads=4, ffn=1024)
    builders["bert"] = lambda: bert(text, layers=4, vocab=30522)
    builders["vit"] = lambda: vit(Dims(tokens=197, hidden=192, heads=3, ffn=768), 4, image=224, patch=16, classes=1000)
    builders["gpt"] = lambda: gpt(text, vocab=50257)
    return builders


def random_feeds(inputs: list[Any]) -> Feeds:
    """Seeded inputs for a session's input infos: normals for floats, token ids in [0, 100) for integers."""
    rng = np.random.default_rng(1)
    return {
        info.name: rng.integers(0, 100, info.shape).astype(info.dtype)
        if np.issubdtype(info.dtype, np.integer)
        else rng.standard_normal(info.shape).astype(info.dtype)
        for info in inputs
    }


def ort_module() -> Any | None:
    """The onnxruntime module, or None when it is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def ort_session(
    ort: Any, model: onnx.ModelProto, threads: int, level: Any = None
) -> Callable[[Feeds], list[np.ndarray]]:
    """An ONNX Runtime CPU session: `threads` intra-op threads that sleep when idle, one inter-op, sequential (at
    graph optimisation `level`, by default ONNX Runtime's)."""
    options = ort.SessionOptions()
    if level is not None:
        options.graph_optimization_level = level
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    # Spinning workers would take the core the interleaved minimlc call needs (on a loaded 2-core machine a 1-thread
    # minimlc conv measured 20 ms beside a spinning 2-thread ORT, 8 ms beside a non-spinning one; ORT 18 vs 7 ms).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
"""`--clock`: wall time, or the calling thread's CPU time (one-thread rows only: minimlc's one-thread pool and ONNX
Runtime's single intra-op thread both run in the caller), which other processes preempting it do not advance."""


def interleaved_medians(
    contenders: dict[str, Callable[[], object]],
    warmup: int,
    max_rounds: int,
    budget_seconds: float,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, float], int]:
    """Median seconds per call (by `clock`) of each contender and the rounds timed; the call order flips every
    round."""
    order = list(contenders)
    for _ in range(warmup):
        for name in order:
            contenders[name]()
    samples: dict[str, list[float]] = {name: [] for name in order}
    rounds, start = 0, time.perf_counter()
    while rounds < max_rounds and (rounds < MIN_ROUNDS or time.perf_counter() - start < budget_seconds):
        for name in order if rounds % 2 == 0 else reversed(order):
            begin = clock()
            contenders[name]()
            samples[name].append(clock() - begin)
        rounds += 1
    return {name: statistics.median(times) for name, times in samples.items()}, rounds


@dataclass
class Settings:
    """How every workload is timed (after the defaults and `--quick` are applied)."""

    threads: list[int]
    warmup: int
    runs: int
    budget_seconds: float
    clock: str = "wall"
    openvino: str | None = None
    """`--openvino-precision` where OpenVINO is a contender (`--openvino`), else None."""
    precision: str = "fp32"
    """minimlc's `--precision`."""


def _error(error: Exception) -> str:
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:200]}"


def bench_workload(
    name: str,
    build: Callable[[], onnx.ModelProto],
    settings: Settings,
    peak: MachinePeak,
    ort: Any | None,
    tuning_db: str | None = None,
) -> list[Row]:
    """Compile `name` once (and once more with `tuning_db`'s schedules), then time it at every thread count
    against ONNX Runtime."""
    rows = [Row(name, threads) for threads in settings.threads]
    model = build()
    try:
        flops: int | None = count_flops(model)
    except Exception as error:  # a benchmark reports every workload, whatever stops one of them
        flops = None
        rows[0].errors.append(f"FLOPs: {_error(error)}")
    for row in rows:
        row.gflop = flops / 1e9 if flops is not None else None
    print(f"{name}: compiling ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        compiled = InferenceSession(model, num_threads=settings.threads[0], cache=False, precision=settings.precision)
    except Exception as error:
        for row in rows:
            row.errors.append(f"minimlc: {_error(error)}")
        print(f"{name}: not compiled ({rows[0].errors[-1]})", file=sys.stderr, flush=True)
        return rows
    compile_seconds = time.perf_counter() - start
    feeds = random_feeds(compiled.get_inputs())
    tuned = _tuned_session(compiled, model, tuning_db, rows, settings.precision) if tuning_db else None
    print(f"{name}: compiled in {compile_seconds:.1f} s; timing ...", file=sys.stderr, flush=True)
    contenders: dict[str, Callable[[], object]] = {}
    for row in rows:
        row.compile_seconds = compile_seconds
        row.minimlc_parallel = PARALLEL_FOR in compiled.llvm_ir
        session = compiled if row.threads == compiled.num_threads else compiled.with_num_threads(row.threads)
        contenders[f"minimlc {row.threads}"] = lambda session=session: session.run(None, feeds)
        if tuned is not None:
            tuned_session = tuned if row.threads == tuned.num_threads else tuned.with_num_threads(row.threads)
            ours, theirs = session.run(None, feeds), tuned_session.run(None, feeds)
            row.tuned_max_abs_diff = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs))
            contenders[f"tuned {row.threads}"] = lambda tuned_session=tuned_session: tuned_session.run(None, feeds)
        if ort is not None:
            make_ort = functools.partial(ort_session, ort, model, row.threads)
            row.max_abs_diff_vs_ort = _add_contender(contenders, "onnxruntime", make_ort, session, feeds, row)
        if settings.openvino is not None:
            make_openvino = functools.partial(_openvino_run, name, model, row.threads, settings.openvino)
            row.max_abs_diff_vs_openvino = _add_contender(contenders, "openvino", make_openvino, session, feeds, row)
    budget = settings.budget_seconds * len(rows)
    medians, rounds = interleaved_medians(contenders, settings.warmup, settings.runs, budget, CLOCKS[settings.clock])
    first = rows[0].threads
    for row in rows:
        row.rounds = rounds
        mini, theirs = medians[f"minimlc {row.threads}"], medians.get(f"onnxruntime {row.threads}")
        row.minimlc_ms = mini * 1e3
        row.minimlc_over_first = mini / medians[f"minimlc {first}"]
        if (tuned_median := medians.get(f"tuned {row.threads}")) is not None:
            row.tuned_ms = tuned_median * 1e3
            row.tuned_over_default = tuned_median / mini
        if theirs is not None:
            row.ort_ms = theirs * 1e3
            row.minimlc_over_ort = mini / theirs
            if row.tuned_ms is not None:
                row.tuned_over_ort = row.tuned_ms / row.ort_ms
            if f"onnxruntime {first}" in medians:
                row.ort_over_first = theirs / medians[f"onnxruntime {first}"]
        if (openvino_median := medians.get(f"openvino {row.threads}")) is not None:
            row.openvino_ms = openvino_median * 1e3
            row.minimlc_over_openvino = mini / openvino_median
        if flops is not None:
            core_peak = peak.fma_gflops * row.threads
            bf16_peak = peak.bf16_dot_gflops if settings.precision == "bf16" else None
            row.minimlc_gflops = flops / mini / 1e9
            row.minimlc_pct_peak = 100 * row.minimlc_gflops / (bf16_peak * row.threads if bf16_peak else core_peak)
            if theirs is not None:
                row.ort_gflops = flops / theirs / 1e9
                row.ort_pct_peak = 100 * row.ort_gflops / core_peak
    return rows


def _add_contender(
    contenders: dict[str, Callable[[], object]],
    label: str,
    make: Callable[[], Callable[[Feeds], list[np.ndarray]]],
    session: InferenceSession,
    feeds: Feeds,
    row: Row,
) -> float | None:
    """Add the run `make()` builds as contender "`label` `threads`" and return the largest difference of its outputs
    from minimlc's; None, with the error in `row`, where it cannot be built or run."""
    try:
        run = make()
        theirs = run(feeds)
    except Exception as error:
        row.errors.append(f"{label}: {_error(error)}")
        return None
    contenders[f"{label} {row.threads}"] = lambda: run(feeds)
    return max(float(np.max(np.abs(a - b))) for a, b in zip(session.run(None, feeds), theirs))


def _openvino_run(
    name: str, model: onnx.ModelProto, threads: int, precision: str
) -> Callable[[Feeds], list[np.ndarray]]:
    """OpenVINO's run of `model` (`openvino_contender.py`), saying which precision it computes in."""
    run, computes_in = openvino_session(openvino_module(), model, threads, precision)
    print(f"{name}: OpenVINO computes in {computes_in} at {threads} thread(s)", file=sys.stderr)
    return run


def _tuned_session(
    compiled: InferenceSession, model: onnx.ModelProto, tuning_db: str, rows: list[Row], precision: str
) -> InferenceSession | None:
    """`model` compiled with `tuning_db`'s best schedules (None, with the error in the rows, if it fails)."""
    try:
        return InferenceSession(
            model, num_threads=compiled.num_threads, cache=False, tuning_db=tuning_db, precision=precision
        )
    except Exception as error:
        for row in rows:
            row.errors.append(f"minimlc with {tuning_db}: {_error(error)}")
        return None


def _bench_dynamic(args: argparse.Namespace) -> int:
    """`--dynamic`: `bench_dynamic.py` over the chosen models (default bert and resnet50) at the first thread count."""
    import bench_dynamic

    forwarded = ["--models", args.models or "bert,resnet50", "--threads", str(args.threads[0]), "--clock", args.clock]
    for option, value in (("--runs", args.runs), ("--warmup", args.warmup), ("--budget-seconds", args.budget_seconds)):
        if value is not None:
            forwarded += [option, str(value)]
    forwarded += ["--quick"] * args.quick + (["--json", args.json] if args.json else [])
    return bench_dynamic.main(forwarded)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated workload names (default: all); see the module docstring")
    parser.add_argument("--threads", type=thread_counts, default=[1, 2], help="thread counts (default 1,2)")
    parser.add_argument("--runs", type=positive_int, help="most timed rounds per workload (default 1000)")
    parser.add_argument(
        "--budget-seconds", type=non_negative_float, help="timing budget per workload and thread count (default 10)"
    )
    parser.add_argument("--warmup", type=non_negative_int, help="untimed rounds first (default 3)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (default), or the calling thread's CPU time, which a loaded machine's other processes do "
        "not advance (only with --threads 1)",
    )
    parser.add_argument("--matmul-size", type=positive_int, default=1024, help="MatMul M=K=N (default 1024)")
    parser.add_argument("--quick", action="store_true", help="few rounds and a short peak measurement (for tests)")
    parser.add_argument("--json", metavar="FILE", help="also write the machine, settings and rows as JSON")
    parser.add_argument(
        "--tuning-db",
        metavar="PATH",
        help="also time a build with this tuning database's best schedules (minimlc tune)",
    )
    parser.add_argument(
        "--openvino",
        action="store_true",
        help="also time OpenVINO's CPU plugin in the same rounds (needs `pip install openvino`)",
    )
    parser.add_argument(
        "--openvino-precision",
        choices=PRECISIONS,
        default="default",
        help="OpenVINO's inference precision: its default on this CPU (bf16 where the CPU has it), f32 or bf16",
    )
    parser.add_argument(
        "--precision",
        choices=("fp32", "bf16"),
        default="fp32",
        help="minimlc's precision: fp32 (default) or bf16 (bfloat16 products; needs a CPU with a bfloat16 dot product)",
    )
    parser.add_argument(
        "--random-weights",
        action="store_true",
        help="give the light CNNs seeded random weights instead of their constant 0.02 (as a trained model's differ)",
    )
    parser.add_argument(
        "--dynamic",
        action="store_true",
        help="compare one session over dynamic axes with static builds per shape instead (bench_dynamic.py)",
    )
    args = parser.parse_args(argv)
    if args.dynamic:
        return _bench_dynamic(args)
    builders = workloads(args.matmul_size, args.random_weights)
    names = args.models.split(",") if args.models else list(builders)
    if unknown := [name for name in names if name not in builders]:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(builders)}")
    if args.clock == "cpu" and args.threads != [1]:
        parser.error("--clock cpu times the calling thread only: use it with --threads 1")
    if args.precision == "bf16" and not (host := target_from_name("host")).dot_bf16_bits:
        parser.error(f"--precision bf16: this CPU ({host.cpu}) has no bfloat16 dot product ({BF16_FEATURES})")
    if args.openvino and openvino_module() is None:
        parser.error("--openvino: openvino is not installed (pip install openvino)")
    settings = Settings(
        threads=args.threads,
        warmup=args.warmup if args.warmup is not None else 1 if args.quick else 3,
        runs=args.runs if args.runs is not None else 5 if args.quick else 1000,
        budget_seconds=args.budget_seconds if args.budget_seconds is not None else 1.0 if args.quick else 10.0,
        clock=args.clock,
        openvino=args.openvino_precision if args.openvino else None,
        precision=args.precision,
    )
    ort = ort_module()
    notes = ["FLOPs count Conv, Gemm and MatMul (2 x MACs); every other op is ignored."]
    if ort is None:
        notes.append('onnxruntime is not installed: its columns show "-".')
    load = os.getloadavg()[0]
    print("measuring this machine's peak ...", file=sys.stderr, flush=True)
    peak = measure(*((0.01, 3) if args.quick else (0.05, 7)), bf16=args.precision == "bf16")
    cpu = llvm.get_host_cpu_name()
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, load average {load:.1f} at start; one core's fp32 peak: "
        f"FMA loop {peak.fma_gflops:.1f} GFLOP/s ({peak.vector_lanes} lanes), numpy sgemm 1024^3 "
        f"{peak.numpy_sgemm_gflops:.1f} GFLOP/s; % peak is of the FMA loop x threads"
        + (
            f" (minimlc's: of the bfloat16 dot product loop, {peak.bf16_dot_gflops:.1f} GFLOP/s, x threads)"
            if peak.bf16_dot_gflops
            else ""
        )
        + f"; clock: {args.clock}; minimlc precision: {args.precision}"
    )
    if args.tuning_db and not Path(args.tuning_db).is_file():
        parser.error(f"--tuning-db: no such file: {args.tuning_db}")
    tuned = bool(args.tuning_db)
    print(table_header(tuned, args.openvino), flush=True)
    rows: list[Row] = []
    for name in names:
        rows += bench_workload(name, builders[name], settings, peak, ort, args.tuning_db)
        print("\n".join(table_row(row, tuned, args.openvino) for row in rows[-len(settings.threads) :]), flush=True)
    if serial := [row.workload for row in rows if row.threads > 1 and row.minimlc_parallel is False]:
        notes.append(f"minimlc compiled no parallel loop for {', '.join(serial)}: it ran on one thread in those rows.")
    for note in notes:
        print(f"note: {note}")
    if args.json:
        report = {
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "load_average_at_start": load, **asdict(peak)},
            "onnxruntime": getattr(ort, "__version__", None),
            "openvino": getattr(openvino_module(), "__version__", None) if args.openvino else None,
            "settings": {
                **asdict(settings),
                "matmul_size": args.matmul_size,
                "quick": args.quick,
                **({"tuning_db": args.tuning_db} if tuned else {}),
            },
            "notes": notes,
            "rows": [asdict(row) for row in rows],
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
