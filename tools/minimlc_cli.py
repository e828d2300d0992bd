"""`minimlc`: compile and run ONNX models.

    minimlc run examples/mlp.onnx --repeat 100            # random inputs, output summary, median latency
    minimlc run model.onnx --input x=x.npy --save-outputs out/
    minimlc compile model.onnx --emit loop -o model.loop.mlir
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

EMIT_LEVELS = {
    "graph": (),
    "te": ("lower-to-te",),
    "loop": ("lower-to-loop",),
    "scf": ("lower-to-scf",),
    "llvm-dialect": ("lower-to-llvm",),
    "llvm-ir": ("lower-to-llvm",),
}
"""`--emit` level -> named pipelines that take the imported graph there."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `minimlc` console script."""
    parser = _argument_parser()
    args = parser.parse_args(argv)
    from minimlc.frontend.onnx import ModelImportError
    from minimlc.runtime.session import InvalidInputError

    try:
        return args.command(args)
    except (ModelImportError, InvalidInputError, FileNotFoundError, _UsageError) as error:
        print(f"minimlc: error: {error}", file=sys.stderr)
        return 1


class _UsageError(ValueError):
    """A command-line argument is malformed."""


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minimlc", description="Compile and run ONNX models with minimlc.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="compile a model, run it, print outputs and latency")
    run.add_argument("model", help="path to an .onnx file")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input from a .npy file")
    run.add_argument("--repeat", type=_positive_int, default=20, help="timed runs after one warm-up (default 20)")
    run.add_argument("--seed", type=int, default=0, help="seed for the random inputs not given with --input")
    run.add_argument("--save-outputs", metavar="DIR", help="write each output to DIR/NAME.npy")
    run.set_defaults(command=_run)

    compile_ = commands.add_parser("compile", help="write the model's IR at one level of the pipeline")
    compile_.add_argument("model", help="path to an .onnx file")
    compile_.add_argument("--emit", choices=list(EMIT_LEVELS), default="llvm-ir", help="IR level (default llvm-ir)")
    compile_.add_argument("-o", "--output", metavar="FILE", help="output file (default: standard output)")
    compile_.set_defaults(command=_compile)
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise _UsageError(f"--input expects NAME=FILE.npy, got '{spec}'")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise _UsageError(f"cannot read input '{name}' from '{path}': {error}") from error
    return feeds


def _run(args: argparse.Namespace) -> int:
    from minimlc.runtime import InferenceSession

    feeds = _load_inputs(args.input)
    shapes = {name: array.shape for name, array in feeds.items()}
    print(f"compiling {args.model} ...", file=sys.stderr, flush=True)
    session = InferenceSession(args.model, input_shapes=shapes or None)
    rng = np.random.default_rng(args.seed)
    for info in session.get_inputs():
        if info.name not in feeds:
            feeds[info.name] = rng.standard_normal(info.shape).astype(info.dtype)
    outputs = session.run(None, feeds)
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
    return 0


def _compile(args: argparse.Namespace) -> int:
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering import expand_pipelines, split_pass_list
    from minimlc.runtime.compiler import run_passes

    print(f"compiling {args.model} to {args.emit} ...", file=sys.stderr, flush=True)
    module = import_model(args.model).module
    pipeline = ",".join(EMIT_LEVELS[args.emit])
    run_passes(module, split_pass_list(expand_pipelines(pipeline)))
    if args.emit == "llvm-ir":
        from minimlc.lowering.llvm_translate import translate_to_llvm_ir

        text = translate_to_llvm_ir(module)
    else:
        module.verify()
        text = f"{module}\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
