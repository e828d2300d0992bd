"""Prefill and decode tokens/s of `minimlc.Generator` beside ONNX Runtime on LLaMA-architecture decoders with a KV
cache (`examples/llama_cache.py`, random weights), and the memory-bandwidth bound of decode on this machine.

    python bench/bench_generate.py                       # the small config (CI-sized)
    python bench/bench_generate.py --config 0.5b         # hidden 896, 24 layers, 14 heads, 2 KV heads, vocab 32k
    python bench/bench_generate.py --config 0.5b --threads 2 --prompt 128 --new 128 --rounds 3
    python bench/bench_generate.py --config 0.5b --layers 4 --clock cpu   # the 0.5b shapes, 4 layers (quicker)
    python bench/bench_generate.py --config 0.5b --precisions float32,int8,int4   # weight-only int8 / int4 beside
    python bench/bench_generate.py --config 0.5b --precisions float32,int8-al4,int4-al4  # int8 activations too

Both generate greedily from the same prompt through the same loop (prefill the prompt in one call, then one token
per call, each step's presents fed back as pasts), ONNX Runtime at `--threads` intra-op threads; rounds alternate
which goes first and the table gives medians. The Generator computes the last layer's tail and the head for the
last position only (`generation/last_logits.py`); ONNX Runtime runs the exported model, every position's logits.
Decode at batch 1 reads every weight once per token, so its tokens/s is bounded by bandwidth / weight bytes: the
bandwidth (`runtime.machine_peak.memory_bandwidth_gbs`) is that of a JIT-compiled sum streaming 512 MiB of float32
(more than the caches hold) at the same thread count, over the weight bytes a token reads (at int8 and int4, the
packed codes and scales of `Generator(precision=...)`'s quantized model). `int8-al4`/`int4-al4` write
`accuracy_level=4` on the MatMulNBits (activations quantized to int8 per block, integer dot products) and give that
model to the Generator. ONNX Runtime runs the float32 model and each
quantized one but plain int8 (its float-activation 8-bit MatMulNBits takes a slow path); the quantized logits after
the prompt are compared with float32's. On a shared, loaded machine `--clock cpu` times both with CPU time instead
of wall time (the calling thread's at one thread; the process's, all threads' work, at more), which other
processes' slices do not advance.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from bench_options import positive_int
from llama_cache import LlamaDims, greedy_with_cache, llama_with_cache
from make_llama import SMALL

from minimlc import Generator
from minimlc.frontend.onnx_weight_quantization import quantize_model
from minimlc.runtime.machine_peak import memory_bandwidth_gbs

CONFIGS = {
    "small": SMALL,
    "0.5b": LlamaDims(hidden=896, heads=14, kv_heads=2, ffn=4864, vocab=32000, layers=24, max_positions=512),
}
STREAM_MIB = 512
Clock = Callable[[], float]
QUANTIZED = {"int8": (8, None), "int4": (4, None), "int8-al4": (8, 4), "int4-al4": (4, 4)}
"""Precision -> (weight bits, MatMulNBits' accuracy_level)."""


def weight_bytes_per_token(model: onnx.ModelProto) -> int:
    """Bytes of the MatMul weights (every one read once per decoded token; the embedding gives one row): float32
    initializers of MatMul, packed codes, scales and zero points of MatMulNBits."""
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    matmuls = [node for node in model.graph.node if node.op_type in ("MatMul", "MatMulNBits")]
    read = {name for node in matmuls for name in node.input if name in initializers}
    return sum(
        math.prod(initializers[name].dims) * helper.tensor_dtype_to_np_dtype(initializers[name].data_type).itemsize
        for name in read
    )


def onnx_runtime_session(model: onnx.ModelProto, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), default="small")
    parser.add_argument(
        "--layers", type=positive_int, help="the config's shapes with this many layers (default: its own)"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=128, help="prompt tokens (default 128)")
    parser.add_argument("--new", type=int, default=128, help="new tokens (default 128)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="what times each call (default wall)")
    parser.add_argument(
        "--precisions", default="float32", help=f"comma-separated, of float32, {', '.join(QUANTIZED)} (default float32)"
    )
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    dims = (
        CONFIGS[args.config] if args.layers is None else dataclasses.replace(CONFIGS[args.config], layers=args.layers)
    )
    clock = time.perf_counter if args.clock == "wall" else time.thread_time if args.threads == 1 else time.process_time
    print(f"building the {args.config} config ...", flush=True)
    model = llama_with_cache(dims)
    prompt = [int(t) for t in np.random.default_rng(0).integers(0, dims.vocab, args.prompt)]
    contenders: dict[str, Callable[[], tuple[float, float]]] = {}
    weights: dict[str, int] = {}
    compile_seconds: dict[str, float] = {}
    generators: dict[str, Generator] = {}
    for precision in precisions:
        print(f"compiling at {precision} ...", flush=True)
        bits, level = QUANTIZED.get(precision, (None, None))
        quantized = model if bits is None else quantize_model(model, bits, accuracy_level=level)
        start = time.perf_counter()
        given, named = (quantized, "float32") if level else (model, precision)  # Generator quantizes int8/int4 itself
        generator = Generator(given, max_length=args.prompt + args.new, num_threads=args.threads, precision=named)
        compile_seconds[precision] = time.perf_counter() - start
        generators[precision] = generator
        contenders[f"minimlc {precision}"] = _ours(generator, prompt, args.new, clock)
        weights[precision] = weight_bytes_per_token(quantized)
        if precision != "int8":  # ONNX Runtime 1.32's 8-bit MatMulNBits takes a slow path (14-540 ms a GEMV here)
            session = onnx_runtime_session(quantized, args.threads)
            contenders[f"onnxruntime {precision}"] = _theirs(session, dims, prompt, args.new, clock)
    del model
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for round_ in range(args.rounds):
        order = list(contenders) if round_ % 2 == 0 else list(reversed(contenders))
        for name in order:
            samples[name].append(contenders[name]())
    bandwidth_bytes = memory_bandwidth_gbs(args.threads, STREAM_MIB) * 1e9
    _report(args, dims, samples, weights, compile_seconds, bandwidth_bytes)
    if len(generators) > 1:
        reference = generators["float32"].next_token_logits(prompt) if "float32" in generators else None
        for precision, generator in generators.items():
            if reference is not None and precision != "float32":
                error = np.abs(generator.next_token_logits(prompt) - reference).max() / np.abs(reference).max()
                print(f"{precision} logits after the prompt: max |difference| {error:.2e} of the float32 logits' max")
    return 0


def _ours(generator: Generator, prompt: list[int], new: int, clock: Clock) -> Callable[[], tuple[float, float]]:
    """Prefill and decode tokens/s of one generation: the first id comes after the prefill, each later one after a
    decode step."""

    def run() -> tuple[float, float]:
        tokens = generator.stream(prompt, max_new_tokens=new)
        start = clock()
        next(tokens)
        prefill = clock() - start
        start = clock()
        decoded = sum(1 for _ in tokens)
        return len(prompt) / prefill, decoded / (clock() - start)

    return run


def _theirs(session, dims: LlamaDims, prompt: list[int], new: int, clock: Clock) -> Callable[[], tuple[float, float]]:
    def run() -> tuple[float, float]:
        seconds: list[float] = []

        def timed(feed: dict[str, np.ndarray]) -> list[np.ndarray]:
            start = clock()
            outputs = session.run(None, feed)
            seconds.append(clock() - start)
            return outputs

        greedy_with_cache(timed, dims, prompt, new)
        return len(prompt) / seconds[0], (new - 1) / sum(seconds[1:])

    return run


def _report(
    args, dims: LlamaDims, samples, weights: dict[str, int], compile_seconds: dict[str, float], bandwidth_bytes: float
) -> None:
    print(
        f"\n{args.config} ({dims.layers} layers): prompt {args.prompt}, {args.new} new tokens, "
        f"{args.threads} thread(s), {args.clock} clock; "
        f"streaming read {bandwidth_bytes / 1e9:.1f} GB/s; compile "
        + ", ".join(f"{precision} {seconds:.1f} s" for precision, seconds in compile_seconds.items())
    )
    print(f"{'':22} {'MB/token':>9} {'prefill tok/s':>14} {'decode tok/s':>13} {'bound tok/s':>12} {'% of bound':>11}")
    medians = {name: tuple(statistics.median(column) for column in zip(*rows)) for name, rows in samples.items()}
    for name, (prefill, decode) in medians.items():
        precision = name.split()[-1]
        bound = bandwidth_bytes / weights[precision]
        print(
            f"{name:22} {weights[precision] / 1e6:9.0f} {prefill:14.1f} {decode:13.2f} {bound:12.1f} "
            f"{100 * decode / bound:10.0f}%"
        )
    if "minimlc float32" in medians and "onnxruntime float32" in medians:
        (ours_prefill, ours_decode), (ort_prefill, ort_decode) = (
            medians["minimlc float32"],
            medians["onnxruntime float32"],
        )
        ratios = f"prefill {ours_prefill / ort_prefill:.2f}x, decode {ours_decode / ort_decode:.2f}x"
        print(f"float32 minimlc / ONNX Runtime: {ratios}")
    for precision in QUANTIZED:
        if f"minimlc {precision}" in medians and "minimlc float32" in medians:
            speedup = medians[f"minimlc {precision}"][1] / medians["minimlc float32"][1]
            print(f"minimlc {precision} decode / minimlc float32 decode: {speedup:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
