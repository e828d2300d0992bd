"""`minimlc compile`: the model's IR at one level of the pipeline, its object code, or a saved model.

    minimlc compile model.onnx --emit loop -O1 -o model.loop.mlir   # the loop IR of O1
    minimlc compile model.onnx -o model.mlc                         # a saved model: minimlc.runtime.load("model.mlc")
    minimlc compile model.onnx --stats                              # stage times and model statistics, no IR
    minimlc compile model.onnx --emit te --dot -o model.te.dot      # Graphviz DOT of the te level
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from minimlc.tools import cli_build, cli_cache, cli_files, cli_options, cli_tables

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

DOT_LEVELS = ("graph", "te", "loop", "scf", "llvm-dialect")
"""The `--emit` levels `--dot` draws: those whose output is an MLIR module."""

_SUFFIXES = {"llvm-ir": ".ll", "obj": ".o", "space": ".txt", "schedule": ".txt"}
"""The file suffix each `--emit` level's output is suggested (default `.mlir`)."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `compile` subcommand."""
    compile_ = commands.add_parser("compile", help="write the model's IR at one level of the pipeline")
    compile_.add_argument("model", help="path to an .onnx file")
    compile_.add_argument("--emit", choices=list(EMIT_LEVELS), help="IR level (default llvm-ir)")
    cli_options.add_input_shape(compile_)
    compile_.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: standard output); FILE.mlc: a saved model"
    )
    compile_.add_argument("--no-cache", action="store_true", help="with -o FILE.mlc: compile without the cache")
    compile_.add_argument("--json", action="store_true", help="with --emit space: print the spaces as JSON")
    compile_.add_argument(
        "--dot",
        action="store_true",
        help=f"with --emit {'|'.join(DOT_LEVELS)}: Graphviz DOT of that level (an op a node, a kernel or loop body "
        "a cluster) instead of its IR",
    )
    cli_options.add_tuning_db(compile_)
    compile_.add_argument(
        "--stats",
        action="store_true",
        help="print the time of each stage to stderr (with --emit llvm-ir: and the JIT), and from --emit scf on "
        "the model's statistics (kernel calls, arena and intermediate bytes, weight bytes); without -o, no IR",
    )
    cli_options.add_opt_level(compile_)
    cli_options.add_precision(compile_)
    compile_.set_defaults(command=compile_model)


def emit_pipeline(args: argparse.Namespace, extra_passes: dict[str, list[str]] | None, emit: str) -> list[str]:
    """The passes `--emit` runs: the opt level's (applying `--tuning-db`) up to the end of the emit level's stage,
    with the `--passes-after` passes of that stage and the ones before it in their places; a usage error for passes
    after a later stage, or a stage the opt level does not reach."""
    from minimlc.lowering.pipeline import STAGES, build_pipeline, pipeline_passes, stage_passes

    level = EMIT_LEVELS[emit]
    stages = list(STAGES)
    extra = extra_passes or {}
    if later := [stage for stage in extra if stages.index(stage) > stages.index(level)]:
        raise cli_options.UsageError(
            f"--passes-after {later[0]}:... runs after stage '{later[0]}', past the end of --emit {emit} "
            f"(stage '{level}')"
        )
    pipeline = cli_build.pipeline(args, None) or args.opt_level  # a corrupt --tuning-db fails here, with its message
    try:
        passes = stage_passes(pipeline, stop_after=level)
    except ValueError:
        pass_name = STAGES[level][0]  # pyright: ignore[reportOptionalSubscript]
        raise cli_options.UsageError(
            f"--emit {emit} needs --opt-level 2 or 3 (O{args.opt_level} does not run {pass_name})"
        ) from None
    earlier = {stage: items for stage, items in extra.items() if stage != level}
    return [*map(str, build_pipeline(passes, extra_passes=earlier)), *pipeline_passes(extra.get(level, []))]


def _check_saved_model(args: argparse.Namespace, output: Path) -> None:
    """`-o FILE.mlc` saves the compiled model: a usage error if `--emit` asks for something else."""
    if args.emit is not None:
        suffix = _SUFFIXES.get(args.emit, ".mlir")
        raise cli_options.UsageError(
            f"--emit {args.emit} cannot be saved as {output.name} (a .mlc file is a saved model): use "
            f"-o {output.with_suffix(suffix)}, or drop --emit to save the model"
        )


def compile_model(args: argparse.Namespace) -> int:
    """`minimlc compile MODEL`: the IR of `--emit` (default LLVM IR) to `-o` or standard output, object code, or with
    `-o FILE.mlc` a saved model; model, outputs and options checked before any work."""
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.pipeline import run_passes
    from minimlc.lowering.target import set_target

    if args.dot and args.emit not in DOT_LEVELS:
        raise cli_options.UsageError(f"--dot draws an IR level: use it with --emit {'|'.join(DOT_LEVELS)}")
    cli_files.model_file(args.model)
    output = cli_files.output_file(args.output, "-o") if args.output else None
    cli_options.check_tuning_db(args)
    extra_passes = cli_options.extra_passes(args)
    if output is not None and output.suffix == ".mlc":
        _check_saved_model(args, output)
        return cli_cache.save_model(args, extra_passes, cli_options.input_shapes(args))
    emit = args.emit or "llvm-ir"
    if emit == "obj":
        return cli_build.compile_object(args, extra_passes)
    passes = emit_pipeline(args, extra_passes, emit)
    print(f"compiling {args.model} to {emit} at O{args.opt_level} ...", file=sys.stderr, flush=True)
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
    set_target(module, args.target)
    run_passes(module, passes, on_pass=record)
    if emit == "llvm-ir":
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
    elif emit == "schedule":
        from minimlc.lowering.pipeline import make_context
        from minimlc.lowering.schedule.default_schedule import schedule_trace
        from minimlc.lowering.strategy.tuning_db import TuningDatabase

        text = schedule_trace(make_context(), module, TuningDatabase(args.tuning_db) if args.tuning_db else None)
    elif emit == "space":
        from minimlc.lowering.schedule.default_schedule import describe_spaces

        spaces = describe_spaces(module)
        text = json.dumps(spaces, indent=1) + "\n" if args.json else cli_tables.space_table(spaces)
    elif args.dot:
        from minimlc.tools.op_graph_dot import op_graph_dot

        module.verify()
        text = op_graph_dot(module)
    else:
        module.verify()
        text = str(module) + "\n"  # str(), not format(): an f-string prints the op's repr
    if output is not None:
        cli_files.write_atomically(output, text)
        print(f"wrote {output}", file=sys.stderr)
    elif args.stats:
        print(f"(--stats prints the tables alone: write the {emit} output with -o FILE)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.stats:
        print(cli_tables.timing_table(args.model, timings), file=sys.stderr)
        if emit in STATS_LEVELS:
            from minimlc.driver.compiler import model_stats

            stats = {**model_stats(module, imported.weights), "compile_seconds": sum(t for _, t in timings)}
            print(cli_tables.stats_table(args.model, stats), file=sys.stderr)
    return 0
