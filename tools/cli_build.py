"""`minimlc build` (a shared library for C programs) and `minimlc compile --emit obj`, out of minimlc_cli.py."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from minimlc.tools import cli_files, cli_options

if TYPE_CHECKING:
    from minimlc.lowering.pipeline import PassItem


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `build` subcommand, with the options every compiling command takes."""
    build = commands.add_parser("build", help="build a shared library for C programs, with its header and weights")
    build.add_argument("model", help="path to an .onnx file")
    build.add_argument(
        "-o", "--output", required=True, metavar="LIB.so", help="the library; LIB.h and LIB.weights go beside it"
    )
    build.add_argument(
        "--prefix", type=c_identifier, default="model", help="prefix of the C API's names (default model)"
    )
    cli_options.add_opt_level(build)
    cli_options.add_precision(build)
    cli_options.add_input_shape(build)
    build.add_argument(
        "--input-bound",
        action="append",
        default=[],
        type=input_bound,
        metavar="SYMBOL=[MIN:]MAX",
        help="the sizes a run may give the symbolic dimension SYMBOL (e.g. batch=1:64; repeatable): a model whose "
        "inputs keep symbolic dimensions is built once for every shape, and its C API refuses sizes outside these",
    )
    build.add_argument(
        "--cc",
        metavar="COMMAND",
        help="the C compiler that links the library (default: $CC, else cc; for another architecture's --target, "
        "its cross compiler TRIPLE-gcc, e.g. aarch64-linux-gnu-gcc)",
    )
    cli_options.add_tuning_db(build)
    build.set_defaults(command=build_library)


def input_bound(text: str) -> tuple[str, int | tuple[int, int]]:
    """`--input-bound`: `batch=64` (at most 64) or `batch=1:64`."""
    symbol, sep, bound = text.rpartition("=")
    sizes = bound.split(":")
    if not sep or not symbol or len(sizes) > 2 or not all(size.strip().isdigit() for size in sizes):
        raise argparse.ArgumentTypeError(f"expects SYMBOL=MAX or SYMBOL=MIN:MAX with non-negative sizes, got '{text}'")
    return symbol, int(sizes[0]) if len(sizes) == 1 else (int(sizes[0]), int(sizes[1]))


def c_identifier(text: str) -> str:
    """`--prefix`: a C identifier."""
    if not re.fullmatch(r"[A-Za-z_]\w*", text, flags=re.ASCII):
        raise argparse.ArgumentTypeError(f"must be a C identifier, got '{text}'")
    return text


def pipeline(args: argparse.Namespace, extra_passes: dict[str, list[str]] | None) -> tuple[PassItem, ...] | None:
    """The pipeline of `-O` with the `--passes-after` passes and `default-schedule` applying `--tuning-db`, or None
    for the opt level's own."""
    from minimlc.lowering.pipeline import build_pipeline
    from minimlc.lowering.strategy.tuning_db import TuningDatabase

    if not extra_passes and not args.tuning_db:
        return None
    if args.tuning_db:
        TuningDatabase(args.tuning_db)  # a missing or corrupt database fails here, with its message
    return build_pipeline(args.opt_level, extra_passes=extra_passes, tuning_db=args.tuning_db or None)


def compile_object(args: argparse.Namespace, extra_passes: dict[str, list[str]] | None) -> int:
    """`--emit obj`: the model's object code (`model_main_packed`, see `minimlc.driver.shared_library`)."""
    from minimlc.driver.shared_library import object_code
    from minimlc.frontend.onnx import import_model

    if not args.output:
        raise cli_options.UsageError("--emit obj writes a binary file: give it with -o FILE.o")
    print(f"compiling {args.model} to object code at O{args.opt_level} ...", file=sys.stderr, flush=True)
    model = object_code(
        import_model(args.model, cli_options.input_shapes(args) or None),
        pipeline(args, extra_passes),
        opt_level=args.opt_level,
        target=args.target,
        jobs=1,
    )
    (code,) = model.objects
    cli_files.write_atomically(Path(args.output), code)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def build_library(args: argparse.Namespace) -> int:
    """`minimlc build MODEL -o LIB.so`: the library, its header and its weights file; a model whose inputs keep
    symbolic dimensions (those `--input-shape` does not fix) is built with run-time dimensions, bounded by
    `--input-bound`. `--target aarch64-linux-gnu` builds it for that CPU, linked by its cross compiler (`--cc`)."""
    from xdsl.utils.exceptions import DiagnosticException, VerifyException

    from minimlc.driver.shared_library import export_library
    from minimlc.driver.specializations import has_free_dimensions
    from minimlc.frontend.onnx import ModelImportError, import_model
    from minimlc.frontend.onnx_declared import declared_inputs
    from minimlc.frontend.onnx_model_file import read_model

    cli_files.model_file(args.model)
    library = cli_files.output_file(args.output, "-o")
    for beside in (library.with_suffix(".h"), library.with_suffix(".weights")):
        if beside.is_dir():
            raise cli_options.UsageError(f"-o {library}: {beside}, written beside it, is a directory")
    cli_options.check_tuning_db(args)
    extra_passes = cli_options.extra_passes(args)
    bounds: dict[str, int | tuple[int, int]] = {}
    for symbol, bound in args.input_bound:
        if bounds.setdefault(symbol, bound) != bound:
            raise cli_options.UsageError(f"--input-bound gives '{symbol}' two bounds: {bounds[symbol]} and {bound}")
    shapes = cli_options.input_shapes(args) or None
    read = read_model(args.model)
    symbolic = has_free_dimensions(declared_inputs(read.proto.graph, shapes or {}))
    print(f"building {args.model} at O{args.opt_level} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        files = export_library(
            import_model(read, shapes, symbolic=symbolic),
            args.output,
            pipeline(args, extra_passes),
            opt_level=args.opt_level,
            target=args.target,
            prefix=args.prefix,
            source=Path(args.model).name,
            input_bounds=bounds,
            cc=args.cc,
        )
    except (ModelImportError, DiagnosticException, VerifyException) as error:
        if not symbolic:
            raise
        raise cli_options.UsageError(
            f"the model does not build with run-time dimensions ({str(error).strip().splitlines()[0]}): fix its "
            "symbolic dimensions with --input-shape NAME=D,D,..."
        ) from None
    except ValueError as error:
        raise cli_options.UsageError(str(error).replace("input_bounds: ", "--input-bound: ")) from None
    print(
        f"wrote {files.library} ({files.library.stat().st_size} bytes), {files.header}, {files.weights} in "
        f"{time.perf_counter() - start:.2f} s (lowering {files.lower_seconds:.2f} s, LLVM {files.codegen_seconds:.2f} "
        f"s, pool + link {files.link_seconds:.2f} s)",
        file=sys.stderr,
    )
    return 0
