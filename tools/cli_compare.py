"""`minimlc compare`: run minimlc and an oracle (ONNX Runtime or onnx.reference) on the same inputs, print the errors.

    minimlc compare model.onnx                                  # each output: max abs and rel error vs ONNX Runtime
    minimlc compare model.onnx --random-weights --per-layer     # seeded random weights, every intermediate tensor
    minimlc compare model.onnx --precision int8 --calibrate calib/   # int8 QDQ build against the float32 build
    minimlc compare model.onnx --precision bf16 --target znver4     # bfloat16 products against the float32 build

`--precision int8` quantizes the model (`minimlc.quantize_static`, ranges from the `--calibrate` inputs) and runs
both builds on the `--eval` inputs (default: the calibration inputs; same formats, `driver/calibration.py`);
`--precision bf16` builds it with bfloat16 products (`InferenceSession(precision="bf16")`) and runs both on the
`--eval` inputs (default: one seeded random input). Printed: per
output the max and mean absolute error and the relative ones (over max |float32| and mean |float32|), and for a
classifier (one 2-D output, [batch, classes]) the share of rows whose top-1 class is float32's, and whose top 5
hold float32's top-1 class.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from minimlc.tools import cli_files, cli_options
from minimlc.tools.cli_progress import compile_progress

if TYPE_CHECKING:
    import numpy as np
    import onnx

ORT_EXTRA = "pip install 'minimlc[compare]' (or onnxruntime)"
"""How to install the default oracle (`pyproject.toml`'s `compare` extra)."""


class OracleError(RuntimeError):
    """The oracle runtime (ONNX Runtime or onnx.reference) could not run the model, or is not installed."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `compare` subcommand."""
    compare = commands.add_parser("compare", help="run minimlc and an oracle on the same inputs, print the errors")
    compare.add_argument("model", help="path to an .onnx file")
    compare.add_argument("--oracle", choices=["onnxruntime", "reference"], default="onnxruntime")
    compare.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input from a .npy file"
    )
    cli_options.add_input_shape(compare, run_only=True)
    compare.add_argument("--seed", type=int, default=0, help="seed for the random inputs (and --random-weights)")
    compare.add_argument(
        "--random-weights",
        action="store_true",
        help="replace the float weights (initializers, ConstantOfShape) by seeded random ones of the same shapes",
    )
    compare.add_argument(
        "--per-layer", action="store_true", help="compare every intermediate tensor, in topological order"
    )
    compare.add_argument("--rtol", type=float, default=1e-3, help="tolerance relative to max |expected| (1e-3)")
    compare.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    cli_options.add_opt_level(compare)
    compare.add_argument(
        "--precision",
        choices=["fp32", "bf16", "int8"],
        default="fp32",
        help="int8 (the quantized build) or bf16 (bfloat16 products) against the float32 build",
    )
    compare.add_argument("--calibrate", metavar="DIR_OR_NPZ", help="--precision int8: the calibration inputs")
    compare.add_argument("--eval", metavar="DIR_OR_NPZ", help="--precision int8/bf16: the inputs compared on")
    compare.add_argument(
        "--method", choices=["minmax", "percentile"], default="minmax", help="--precision int8: activation ranges"
    )
    compare.add_argument("--calibration-count", type=cli_options.positive_int, help="use at most N calibration inputs")
    compare.set_defaults(command=compare_model)


def check_oracle(oracle: str) -> None:
    """An `OracleError` saying what to install if `oracle` is ONNX Runtime and it cannot be imported."""
    if oracle != "onnxruntime":
        return
    try:
        import onnxruntime  # noqa: F401
    except ImportError as error:
        raise OracleError(
            f"--oracle onnxruntime needs ONNX Runtime, which cannot be imported ({error}): {ORT_EXTRA}, "
            "or compare with --oracle reference"
        ) from None


