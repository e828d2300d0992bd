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
import sys
import warnings
from collections.abc import Sequence

from minimlc.tools import (
    cli_build,
    cli_cache,
    cli_compare,
    cli_compile,
    cli_conformance,
    cli_generate,
    cli_options,
    cli_quantize,
    cli_run,
    cli_tune,
    cli_worker,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `minimlc` console script."""
    parser = _argument_parser()
    args = parser.parse_args(argv)
    from xdsl.utils.exceptions import DiagnosticException

    from minimlc.driver.shared_library import CompilerNotFoundError, LinkError
    from minimlc.frontend.onnx import ModelImportError
    from minimlc.lowering.strategy.tuning_db import TuningDatabaseError
    from minimlc.lowering.target import TargetNotRunnableError
    from minimlc.lowering.workers import CompileJobsError, compile_jobs
    from minimlc.runtime.artifact import ArtifactError
    from minimlc.runtime.session import InvalidInputError

    user_errors = (
        ModelImportError,
        InvalidInputError,
        OSError,  # a file not found, not writable, a full disk: its message names it
        MemoryError,
        cli_options.UsageError,
        cli_compare.OracleError,
        TuningDatabaseError,
        CompileJobsError,
        TargetNotRunnableError,  # `run --target` of another architecture's CPU, or one with features the host lacks
    )
    previous, warnings.formatwarning = warnings.formatwarning, _warning_line
    try:
        compile_jobs()  # a bad $MINIMLC_COMPILE_JOBS is refused before any work
        return args.command(args)
    except (*user_errors, ArtifactError, CompilerNotFoundError, LinkError) as error:
        print(f"minimlc: error: {cli_options.cli_spelling(str(error))}", file=sys.stderr)
        return 1
    except DiagnosticException as error:  # a pass refused its input or options (`--passes-after`): its first line
        print(f"minimlc: error: {str(error).strip().splitlines()[0]}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: what was written stays (`tune` says what it kept)
        print("\nminimlc: interrupted", file=sys.stderr)
        return cli_options.INTERRUPTED
    finally:
        warnings.formatwarning = previous


def _warning_line(message: Warning | str, category: type[Warning], *_: object) -> str:
    """A warning as one `minimlc: warning: ...` line (not Python's file, line and source)."""
    return f"minimlc: warning: {str(message).removeprefix('minimlc: ')}\n"


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minimlc", description="Compile and run ONNX models with minimlc.")
    parser.add_argument("--version", action=cli_options.VersionAction)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    cli_run.add_parser(commands)
    cli_compile.add_parser(commands)
    cli_build.add_parser(commands)
    cli_tune.add_parser(commands)
    cli_worker.add_parser(commands)
    cli_compare.add_parser(commands)
    cli_conformance.add_parser(commands)
    cli_generate.add_parser(commands)
    cli_quantize.add_parser(commands)

    cache = commands.add_parser("cache", help="show or clear the compile cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.set_defaults(command=cli_cache.cache_command)
    return parser


if __name__ == "__main__":
    sys.exit(main())
