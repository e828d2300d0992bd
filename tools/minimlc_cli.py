"""`minimlc`: compile and run ONNX models, compare them with ONNX Runtime, run onnx's conformance tests.

    minimlc run examples/mlp.onnx --repeat 100            # random inputs, output summary, median latency
    minimlc run model.onnx --input x=x.npy --save-outputs out/
    minimlc run model.onnx --input-shape x=8,3,224,224   # fixes the symbolic dimensions of input x
    minimlc compile model.onnx --emit loop -o model.loop.mlir
    minimlc compile model.onnx -o model.mlc                # a saved model: minimlc.runtime.load("model.mlc")
    minimlc build model.onnx -o libmodel.so              # + libmodel.h, libmodel.weights: the model for C programs
    minimlc compile model.onnx --emit obj -o model.o      # the object code alone
    minimlc cache info                                    # the compile cache's folder and entries (clear: empty it)
    minimlc compile model.onnx --emit graph -O1           # the graph after O1's cleanups
    minimlc compile model.onnx --emit space --json       # each kernel's schedule rule and knobs
    minimlc compile model.onnx --stats                    # stage times; kernels, arena and weight bytes
    minimlc compile model.onnx --emit graph --passes-after graph:toy-relu-to-clip   # a plugin's pass in the pipeline
    minimlc tune model.onnx --trials 64 --db tuning.jsonl # measure schedules; resumable
    minimlc run model.onnx --tuning-db tuning.jsonl --profile   # the tuned schedules, each kernel call timed
    minimlc compare model.onnx --random-weights --per-layer   # minimlc vs ONNX Runtime, tensor by tensor
    minimlc conformance --ops Conv,Relu                   # onnx's node tests: native/constant/failed/... by op
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from minimlc.tools import cli_build, cli_cache, cli_options, cli_tables, cli_tune

if TYPE_CHECKING:
    import onnx

EMIT_LEVELS: dict[str, str] = {
    "graph": "graph",
    "te": "te",
    "loop": "loop",
    "schedule": "schedule",
    "space": "schedule",
    "scf": "scf",
    "llvm-dialect": "llvm",
    "llvm-ir": "llvm",
    "obj": "llvm",
}
"""`--emit` level -> the pipeline stage it stops after (`minimlc.lowering.pipeline.STAGES`)."""

STATS_LEVELS = ("scf", "llvm-dialect", "llvm-ir")
"""`--emit` levels past memory planning and weight binding, where `--stats` can report the model's statistics."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `minimlc` console script."""
    parser = _argument_parser()
    args = parser.parse_args(argv)
    from minimlc.driver.shared_library import CompilerNotFoundError, LinkError
    from minimlc.frontend.onnx import ModelImportError
    from minimlc.lowering.schedule.tuning_db import TuningDatabaseError
    from minimlc.runtime.artifact import ArtifactError
    from minimlc.runtime.session import InvalidInputError

    user_errors = (
        ModelImportError,
        InvalidInputError,
        FileNotFoundError,
        cli_options.UsageError,
        _OracleError,
        TuningDatabaseError,
    )
    try:
        return args.command(args)
    except (*user_errors, ArtifactError, CompilerNotFoundError, LinkError) as error:
        print(f"minimlc: error: {error}", file=sys.stderr)
        return 1