def compare_model(args: argparse.Namespace) -> int:
    """`minimlc compare MODEL`: the oracle checked, compile and run both, print a row per tensor; 1 on a mismatch."""
    from minimlc.driver.session import InferenceSession
    from minimlc.tools import model_tools

    if args.precision != "fp32":
        return compare_precision(args)
    if args.calibrate is not None or args.eval is not None:
        raise cli_options.UsageError("--calibrate goes with --precision int8, --eval with --precision int8 or bf16")
    check_oracle(args.oracle)
    model = load_model(args.model)
    if args.random_weights:
        model = model_tools.randomise_weights(model, seed=args.seed)
    names = [vi.name for vi in model.graph.output]
    producers = {output: node.op_type for node in model.graph.node for output in node.output}
    if args.per_layer:
        model, names = model_tools.expose_intermediates(model)
    given = cli_options.load_inputs(args.input)
    try:
        feeds = model_tools.random_inputs(model, args.seed, given, cli_options.input_shapes(args))
    except ValueError as error:  # a symbolic dimension no --input or --input-shape sets
        raise cli_options.UsageError(f"{error}: pass --input-shape NAME=D,D,... or --input NAME=FILE.npy") from None
    extra_passes = cli_options.extra_passes(args)
    start = time.perf_counter()
    with compile_progress(args.model, f" ({len(names)} outputs)"):
        session = InferenceSession(model, opt_level=args.opt_level, target=args.target, extra_passes=extra_passes)
    compile_seconds = time.perf_counter() - start
    cli_options.run_shapes(args, session.get_inputs())
    outputs = dict(zip((info.name for info in session.get_outputs()), session.run(None, feeds)))
    print(f"running the oracle ({args.oracle}) ...", file=sys.stderr, flush=True)
    try:
        expected = model_tools.run_oracle(model, feeds, args.oracle)
    except Exception as error:  # ORT and onnx.reference raise their own exception types
        raise OracleError(f"{args.oracle} cannot run the model: {error}") from error
    errors = model_tools.compare(outputs, expected, names, args.rtol, args.atol)

    import_seconds = compile_seconds - session.compile_seconds
    print(
        f"minimlc compiled {args.model} in {compile_seconds:.3f} s (import {import_seconds:.3f} s, "
        f"lowering + JIT {session.compile_seconds:.3f} s); oracle: {args.oracle}; seed {args.seed}"
        f"{'; random weights' if args.random_weights else ''}"
    )
    if any(not isinstance(size, int) for info in session.get_inputs() for size in info.shape):
        fallback = session.stats.get("symbolic_fallback")
        how = f"compiled for these shapes ({fallback})" if fallback else "one compile serves every shape"
        print(f"symbolic dimensions: {how}")
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


def load_model(path: str) -> onnx.ModelProto:
    """The ONNX model at `path`, or a `ModelImportError` naming the file."""
    import onnx
    from google.protobuf.message import DecodeError

    from minimlc.frontend.onnx import ModelImportError

    cli_files.model_file(path)
    try:
        return onnx.load(path)
    except (DecodeError, ValueError) as error:
        raise ModelImportError(f"cannot parse an ONNX model from '{path}': {error}") from error


