"""The options the compiling commands of `minimlc` share (input shapes, opt level, target, extra passes) and their
argument types: each turns one command-line string into a value or a usage error naming what is wrong."""

from __future__ import annotations

import argparse


class UsageError(ValueError):
    """A command-line argument is malformed."""


def add_input_shape(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        type=input_shape,
        metavar="NAME=D,D,...",
        help="the shape of input NAME, fixing its symbolic dimensions (e.g. data=1,3,224,224; repeatable); "
        "it must agree with the dimensions the model declares",
    )


def input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.rpartition("=")
    sizes = dims.split(",")
    if not sep or not name or not all(size.strip().isdigit() for size in sizes):
        raise argparse.ArgumentTypeError(f"expects NAME=D,D,... with non-negative sizes, got '{text}'")
    return name, tuple(int(size) for size in sizes)


def input_shapes(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The `--input-shape` shapes by input name; naming an input twice with two shapes is a usage error."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, shape in args.input_shape:
        if shapes.setdefault(name, shape) != shape:
            raise UsageError(f"--input-shape gives input '{name}' two shapes: {list(shapes[name])} and {list(shape)}")
    return shapes


def add_tuning_db(parser: argparse.ArgumentParser) -> None:
    """`--tuning-db PATH`: apply the fastest schedule of each kernel in a tuning database (`minimlc tune`)."""
    parser.add_argument(
        "--tuning-db", metavar="PATH", help="apply the best records of this tuning database (from minimlc tune)"
    )


def add_opt_level(parser: argparse.ArgumentParser) -> None:
    """The options every compiling command takes: the opt level and the target CPU."""
    parser.add_argument(
        "--target",
        type=target_name,
        default="host",
        metavar="CPU",
        help="CPU to compile for: host (default) or an LLVM CPU name (x86-64-v3, skylake-avx512, znver4, ...)",
    )
    parser.add_argument(
        "-O",
        "--opt-level",
        type=opt_level,
        default=3,
        metavar="{0,1,2,3}",
        help="optimisation level: 0 none, 1 graph cleanups, 2 + fusion and schedules, 3 + batch-norm folding and "
        "load-time constants (default 3; -O2 is --opt-level 2)",
    )
    parser.add_argument(
        "--passes-after",
        action="append",
        default=[],
        type=passes_after,
        metavar="STAGE:PASS[,PASS]",
        help="insert passes (minimlc's or a plugin's) into the opt level's pipeline after STAGE: graph, te, loop, "
        "schedule, program, scf or llvm (repeatable; passes after program run on each code-generation partition, "
        "a share of the functions)",
    )
    parser.add_argument(
        "--load-plugin",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="load a plugin's dialects, passes and pipelines from a file or module defining plugin() (repeatable; "
        "installed plugins load without it)",
    )


def passes_after(text: str) -> tuple[str, str]:
    from minimlc.lowering.pipeline import STAGES

    stage, sep, passes = text.partition(":")
    if not sep or stage not in STAGES or not passes.strip():
        stages = ", ".join(STAGES)
        raise argparse.ArgumentTypeError(f"expects STAGE:PASS[,PASS] with STAGE one of {stages}, got '{text}'")
    return stage, passes


def extra_passes(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """The `--passes-after` passes by stage (None: none), after loading the `--load-plugin` plugins; checked against
    the opt level's pipeline, so a bad stage or pass is a usage error before any work."""
    from minimlc.lowering.pipeline import with_extra_passes
    from minimlc.lowering.plugins import load_plugin

    extra: dict[str, list[str]] = {}
    for stage, passes in args.passes_after:
        extra.setdefault(stage, []).append(passes)
    try:
        for spec in args.load_plugin:
            load_plugin(spec)
        with_extra_passes(args.opt_level, extra)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return extra or None


def opt_level(text: str) -> int:
    from minimlc.lowering.pipeline import OPT_LEVELS

    if not text.isdigit() or int(text) not in OPT_LEVELS:
        raise argparse.ArgumentTypeError(f"expects one of {', '.join(map(str, OPT_LEVELS))}, got '{text}'")
    return int(text)


def target_name(text: str) -> str:
    from minimlc.lowering.target import target_from_name

    try:
        target_from_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def op_list(text: str) -> list[str]:
    ops = [op.strip() for op in text.split(",") if op.strip()]
    if not ops:
        raise argparse.ArgumentTypeError("expects a comma-separated list of op types")
    return ops


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value
