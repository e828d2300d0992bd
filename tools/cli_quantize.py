"""`minimlc quantize`: quantize an ONNX model, runnable by minimlc and ONNX Runtime, in one of two ways.

Weight-only (`--weights`, `frontend/onnx_weight_quantization.py`): each MatMul with a float32 rank-2 initializer B
becomes com.microsoft MatMulNBits with int8 or int4 weights. Static int8 (`--calibrate`, `driver/calibration.py`):
a QDQ model with int8 weights of Conv/MatMul/Gemm and uint8 activations over ranges calibrated by running the float
model with minimlc on the given inputs (a folder of .npz/.npy feeds, or one .npz stacking them). Dynamic int8
(`--dynamic`, `frontend/onnx_dynamic_quantization.py`): weight MatMuls as ONNX Runtime's `quantize_dynamic` writes
them, DynamicQuantizeLinear + MatMulInteger.

    minimlc quantize --weights int4 --block-size 32 model.onnx -o model_int4.onnx
    minimlc quantize --weights int8 --zero-points model.onnx -o model_int8.onnx
    minimlc quantize --weights int4 --accuracy-level 4 model.onnx -o model_int4.onnx  # A in int8 per block too
    minimlc quantize model.onnx --calibrate calib/ -o model.int8.onnx --method percentile --calibration-count 64
    minimlc quantize model.onnx --dynamic -o model.dynamic.onnx    # MatMuls: int8 weights, activations per run

Prints what was converted and the bytes of the initializers before and after.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from minimlc.driver.calibration import METHODS
from minimlc.tools import cli_files, cli_options

if TYPE_CHECKING:
    import onnx

WEIGHT_BITS = {"int8": 8, "int4": 4}


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `quantize` subcommand."""
    parser = commands.add_parser(
        "quantize", help="int8 QDQ from calibration inputs, or MatMul weights as int8/int4 (MatMulNBits)"
    )
    parser.add_argument("model", help="an .onnx model")
    parser.add_argument("-o", "--output", required=True, help="the quantized .onnx model to write")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--weights", choices=list(WEIGHT_BITS), help="weight-only: the weights' integer type")
    how.add_argument(
        "--calibrate",
        metavar="DIR_OR_NPZ",
        help="static int8 QDQ: calibration inputs, a folder of .npz (.npy: one input) feeds, or one .npz stacking them",
    )
    how.add_argument(
        "--dynamic", action="store_true", help="dynamic int8: MatMul weights int8, activations quantized every run"
    )
    parser.add_argument("--method", choices=METHODS, default="minmax", help="activation ranges (default minmax)")
    parser.add_argument(
        "--percentile", type=float, default=99.99, help="--method percentile: the rank kept (default 99.99)"
    )
    channels = parser.add_mutually_exclusive_group()
    channels.add_argument(
        "--per-channel", dest="per_channel", action="store_true", default=True, help="a scale per output channel"
    )
    channels.add_argument("--per-tensor", dest="per_channel", action="store_false", help="one scale per weight")
    parser.add_argument(
        "--reduce-range", action="store_true", help="7-bit weights, for x86 int8 kernels without VNNI (vpmaddubsw)"
    )
    parser.add_argument(
        "--calibration-count", type=cli_options.positive_int, help="use at most N calibration inputs (default all)"
    )
    parser.add_argument(
        "--block-size", type=cli_options.positive_int, default=32, help="values per scale along K (default 32)"
    )
    parser.add_argument(
        "--zero-points", action="store_true", help="asymmetric: a zero point per block (default: symmetric)"
    )
    parser.add_argument(
        "--accuracy-level",
        type=int,
        metavar="{0,1,2,3,4}",
        help="--weights: MatMulNBits' accuracy_level (4: A quantized to int8 per block, integer dot products)",
    )
    parser.set_defaults(command=quantize)


def quantize(args: argparse.Namespace) -> int:
    import onnx
    from onnx import numpy_helper

    from minimlc.frontend.onnx_weight_quantization import quantize_model

    source = cli_files.model_file(args.model)
    output = cli_files.output_file(args.output, "-o")
    model = onnx.load(str(source))
    if args.accuracy_level is not None and args.weights is None:
        raise cli_options.UsageError("--accuracy-level applies to --weights only")
    if args.calibrate is not None:
        return quantize_calibrated(args, model, output)
    if args.dynamic:
        return quantize_dynamically(args, model, output)
    try:
        quantized = quantize_model(
            model,
            WEIGHT_BITS[args.weights],
            args.block_size,
            args.zero_points,
            accuracy_level=args.accuracy_level,
        )
    except ValueError as error:
        raise cli_options.UsageError(str(error)) from error
    output.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(quantized, str(output))
    converted = sum(node.op_type == "MatMulNBits" for node in quantized.graph.node) - sum(
        node.op_type == "MatMulNBits" for node in model.graph.node
    )
    before = sum(numpy_helper.to_array(tensor).nbytes for tensor in model.graph.initializer)
    after = sum(numpy_helper.to_array(tensor).nbytes for tensor in quantized.graph.initializer)
    print(
        f"{converted} MatMuls -> MatMulNBits ({args.weights}); initializers {before} -> {after} bytes", file=sys.stderr
    )
    print(f"wrote {output}", file=sys.stderr)
    return 0


def quantize_calibrated(args: argparse.Namespace, model: onnx.ModelProto, output: Path) -> int:
    """`--calibrate`: the static int8 QDQ model written to `output`."""
    import onnx

    from minimlc.driver.calibration import CalibrationError, load_calibration, quantize_static

    try:
        feeds = load_calibration(args.calibrate, model, args.calibration_count)
        quantized = quantize_static(model, feeds, args.method, args.per_channel, args.percentile, args.reduce_range)
    except CalibrationError as error:
        raise cli_options.UsageError(str(error)) from error
    output.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(quantized, str(output))
    constants = {tensor.name for tensor in quantized.graph.initializer}
    weights = sum(node.op_type == "DequantizeLinear" and node.input[0] in constants for node in quantized.graph.node)
    activations = sum(node.op_type == "QuantizeLinear" for node in quantized.graph.node)
    print(
        f"int8 QDQ ({args.method}, {'per-channel' if args.per_channel else 'per-tensor'}, {len(feeds)} calibration "
        f"inputs): {weights} weights and biases, {activations} activations quantized",
        file=sys.stderr,
    )
    print(f"wrote {output}", file=sys.stderr)
    return 0


def quantize_dynamically(args: argparse.Namespace, model: onnx.ModelProto, output: Path) -> int:
    """`--dynamic`: MatMuls with int8 weights, uint8 activations per run (`frontend/onnx_dynamic_quantization.py`)."""
    import onnx

    from minimlc.frontend.onnx_dynamic_quantization import quantize_dynamic

    quantized = quantize_dynamic(model, args.per_channel, args.reduce_range)
    output.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(quantized, str(output))
    converted = sum(node.op_type == "MatMulInteger" for node in quantized.graph.node)
    print(f"int8 dynamic: {converted} MatMuls -> DynamicQuantizeLinear + MatMulInteger", file=sys.stderr)
    print(f"wrote {output}", file=sys.stderr)
    return 0
