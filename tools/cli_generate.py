"""`minimlc generate`: generate token ids with a decoder model with a KV cache (`minimlc.Generator`).

    minimlc generate llama.onnx --prompt-ids 1,2,3 --max-new-tokens 64
    minimlc generate llama.onnx --prompt-ids 1,2,3 --do-sample --top-p 0.9 --temperature 0.8 --seed 0 --stream
    minimlc generate llama.onnx --prompt-ids 1,2,3 --precision int4     # MatMul weights quantized to 4 bits

Prints the new ids (one per line as they come with `--stream`), then prefill and decode tokens per second.
"""

from __future__ import annotations

import argparse
import sys

from minimlc.tools import cli_options
from minimlc.tools.cli_progress import compile_progress


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `generate` subcommand."""
    parser = commands.add_parser("generate", help="generate token ids with a decoder model that has a KV cache")
    parser.add_argument("model", help="an .onnx decoder (input_ids, past key/value inputs, present outputs)")
    parser.add_argument("--prompt-ids", required=True, metavar="ID,ID,...", help="the prompt's token ids")
    parser.add_argument("--max-new-tokens", type=cli_options.positive_int, default=64, help="new ids (default 64)")
    parser.add_argument(
        "--max-length", type=cli_options.positive_int, default=2048, help="longest prompt + new ids (default 2048)"
    )
    parser.add_argument(
        "--precision",
        choices=("float32", "int8", "int4"),
        default="float32",
        help="int8 / int4: quantize the MatMul weights first (weight-only, blocks of 32)",
    )
    parser.add_argument(
        "--accuracy-level",
        type=int,
        choices=(0, 1, 2, 3, 4),
        help="with --precision int8/int4: ONNX Runtime's MatMulNBits accuracy_level (4: int8 activations too)",
    )
    parser.add_argument("--do-sample", action="store_true", help="sample (default: greedy)")
    parser.add_argument("--top-k", type=cli_options.positive_int, help="with --do-sample: keep the k likeliest")
    parser.add_argument("--top-p", type=float, help="with --do-sample: keep the likeliest up to this mass")
    parser.add_argument("--temperature", type=float, default=1.0, help="with --do-sample: divides the logits")
    parser.add_argument("--seed", type=int, help="with --do-sample: the random generator's seed")
    parser.add_argument("--eos-token-id", type=int, action="append", help="stop after this id (repeatable)")
    parser.add_argument("--stream", action="store_true", help="print each id as it is chosen")
    parser.add_argument(
        "--threads", type=cli_options.positive_int, help="threads for parallel loops (default: one per core)"
    )
    parser.add_argument("--no-cache", action="store_true", help="compile anew, without the compile cache")
    parser.set_defaults(command=generate)


def generate(args: argparse.Namespace) -> int:
    from minimlc.generation import Generator

    prompt = _ids(args.prompt_ids)
    sampling_only = {"--top-k": args.top_k, "--top-p": args.top_p, "--seed": args.seed}
    given = [flag for flag, value in sampling_only.items() if value is not None]
    if given and not args.do_sample:
        raise cli_options.UsageError(f"{', '.join(given)} need --do-sample")
    try:
        with compile_progress(args.model):
            generator = Generator(
                args.model,
                max_length=args.max_length,
                num_threads=args.threads,
                precision=args.precision,
                accuracy_level=args.accuracy_level,
                cache=not args.no_cache,
            )
        options = dict(
            max_new_tokens=args.max_new_tokens,
            do_sample=args.do_sample,
            top_k=args.top_k,
            top_p=args.top_p,
            temperature=args.temperature,
            seed=args.seed,
            eos_token_id=args.eos_token_id,
        )
        if args.stream:
            for token in generator.stream(prompt, **options):
                print(token, flush=True)
        else:
            print(",".join(map(str, generator.generate(prompt, **options))))
    except ValueError as error:  # not a decoder, or arguments the generator refuses
        raise cli_options.UsageError(str(error)) from error
    stats = generator.stats
    print(
        f"prefill: {stats['prompt_tokens']} tokens at {stats['prefill_tokens_per_second']:.1f} tokens/s; "
        f"decode: {stats['new_tokens']} tokens at {stats['decode_tokens_per_second']:.1f} tokens/s",
        file=sys.stderr,
    )
    return 0


def _ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise cli_options.UsageError(f"--prompt-ids takes comma-separated integers, got {text!r}") from None
    if not ids:
        raise cli_options.UsageError("--prompt-ids is empty")
    return ids