def compare_precision(args: argparse.Namespace) -> int:
    """`--precision int8|bf16`: the quantized (int8, on the calibration inputs) or bfloat16 build and the float32 one
    run on the evaluation inputs, a row of errors per output and, for a classifier, top-1/top-5 agreement."""
    import numpy as np

    from minimlc.driver.calibration import CalibrationError
    from minimlc.driver.session import InferenceSession
    from minimlc.tools import model_tools

    model = load_model(args.model)
    if args.random_weights:
        model = model_tools.randomise_weights(model, seed=args.seed)
    options = {"opt_level": args.opt_level, "target": args.target, "extra_passes": cli_options.extra_passes(args)}
    try:
        if args.precision == "int8":
            feeds, quantized, description = _quantized(args, model)
            reduced_build = (quantized, {})
        else:
            feeds, description = _bf16_feeds(args, model), "bfloat16 products"
            reduced_build = (model, {"precision": "bf16"})
    except CalibrationError as error:
        raise cli_options.UsageError(str(error)) from error
    with compile_progress(args.model, f" (float32 and {args.precision})"):
        builds = [InferenceSession(model, **options), InferenceSession(reduced_build[0], **options, **reduced_build[1])]
    names = [info.name for info in builds[0].get_outputs()]
    float32, reduced = ([session.run(None, feed) for feed in feeds] for session in builds)
    print(f"{args.precision} ({description}) against float32, over {len(feeds)} inputs")
    width = max(len("output"), *(len(name) for name in names))
    header = f"{'output':<{width}}  {'shape':<18}  {'max abs err':>11}  {'mean abs err':>12}  {'max rel err':>11}"
    print(f"{header}  {'mean rel err':>12}")
    for index, name in enumerate(names):
        expected = np.stack([outputs[index] for outputs in float32]).astype(np.float64)
        error = np.abs(np.stack([outputs[index] for outputs in reduced]) - expected)
        peak, mean = max(np.abs(expected).max(), 1e-30), max(np.abs(expected).mean(), 1e-30)
        shape = str(list(float32[0][index].shape))
        print(
            f"{name:<{width}}  {shape:<18}  {error.max():11.3e}  {error.mean():12.3e}  {error.max() / peak:11.3e}  "
            f"{error.mean() / mean:12.3e}"
        )
    if len(names) == 1 and float32[0][0].ndim == 2:
        print(_agreement(np.concatenate([out[0] for out in float32]), np.concatenate([out[0] for out in reduced])))
    return 0


def _bf16_feeds(args: argparse.Namespace, model: onnx.ModelProto) -> list[dict[str, np.ndarray]]:
    """`--precision bf16`'s evaluation feeds (`--eval`, else one seeded random input); a usage error for a target
    without a bfloat16 dot product, before any work."""
    from minimlc.driver.calibration import bf16_passes, load_calibration
    from minimlc.tools import model_tools

    if args.calibrate is not None:
        raise cli_options.UsageError("--calibrate goes with --precision int8")
    try:
        bf16_passes(args.target, None)
    except ValueError as error:
        raise cli_options.UsageError(str(error)) from None
    if args.eval is not None:
        return load_calibration(args.eval, model)
    return [model_tools.random_inputs(model, args.seed, {}, cli_options.input_shapes(args))]


def _quantized(
    args: argparse.Namespace, model: onnx.ModelProto
) -> tuple[list[dict[str, np.ndarray]], onnx.ModelProto, str]:
    """`--precision int8`'s evaluation feeds, the model quantized on the calibration inputs, and the quantizer's
    description."""
    from minimlc.driver.calibration import load_calibration, quantize_static

    if args.calibrate is None:
        raise cli_options.UsageError("--precision int8 needs --calibrate DIR_OR_NPZ (the calibration inputs)")
    calibration = load_calibration(args.calibrate, model, args.calibration_count)
    feeds = calibration if args.eval is None else load_calibration(args.eval, model)
    with compile_progress(args.model, " (calibrating)"):
        quantized = quantize_static(model, calibration, method=args.method)
    description = next(prop.value for prop in quantized.metadata_props if prop.key == "minimlc.quantization")
    return feeds, quantized, description


def _agreement(expected: np.ndarray, actual: np.ndarray) -> str:
    """Top-1 and top-5 agreement of classifier rows [N, classes]: actual's top class is expected's; expected's top
    class is among actual's top 5."""
    import numpy as np

    best = expected.argmax(axis=1)
    top1 = int((actual.argmax(axis=1) == best).sum())
    top5 = int((np.argsort(-actual, axis=1)[:, :5] == best[:, None]).any(axis=1).sum())
    rows = len(best)
    share = f"top-1 agreement: {top1}/{rows} ({100 * top1 / rows:.1f}%); "
    return share + f"top-5 agreement: {top5}/{rows} ({100 * top5 / rows:.1f}%)"
