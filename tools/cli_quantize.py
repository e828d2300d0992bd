"""`minimlc quantize`: weight-only quantization of an ONNX model (`frontend/onnx_weight_quantization.py`): each MatMul with a float32
rank-2 initializer B becomes com.microsoft MatMulNBits with int8 or int4 weights, runnable by minimlc and ONNX Runtime.

    minimlc quantize --weights int4 --block-size 32 model.onnx -o model_int4.onnx
    minimlc quantize --weights int8 --zero-points model.onnx -o model_int8.onnx

Prints how many MatMuls were converted and the bytes of the initializers before and after.
"""

from __future__ import annotations

import argparse
import sys

from minimlc.tools import cli_files, cli_options

WEIGHT_BITS = {"int8": 8, "int4": 4}


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `quantize` subcommand."""
    parser = commands.add_parser("quantize", help="store MatMul weights as int8 or int4 (MatMulNBits)")
    parser.add_argument("model", help="an .onnx model")
    parser.add_argument("-o", "--output", required=True, help="the quantized .onnx model to write")
    parser.add_argument("--weights", required=True, choices=list(WEIGHT_BITS), help="the weights' integer type")
    parser.add_argument(
        "--block-size", type=cli_options.positive_int, default=32, help="values per scale along K (default 32)"
    )
    parser.add_argument(
        "--zero-points", action="store_true", help="asymmetric: a zero point per block (default: symmetric)"
    )
    parser.set_defaults(command=quantize)


def quantize(args: argparse.Namespace) -> int:
    import onnx
    from onnx import numpy_helper

    from minimlc.frontend.onnx_weight_quantization import quantize_model

    source = cli_files.model_file(args.model)
    output = cli_files.output_file(args.output, "-o")
    model = onnx.load(str(source))
    try:
        quantized = quantize_model(model, WEIGHT_BITS[args.weights], args.block_size, args.zero_points)
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
