"""Prefill and decode tokens/s of `minimlc.Generator` beside ONNX Runtime on LLaMA-architecture decoders with a KV
cache (`examples/llama_cache.py`, random weights), and the memory-bandwidth bound of decode on this machine.

    python bench/bench_generate.py                       # the small config (CI-sized)
    python bench/bench_generate.py --config 0.5b         # hidden 896, 24 layers, 14 heads, 2 KV heads, vocab 32k
    python bench/bench_generate.py --config 0.5b --threads 2 --prompt 128 --new 128 --rounds 3

Both generate greedily from the same prompt through the same loop (prefill the prompt in one call, then one token
per call, each step's presents fed back as pasts), ONNX Runtime at `--threads` intra-op threads; rounds alternate
which goes first and the table gives medians. Decode at batch 1 reads every weight once per token, so its tokens/s
is bounded by bandwidth / weight bytes: the bandwidth is measured by a minimlc-compiled ReduceSum streaming 512 MiB
of float32 (more than the caches hold) at the same thread count.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from llama_cache import LlamaDims, cache_names, llama_with_cache
from make_llama import SMALL

from minimlc import Generator, InferenceSession

CONFIGS = {
    "small": SMALL,
    "0.5b": LlamaDims(hidden=896, heads=14, kv_heads=2, ffn=4864, vocab=32000, layers=24, max_positions=512),
}
STREAM_BYTES = 512 << 20


def weight_bytes_per_token(model: onnx.ModelProto) -> int:
    """Bytes of the MatMul weights (every one read once per decoded token; the embedding gives one row)."""
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    read = {
        name for node in model.graph.node if node.op_type == "MatMul" for name in node.input if name in initializers
    }
    return sum(int(np.prod(initializers[name].dims)) * 4 for name in read)


def bandwidth(threads: int) -> float:
    """Bytes per second of a minimlc-compiled float32 ReduceSum of rows of 4,096 over `STREAM_BYTES` (median of 7)."""
    count = STREAM_BYTES // 4
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axis"], ["total"], keepdims=0)],
        "stream",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count // 4096, 4096])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [count // 4096])],
        [onnx.numpy_helper.from_array(np.array([1], np.int64), "axis")],
    )
    session = InferenceSession(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), num_threads=threads
    )
    x = np.full((count // 4096, 4096), 1 / 4096, np.float32)
    (total,) = session.run(None, {"x": x})
    np.testing.assert_allclose(total, 1.0, rtol=1e-5, err_msg="the streaming read did not read every element")
    times = []
    for _ in range(7):
        start = time.perf_counter()
        session.run(None, {"x": x})
        times.append(time.perf_counter() - start)
    return STREAM_BYTES / statistics.median(times)


def onnx_runtime_generate(session, dims: LlamaDims, prompt: list[int], new: int) -> tuple[list[int], float, float]:
    """Greedy ids, prefill seconds and decode seconds of the same loop `Generator` runs, over ONNX Runtime."""
    pasts = [past for past, _ in cache_names(dims.layers)]
    cache = {name: np.zeros((1, dims.kv_heads, 0, dims.head_size), np.float32) for name in pasts}
    ids, length, tokens, seconds = np.array([prompt], np.int64), 0, [], []
    for _ in range(new):
        start, count = time.perf_counter(), ids.shape[1]
        outputs = session.run(
            None,
            {
                "input_ids": ids,
                "attention_mask": np.ones((1, length + count), np.int64),
                "position_ids": np.arange(length, length + count, dtype=np.int64).reshape(1, -1),
                **cache,
            },
        )
        tokens.append(int(outputs[0][0, -1].argmax()))
        seconds.append(time.perf_counter() - start)
        cache = dict(zip(pasts, outputs[1:]))
        ids, length = np.array([[tokens[-1]]], np.int64), length + count
    return tokens, seconds[0], sum(seconds[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), default="small")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=128, help="prompt tokens (default 128)")
    parser.add_argument("--new", type=int, default=128, help="new tokens (default 128)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import onnxruntime as ort

    dims = CONFIGS[args.config]
    print(f"building the {args.config} config ...", flush=True)
    model = llama_with_cache(dims)
    weights = weight_bytes_per_token(model)
    print(f"compiling ({weights / 1e6:.0f} MB of weights read per token) ...", flush=True)
    start = time.perf_counter()
    generator = Generator(model, max_length=args.prompt + args.new, num_threads=args.threads)
    compile_seconds = time.perf_counter() - start
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = args.threads, 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    oracle = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    del model
    prompt = [int(t) for t in np.random.default_rng(0).integers(0, dims.vocab, args.prompt)]
    samples: dict[str, list[tuple[float, float]]] = {"minimlc": [], "onnxruntime": []}
    for round_ in range(args.rounds):
        for name in ("minimlc", "onnxruntime") if round_ % 2 == 0 else ("onnxruntime", "minimlc"):
            if name == "minimlc":
                ours = generator.generate(prompt, max_new_tokens=args.new)
                stats = generator.stats
                samples[name].append((stats["prefill_tokens_per_second"], stats["decode_tokens_per_second"]))
            else:
                theirs, prefill, decode = onnx_runtime_generate(oracle, dims, prompt, args.new)
                samples[name].append((args.prompt / prefill, (args.new - 1) / decode))
        if ours != theirs:
            first = next(n for n, (a, b) in enumerate(zip(ours, theirs)) if a != b)
            print(f"note: the greedy ids part at new token {first} (float32 rounding on near-equal logits)")
    bound = bandwidth(args.threads) / weights
    print(
        f"\n{args.config}: prompt {args.prompt}, {args.new} new tokens, {args.threads} thread(s); "
        f"minimlc compiled in {compile_seconds:.1f} s; bandwidth bound {bound:.1f} tokens/s "
        f"({bound * weights / 1e9:.1f} GB/s over {weights / 1e6:.0f} MB per token)"
    )
    print(f"{'':12} {'prefill tok/s':>14} {'decode tok/s':>13} {'decode % of bound':>18}")
    for name, rows in samples.items():
        prefill, decode = (statistics.median(column) for column in zip(*rows))
        print(f"{name:12} {prefill:14.1f} {decode:13.2f} {100 * decode / bound:17.0f}%")
    (ours_prefill, ours_decode), (ort_prefill, ort_decode) = (
        tuple(statistics.median(column) for column in zip(*rows)) for rows in samples.values()
    )
    print(f"minimlc / ONNX Runtime: prefill {ours_prefill / ort_prefill:.2f}x, decode {ours_decode / ort_decode:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
