"""The options the compiling commands of `minimlc` share (input shapes, opt level, target, extra passes) and their
argument types: each turns one command-line string into a value or a usage error naming what is wrong."""

from __future__ import annotations

import argparse
import re
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from minimlc.frontend.signature import TensorInfo


class UsageError(ValueError):
    """A command-line argument is malformed."""


INTERRUPTED = 128 + signal.SIGINT
"""The exit status after Ctrl-C (SIGINT), as a shell reports a process the signal ended: 130."""


class VersionAction(argparse.Action):
    """`--version`: minimlc's version and its key dependencies', then exit 0 (found only when asked for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the versions of minimlc and its key dependencies")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line())
        parser.exit()


def version_line() -> str:
    """`minimlc 0.1.0 (xDSL 0.74.0, llvmlite 0.50.0 with LLVM 22.1.0, onnx 1.19.0, numpy 2.3.4)`."""
    from importlib.metadata import version

    import llvmlite.binding as llvm
    import numpy as np

    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    return (
        f"minimlc {version('minimlc')} (xDSL {version('xdsl')}, llvmlite {version('llvmlite')} with LLVM "
        f"{llvm_version}, onnx {version('onnx')}, numpy {np.__version__})"
    )


def cli_spelling(message: str) -> str:
    """An error message of the Python API in the command line's words: `pass input_shapes={'x': [...]}` -> `pass
    --input-shape x=D,D,...`, `input_shapes gives` -> `--input-shape gives`."""
    message = re.sub(r"input_shapes=\{'(.*?)': \[\.\.\.\]\}", r"--input-shape \1=D,D,...", message)
    return re.sub(r"\binput_shapes gives\b", "--input-shape gives", message)


def add_input_shape(parser: argparse.ArgumentParser, run_only: bool = False) -> None:
    """`--input-shape NAME=D,D,...`: with `run_only` the shape of a random input for the run (the model compiles
    with its symbolic dimensions kept), else fixing the input's symbolic dimensions at compile time."""
    what = "of input NAME, fixing its symbolic dimensions"
    if run_only:
        what = "of the random input NAME for the run (the model keeps its symbolic dimensions)"
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        type=input_shape,
        metavar="NAME=D,D,...",
        help=f"the shape {what} (e.g. data=1,3,224,224; repeatable); it must agree with the dimensions the model "
        "declares",
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


def run_shapes(args: argparse.Namespace, inputs: Sequence[TensorInfo]) -> dict[str, tuple[int, ...]]:
    """The `--input-shape` shapes, checked against the `inputs` a session reports (symbols kept): each must name an
    input, have its rank and keep its static sizes."""
    shapes = input_shapes(args)
    declared = {info.name: info for info in inputs}
    for name, shape in shapes.items():
        if name not in declared:
            raise UsageError(f"--input-shape names unknown input '{name}'; the model's inputs are {sorted(declared)}")
        sizes = declared[name].shape
        if len(sizes) != len(shape) or any(isinstance(d, int) and d != s for d, s in zip(sizes, shape)):
            spelled = ", ".join(str(d) if d is not None else "?" for d in sizes)
            raise UsageError(
                f"input '{name}' is given shape {list(shape)}, but the model declares [{spelled}]: only symbolic or "
                "unknown dimensions can be set"
            )
    return shapes


def load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    """The `--input NAME=FILE.npy` arrays by input name: `["x=x.npy"]` -> `{"x": array}`."""
    import numpy as np  # not at module level: mini-opt imports this module and never needs numpy

    feeds: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--input expects NAME=FILE.npy, got '{spec}'")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot read input '{name}' from '{path}': {error}") from error
    return feeds


def check_tuning_db(args: argparse.Namespace) -> None:
    """A usage error if `--tuning-db` names no file: only `minimlc tune --db` starts a database."""
    path = args.tuning_db
    if path is not None and not Path(path).is_file():
        problem = "is a directory" if Path(path).is_dir() else "no such file"
        raise UsageError(f"--tuning-db {path}: {problem} (minimlc tune --db {path} writes a tuning database)")


def add_tuning_db(parser: argparse.ArgumentParser) -> None:
    """`--tuning-db PATH`: apply the fastest schedule of each kernel in a tuning database (`minimlc tune`)."""
    parser.add_argument(
        "--tuning-db", metavar="PATH", help="apply the best records of this tuning database (from minimlc tune)"
    )


def add_opt_level(parser: argparse.ArgumentParser, pipeline_passes: bool = True) -> None:
    """The options every compiling command takes: the opt level and the target CPU, and with `pipeline_passes`
    `--passes-after` and `--load-plugin` (`tune` builds its own pipelines per task and takes neither)."""
    parser.add_argument(
        "--target",
        type=target_name,
        default="host",
        metavar="CPU",
        help="CPU to compile for: host (default), an x86 LLVM CPU name (x86-64-v3, skylake-avx512, znver4, ...) or "
        "another CPU's triple, built but not run here ('aarch64-linux-gnu -mcpu=neoverse-v1', "
        "'riscv64-linux-gnu -mattr=+v')",
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
    if not pipeline_passes:
        return
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


def add_precision(parser: argparse.ArgumentParser) -> None:
    """`--precision` of the compiling commands (`extra_passes` adds its passes)."""
    parser.add_argument(
        "--precision",
        dest="compute_precision",
        choices=["fp32", "bf16"],
        default="fp32",
        help="bf16: MatMul, Gemm and Conv products in bfloat16 on the target's bfloat16 dot product (AVX512-BF16, "
        "AArch64 BF16; refused where it has none), accumulating in float32 (default fp32)",
    )


def passes_after(text: str) -> tuple[str, str]:
    from minimlc.lowering.pipeline import STAGES

    stage, sep, passes = text.partition(":")
    if not sep or stage not in STAGES or not passes.strip():
        stages = ", ".join(STAGES)
        raise argparse.ArgumentTypeError(f"expects STAGE:PASS[,PASS] with STAGE one of {stages}, got '{text}'")
    return stage, passes


def extra_passes(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """The `--passes-after` passes by stage (None: none), after loading the `--load-plugin` plugins, and
    `--precision bf16`'s (`bf16_passes`, refused for a target without a bfloat16 dot product); checked against the
    opt level's pipeline, so a bad stage or pass is a usage error before any work."""
    from minimlc.driver.calibration import bf16_passes
    from minimlc.lowering.pipeline import build_pipeline
    from minimlc.lowering.plugins import load_plugin

    extra: dict[str, list[str]] = {}
    for stage, passes in args.passes_after:
        extra.setdefault(stage, []).append(passes)
    try:
        for spec in args.load_plugin:
            load_plugin(spec)
        if getattr(args, "compute_precision", "fp32") == "bf16":
            extra = {stage: list(passes) for stage, passes in bf16_passes(args.target or "host", extra).items()}
        build_pipeline(args.opt_level, extra_passes=extra)
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