class _OracleError(RuntimeError):
    """The oracle runtime (ONNX Runtime or onnx.reference) could not run the model."""


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minimlc", description="Compile and run ONNX models with minimlc.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="compile a model, run it, print outputs and latency")
    run.add_argument("model", help="path to an .onnx file")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input from a .npy file")
    cli_options.add_input_shape(run)
    run.add_argument(
        "--repeat", type=cli_options.positive_int, default=20, help="timed runs after one warm-up (default 20)"
    )
    run.add_argument("--seed", type=int, default=0, help="seed for the random inputs not given with --input")
    run.add_argument("--save-outputs", metavar="DIR", help="write each output to DIR/NAME.npy")
    run.add_argument(
        "--threads", type=cli_options.positive_int, help="threads for parallel loops (default: one per core)"
    )
    run.add_argument("--no-cache", action="store_true", help="compile anew, without the compile cache")
    run.add_argument("--profile", action="store_true", help="time every kernel call; print a table per kernel")
    run.add_argument("--profile-json", metavar="TRACE.json", help="with --profile: write a Chrome trace there")
    run.add_argument(
        "--profile-clock",
        choices=("wall", "cpu"),
        default="wall",
        help="with --profile: time kernels by wall time (default) or by the calling thread's CPU time, which other "
        "processes do not advance (needs --threads 1)",
    )
    run.add_argument(
        "--peak-gflops",
        type=cli_options.positive_float,
        help="with --profile: one core's peak (times the threads) for the %% of peak column and the headroom line "
        "(default: measured, an FMA loop)",
    )
    cli_options.add_tuning_db(run)
    cli_options.add_opt_level(run)
    run.set_defaults(command=_run)

    compile_ = commands.add_parser("compile", help="write the model's IR at one level of the pipeline")
    compile_.add_argument("model", help="path to an .onnx file")
    compile_.add_argument("--emit", choices=list(EMIT_LEVELS), default="llvm-ir", help="IR level (default llvm-ir)")
    cli_options.add_input_shape(compile_)
    compile_.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: standard output); FILE.mlc: a saved model"
    )
    compile_.add_argument("--no-cache", action="store_true", help="with -o FILE.mlc: compile without the cache")
    compile_.add_argument("--json", action="store_true", help="with --emit space: print the spaces as JSON")
    cli_options.add_tuning_db(compile_)
    compile_.add_argument(
        "--stats",
        action="store_true",
        help="print the time of each stage to stderr (with --emit llvm-ir: and the JIT), and from --emit scf on "
        "the model's statistics (kernel calls, arena and intermediate bytes, weight bytes)",
    )
    cli_options.add_opt_level(compile_)
    compile_.set_defaults(command=_compile)

    cli_build.add_parser(commands)
    cli_tune.add_parser(commands)

    compare = commands.add_parser("compare", help="run minimlc and an oracle on the same inputs, print the errors")
    compare.add_argument("model", help="path to an .onnx file")
    compare.add_argument("--oracle", choices=["onnxruntime", "reference"], default="onnxruntime")
    compare.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input from a .npy file"
    )
    cli_options.add_input_shape(compare)
    compare.add_argument("--seed", type=int, default=0, help="seed for the random inputs (and --random-weights)")
    compare.add_argument(
        "--random-weights", action="store_true", help="replace ConstantOfShape weights by seeded random ones"
    )
    compare.add_argument(
        "--per-layer", action="store_true", help="compare every intermediate tensor, in topological order"
    )
    compare.add_argument("--rtol", type=float, default=1e-3, help="tolerance relative to max |expected| (1e-3)")
    compare.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    cli_options.add_opt_level(compare)
    compare.set_defaults(command=_compare)

    conformance = commands.add_parser("conformance", help="run onnx's node tests, print outcomes by op")
    conformance.add_argument(
        "--ops",
        type=cli_options.op_list,
        metavar="OP,OP",
        help="only these ops (e.g. Conv,Relu; light_models: the light CNNs)",
    )
    conformance.add_argument("--light", action="store_true", help="also run the nine light CNNs (slow)")
    conformance.add_argument(
        "--write-expected-failures",
        metavar="FILE",
        help="write the tests that did not pass to FILE (entries for tests not run are kept)",
    )
    conformance.add_argument(
        "--json", metavar="FILE", help="write each test's classification (native, constant, failed, ...) to FILE"
    )
    conformance.add_argument("-v", "--verbose", action="store_true", help="list unsupported tests too")
    conformance.set_defaults(command=_conformance)

    cache = commands.add_parser("cache", help="show or clear the compile cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.set_defaults(command=cli_cache.cache_command)
    return parser


def _load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise cli_options.UsageError(f"--input expects NAME=FILE.npy, got '{spec}'")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise cli_options.UsageError(f"cannot read input '{name}' from '{path}': {error}") from error
    return feeds


def _run(args: argparse.Namespace) -> int:
    from minimlc.driver.session import InferenceSession

    if args.profile_clock == "cpu" and (not args.profile or args.threads != 1):
        raise cli_options.UsageError("--profile-clock cpu times the calling thread: use it with --profile --threads 1")
    feeds = _load_inputs(args.input)
    shapes = {**{name: array.shape for name, array in feeds.items()}, **cli_options.input_shapes(args)}
    extra_passes = cli_options.extra_passes(args)
    print(f"compiling {args.model} ...", file=sys.stderr, flush=True)
    session = InferenceSession(
        args.model,
        input_shapes=shapes or None,
        opt_level=args.opt_level,
        num_threads=args.threads,
        target=args.target,
        extra_passes=extra_passes,
        cache=not args.no_cache,
        tuning_db=args.tuning_db,
        enable_profiling=args.profile,
        profiling_clock=args.profile_clock,
    )
    rng = np.random.default_rng(args.seed)
    for info in session.get_inputs():
        if info.name not in feeds:
            feeds[info.name] = rng.standard_normal(info.shape).astype(info.dtype)
    outputs = session.run(None, feeds)
    if session.profiler is not None:
        session.profiler.runs.clear()  # the warm-up starts the pool and faults pages in
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        timings.append(time.perf_counter() - start)

    print(f"compiled in {session.compile_seconds:.3f} s")
    for info, value in zip(session.get_outputs(), outputs):
        print(
            f"output {info.name}: shape {list(value.shape)} {value.dtype}  "
            f"min {value.min():.6g}  max {value.max():.6g}  mean {value.mean():.6g}  "
            f"argmax {int(value.argmax())}"
        )
        if args.save_outputs:
            directory = Path(args.save_outputs)
            directory.mkdir(parents=True, exist_ok=True)
            np.save(directory / f"{info.name}.npy", value)
    median = statistics.median(timings)
    print(f"latency: median {median * 1e6:.1f} us over {args.repeat} runs (min {min(timings) * 1e6:.1f} us)")
    if session.profiler is not None:
        from minimlc.runtime.machine_peak import fma_peak_gflops
        from minimlc.runtime.profiler import headroom_line, summary_table

        peak = (args.peak_gflops or fma_peak_gflops()) * session.num_threads
        rows = session.profiler.summary(peak)
        print(f"kernel profile over {len(session.profiler.runs)} runs (after the warm-up):")
        print(summary_table(rows))
        print(headroom_line(rows, peak, len(session.profiler.runs)))
        if args.profile_json:
            print(f"wrote {session.end_profiling(args.profile_json)}")
    return 0


def _compile(args: argparse.Namespace) -> int:
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.pipeline import STAGES, run_pipeline, stage_passes

    extra_passes = cli_options.extra_passes(args)
    if args.output and args.output.endswith(".mlc"):
        return cli_cache.save_model(args, extra_passes, cli_options.input_shapes(args))
    if args.emit == "obj":
        return cli_build.compile_object(args, extra_passes)
    pipeline = cli_build.pipeline(args, extra_passes) or args.opt_level
    try:
        stage_passes(pipeline, stop_after=EMIT_LEVELS[args.emit])
    except ValueError:
        pass_name = STAGES[EMIT_LEVELS[args.emit]][0]  # pyright: ignore[reportOptionalSubscript]
        raise cli_options.UsageError(
            f"--emit {args.emit} needs --opt-level 2 or 3 (O{args.opt_level} does not run {pass_name})"
        ) from None
    print(f"compiling {args.model} to {args.emit} at O{args.opt_level} ...", file=sys.stderr, flush=True)
    timings: list[tuple[str, float]] = []
    start = time.perf_counter()
    imported = import_model(args.model, cli_options.input_shapes(args))
    module = imported.module
    timings.append(("import (frontend)", time.perf_counter() - start))

    def record(item: str) -> None:
        nonlocal start
        timings.append((item, time.perf_counter() - start))
        start = time.perf_counter()

    start = time.perf_counter()
    run_pipeline(module, pipeline, stop_after=EMIT_LEVELS[args.emit], target=args.target, on_pass=record)
    if args.emit == "llvm-ir":
        from minimlc.lowering.llvm.translate import translate_to_llvm_ir

        start = time.perf_counter()
        text = translate_to_llvm_ir(module)
        timings.append(("translate to LLVM IR", time.perf_counter() - start))
        if args.stats:
            from minimlc.lowering.target import target_of
            from minimlc.runtime.jit import JitModule

            start = time.perf_counter()
            JitModule(text, target=target_of(module))
            timings.append(("JIT (llvmlite O3)", time.perf_counter() - start))
    elif args.emit == "schedule":
        from minimlc.lowering.pipeline import make_context
        from minimlc.lowering.schedule.default_schedule import schedule_trace
        from minimlc.lowering.schedule.tuning_db import TuningDatabase

        text = schedule_trace(make_context(), module, TuningDatabase(args.tuning_db) if args.tuning_db else None)
    elif args.emit == "space":
        from minimlc.lowering.schedule.default_schedule import describe_spaces

        spaces = describe_spaces(module)
        text = json.dumps(spaces, indent=1) + "\n" if args.json else cli_tables.space_table(spaces)
    else:
        module.verify()
        text = str(module) + "\n"  # str(), not format(): an f-string prints the op's repr
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.stats:
        print(cli_tables.timing_table(args.model, timings), file=sys.stderr)
        if args.emit in STATS_LEVELS:
            from minimlc.driver.compiler import model_stats

            stats = {**model_stats(module, imported.weights), "compile_seconds": sum(t for _, t in timings)}
            print(cli_tables.stats_table(args.model, stats), file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from minimlc.driver.session import InferenceSession
    from minimlc.tools import model_tools

    model = _load_model(args.model)
    if args.random_weights:
        model = model_tools.randomise_weights(model, seed=args.seed)
    names = [vi.name for vi in model.graph.output]
    producers = {output: node.op_type for node in model.graph.node for output in node.output}
    if args.per_layer:
        model, names = model_tools.expose_intermediates(model)
    given = _load_inputs(args.input)
    try:
        feeds = model_tools.random_inputs(model, args.seed, given, cli_options.input_shapes(args))
    except ValueError as error:  # a symbolic dimension no --input or --input-shape sets
        raise cli_options.UsageError(f"{error}: pass --input-shape NAME=D,D,... or --input NAME=FILE.npy") from None
    shapes = {name: array.shape for name, array in feeds.items()}
    extra_passes = cli_options.extra_passes(args)
    print(f"compiling {args.model} ({len(names)} outputs) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    session = InferenceSession(
        model, input_shapes=shapes, opt_level=args.opt_level, target=args.target, extra_passes=extra_passes
    )
    compile_seconds = time.perf_counter() - start
    outputs = dict(zip((info.name for info in session.get_outputs()), session.run(None, feeds)))
    print(f"running the oracle ({args.oracle}) ...", file=sys.stderr, flush=True)
    try:
        expected = model_tools.run_oracle(model, feeds, args.oracle)
    except Exception as error:  # ORT and onnx.reference raise their own exception types
        raise _OracleError(f"{args.oracle} cannot run the model: {error}") from error
    errors = model_tools.compare(outputs, expected, names, args.rtol, args.atol)

    import_seconds = compile_seconds - session.compile_seconds
    print(
        f"minimlc compiled {args.model} in {compile_seconds:.3f} s (import {import_seconds:.3f} s, "
        f"lowering + JIT {session.compile_seconds:.3f} s); oracle: {args.oracle}; seed {args.seed}"
        f"{'; random weights' if args.random_weights else ''}"
    )
    print(f"tolerance: max|minimlc - oracle| <= {args.atol:g} + {args.rtol:g} * max|oracle|")
    first_bad = next((error.name for error in errors if not error.within_tolerance), None)
    name_width = max(len("tensor"), *(len(error.name) for error in errors))
    op_width = max(len("op"), *(len(producers.get(error.name, "")) for error in errors))
    print(f"{'tensor':<{name_width}}  {'op':<{op_width}}  {'shape':<18}  {'max abs err':>11}  {'max rel err':>11}")
    for error in errors:
        verdict = "ok" if error.within_tolerance else "MISMATCH"
        if error.name == first_bad and args.per_layer:
            verdict += "  <- first mismatch"
        shape = str(list(error.shape))
        print(
            f"{error.name:<{name_width}}  {producers.get(error.name, ''):<{op_width}}  {shape:<18}  "
            f"{error.max_abs:11.3e}  {error.max_rel:11.3e}  {verdict}"
        )
    bad = sum(not error.within_tolerance for error in errors)
    if bad:
        print(f"minimlc: {bad} of {len(errors)} tensors exceed the tolerance", file=sys.stderr)
        return 1
    return 0


def _load_model(path: str) -> onnx.ModelProto:
    import onnx
    from google.protobuf.message import DecodeError

    from minimlc.frontend.onnx import ModelImportError

    if not Path(path).is_file():
        raise FileNotFoundError(2, "no such ONNX model file", path)
    try:
        return onnx.load(path)
    except (DecodeError, ValueError) as error:
        raise ModelImportError(f"cannot parse an ONNX model from '{path}': {error}") from error


def _conformance(args: argparse.Namespace) -> int:
    import onnx

    from minimlc.frontend.onnx_operators import OTHER_DOMAINS
    from minimlc.tools import conformance

    domains = ("", *OTHER_DOMAINS)
    unknown = [
        op
        for op in args.ops or []
        if op != conformance.LIGHT_MODEL_GROUP and not any(onnx.defs.has(op, domain) for domain in domains)
    ]
    if unknown:
        raise cli_options.UsageError(f"--ops names unknown ONNX operator(s): {', '.join(unknown)}")
    listing = Path(args.write_expected_failures) if args.write_expected_failures else None
    if listing is not None and listing.exists():
        try:
            conformance.read_expected_failures(listing)
        except ValueError as error:
            raise cli_options.UsageError(str(error)) from error
    all_tests = [*conformance.node_tests(), *conformance.light_model_tests()]
    tests = conformance.select(conformance.node_tests(), args.ops)
    if args.light or conformance.LIGHT_MODEL_GROUP in (args.ops or []):
        tests += conformance.light_model_tests()
    if not tests:
        raise cli_options.UsageError(f"no node tests for ops {args.ops}")
    results = []
    start = time.perf_counter()
    interactive = sys.stderr.isatty()
    for index, test in enumerate(tests, 1):
        if interactive:
            print(f"\r\033[K[{index}/{len(tests)}] {test.name}", end="", file=sys.stderr, flush=True)
        elif index % 100 == 1 or test.op == conformance.LIGHT_MODEL_GROUP:
            print(f"[{index}/{len(tests)}] {test.name} ...", file=sys.stderr, flush=True)
        results.append(conformance.run_test(test))
    if interactive:
        print(file=sys.stderr)
    print(conformance.summary_table(results))
    print(f"{len(results)} tests in {time.perf_counter() - start:.1f} s")
    listed = (
        {conformance.Outcome.FAILED, conformance.Outcome.UNSUPPORTED} if args.verbose else {conformance.Outcome.FAILED}
    )
    shown = [result for result in results if result.outcome in listed]
    if shown:
        print()
    for result in shown:
        print(f"{result.outcome.value:<11}  {result.test.name}: {result.message}")
    if listing is not None:
        listing.write_text(conformance.updated_expected_failures(listing, results, all_tests))
        print(f"wrote {listing}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(conformance.results_json(results), indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
