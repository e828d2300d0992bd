"""Compile time and run time of onnx's nine light CNNs (1x3x224x224) and two transformers, beside ONNX Runtime's run
time.

    python bench/bench_compile.py                       # every light model, bert and gpt2
    python bench/bench_compile.py --models resnet50,squeezenet,bert --runs 10
    python bench/bench_compile.py --compiles 5            # each model compiled 5 times: the median compile

The transformers: `bert`, bench_models' BERT-style encoder (`examples/transformer_models.py`: 4 layers, hidden 256,
4 heads, FFN 1024, 128 tokens, static shapes) and `gpt2`, a 2-layer GPT-2 export with dynamic batch and sequence
axes (`examples/dynamic_decoders.py`: hidden 128, 4 heads, FFN 512, vocabulary 1,000, about 0.5 M parameters),
compiled once for every shape and run at (1, 64).

Compile time is wall time from the ONNX model to callable native code, compile cache off (the median of `--compiles`
compiles in one process), split into its stages:
`frontend` (ONNX import), `lower` (graph to `scf`, one process), `codegen` (`scf` to object code: lowering to the
llvm dialect, translation to LLVM IR, LLVM's O3 and instruction selection, in `parts` processes at once, see
`driver/codegen.py`; `MINIMLC_COMPILE_JOBS=1` compiles in one), `load` (loading the objects and the load-time
precomputation); `cpu` is the seconds all codegen processes spent, whose ratio to `codegen` is the parallel speed-up.
Run time is the median of `--runs` calls after one warm-up. A model that does not compile is listed with its error
instead of figures.

    python bench/bench_compile.py --kernel-cache --runs 3   # BERT-6 and ResNet-50, cold and warm (kernel cache)
    python bench/bench_compile.py --kernel-cache --models bert

`--kernel-cache` times the kernel cache (`driver/kernel_cache.py`) instead: the 6-layer BERT-style encoder compiled
with the compile cache off, with a fresh (empty) cache directory, and with one where the 4-layer encoder (the same
kernels) was compiled first; the same for ResNet-50 after ResNet-50 with a 10-class classifier (`resnet50`) and
after ResNet-50 with other weights (`resnet50-weights`: a whole-model hit); the median of `--runs` of each (CPU
seconds, this process's and its children's, beside wall: the host is often loaded), a fresh directory per run, warm
over cache off, and the cold and warm compiles' split by stage.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from minimlc import InferenceSession
from minimlc.driver.codegen import CODEGEN_STEPS
from minimlc.tools.conformance import light_model_paths


def median_seconds(call: Callable[[], object], runs: int) -> float:
    call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def ort_run_seconds(model: onnx.ModelProto, feeds: dict[str, np.ndarray], runs: int) -> float | None:
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return median_seconds(lambda: session.run(None, feeds), runs)


def _transformers() -> dict[str, Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from dynamic_decoders import gpt2
    from transformer_models import Dims, bert

    def tokens(batch: int, length: int, vocab: int) -> dict[str, np.ndarray]:
        ids = np.random.default_rng(0).integers(0, vocab, (batch, length)).astype(np.int64)
        return {"input_ids": ids}

    def bert_workload() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        model = bert(Dims(tokens=128, hidden=256, heads=4, ffn=1024), layers=4, vocab=30522)
        return model, {model.graph.input[0].name: tokens(1, 128, 30522)["input_ids"]}

    def gpt2_workload() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        model = gpt2(Dims(tokens=64, hidden=128, heads=4, ffn=512), layers=2, vocab=1000)
        return model, {**tokens(1, 64, 1000), "attention_mask": np.ones((1, 64), np.int64)}

    return {"bert": bert_workload, "gpt2": gpt2_workload}


def _light_workload(path: Path) -> Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]]:
    def load() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        model = onnx.load(path)
        initializers = {tensor.name for tensor in model.graph.initializer}
        feeds = {
            vi.name: np.random.default_rng(0)
            .standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim])
            .astype(np.float32)
            for vi in model.graph.input
            if vi.name not in initializers
        }
        return model, feeds

    return load


def bench_model(name: str, model: onnx.ModelProto, feeds: dict[str, np.ndarray], runs: int, compiles: int = 1) -> str:
    """One table row: compile seconds (total, of which frontend; the median of `compiles` compiles, with its stages),
    minimlc and ONNX Runtime run milliseconds."""
    compiled = []
    for _ in range(compiles):
        start = time.perf_counter()
        try:
            session = InferenceSession(model, cache=False)
        except Exception as error:  # report every model, whatever stops one of them
            return f"{name:<14}  not compiled: {type(error).__name__}: {str(error).splitlines()[0][:150]}"
        compiled.append((time.perf_counter() - start, session))
    compile_seconds, session = sorted(compiled, key=lambda pair: pair[0])[compiles // 2]
    del compiled
    run_ms = median_seconds(lambda: session.run(None, feeds), runs) * 1e3
    ort_seconds = ort_run_seconds(model, feeds, runs)
    ort_ms = f"{ort_seconds * 1e3:8.1f}" if ort_seconds is not None else f"{'-':>8}"
    stats = session.stats
    frontend = compile_seconds - session.compile_seconds
    cpu = sum(stats[f"{step}_seconds"] for step in CODEGEN_STEPS)
    stages = f"{frontend:8.2f}  {stats['lower_seconds']:6.2f}  {stats['codegen_seconds']:7.2f}  {cpu:6.2f}"
    return (
        f"{name:<14}  {compile_seconds:9.2f}  {stages}  {stats['codegen_partitions']:5d}  "
        f"{stats['load_seconds']:5.2f}  {run_ms:8.1f}  {ort_ms}  {len(model.graph.node):5d}"
    )


def bench_kernel_cache(runs: int, wanted: list[str] | None) -> None:
    """Print each model's compile seconds, wall and CPU, cold (cache off; an empty cache) and after a model that
    shares its kernels (median of `runs`), warm over cold, and the cold and warm compiles' stages: BERT-6 after
    BERT-4, ResNet-50 after ResNet-50 with 10 classes (every kernel but the classifier's shared), and ResNet-50 after
    ResNet-50 with other weights (a whole-model hit: weights are not in the key)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from transformer_models import Dims, bert

    dims = Dims(tokens=128, hidden=256, heads=4, ffn=1024)
    resnet = onnx.load(next(path for path in light_model_paths() if path.stem == "light_resnet50"))
    pairs = {
        "bert": ("BERT-6 after BERT-4", bert(dims, layers=6, vocab=30522), bert(dims, layers=4, vocab=30522)),
        "resnet50": ("ResNet-50 after ResNet-50/10", resnet, _with_classes(resnet, 10)),
        "resnet50-weights": ("ResNet-50 after ResNet-50, other weights", resnet, _with_other_weights(resnet)),
    }
    if unknown := set(wanted or ()) - set(pairs):
        raise SystemExit(f"no kernel-cache pair named {', '.join(sorted(unknown))} (known: {', '.join(pairs)})")
    os.environ["MINIMLC_CACHE"] = "1"
    for name, model, before in (pairs[key] for key in wanted or pairs):
        samples: dict[str, list[tuple[float, float]]] = {"cache off": [], "empty cache": [], "warm": []}
        split: dict[str, list[dict]] = {"cache off": [], "warm": []}
        for _ in range(runs):
            seconds, stats = _compile_seconds(model, cache=False)
            samples["cache off"].append((seconds, stats["cpu_seconds"]))
            split["cache off"].append(stats)
            for after in (None, before):
                with tempfile.TemporaryDirectory(prefix="minimlc-kernel-cache-") as directory:
                    os.environ["MINIMLC_CACHE_DIR"] = directory
                    if after is not None:
                        _compile_seconds(after)
                    seconds, stats = _compile_seconds(model)
                samples["empty cache" if after is None else "warm"].append((seconds, stats["cpu_seconds"]))
                if after is not None:
                    split["warm"].append(stats)
        print(name)
        medians = {}
        for label, values in samples.items():
            walls, cpus = zip(*values, strict=True)
            medians[label] = statistics.median(walls), statistics.median(cpus)
            print(
                f"  {label:<12} {medians[label][0]:6.2f} s wall ({', '.join(f'{v:.2f}' for v in walls)}), "
                f"{medians[label][1]:6.2f} s cpu ({', '.join(f'{v:.2f}' for v in cpus)})"
            )
        (cold_wall, cold_cpu), (warm_wall, warm_cpu) = medians["cache off"], medians["warm"]
        print(f"  warm / cache off: {warm_cpu / cold_cpu:.0%} cpu, {warm_wall / cold_wall:.0%} wall")
        for label, all_stats in split.items():
            print(f"  {label} split: {_split(sorted(all_stats, key=lambda stats: stats['cpu_seconds'])[runs // 2])}")


def _split(stats: dict) -> str:
    """A compile's stages, in the wall seconds `session.stats` gives (`codegen`'s steps in CPU seconds, summed over
    its processes), its CPU seconds and what the caches gave it."""
    frontend = stats["total"] - stats["compile_seconds"]
    head = f"cpu {stats['cpu_seconds']:.2f}  frontend {frontend:.2f}"
    if stats.get("cache_hit"):  # the entry's stats are its cold compile's: nothing was lowered or compiled now
        return f"{head}  load {stats['load_seconds']:.2f}; whole-model hit"
    steps = "  ".join(f"{step} {stats[f'{step}_seconds']:.2f}" for step in CODEGEN_STEPS)
    hits, misses = stats.get("kernel_cache_hits"), stats.get("kernel_cache_misses")
    caches = "no kernel cache" if hits is None else f"kernels: {hits} cached, {misses} compiled"
    return (
        f"{head}  lower {stats['lower_seconds']:.2f}  codegen "
        f"{stats['codegen_seconds']:.2f} ({steps})  load {stats['load_seconds']:.2f}; {caches}"
    )


def _compile_seconds(model: onnx.ModelProto, cache: bool = True) -> tuple[float, dict]:
    """Wall seconds to compile `model`, and its stats with `cpu_seconds`: this process's and its children's CPU
    seconds, steadier than wall time on a loaded machine."""
    start, cpu = time.perf_counter(), _cpu_seconds()
    session = InferenceSession(model, cache=cache)
    total = time.perf_counter() - start
    return total, {**session.stats, "total": total, "cpu_seconds": _cpu_seconds() - cpu}


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _with_classes(resnet: onnx.ModelProto, classes: int) -> onnx.ModelProto:
    """The light ResNet-50 with a classifier of `classes` outputs (its weights' shapes are initializers)."""
    model = onnx.ModelProto()
    model.CopyFrom(resnet)
    for tensor in model.graph.initializer:
        if tensor.name in ("gpu_0/pred_w_0__SHAPE", "gpu_0/pred_b_0__SHAPE"):
            shape = numpy_helper.to_array(tensor).copy()
            shape[0] = classes
            tensor.CopyFrom(numpy_helper.from_array(shape, tensor.name))
    model.graph.output[0].type.tensor_type.shape.dim[1].dim_value = classes
    return model


def _with_other_weights(resnet: onnx.ModelProto) -> onnx.ModelProto:
    """The light ResNet-50 with other weights: its weights are ConstantOfShape fills, each given another value."""
    model = onnx.ModelProto()
    model.CopyFrom(resnet)
    for node in model.graph.node:
        for attribute in node.attribute:
            if node.op_type == "ConstantOfShape" and attribute.name == "value":
                value = numpy_helper.to_array(attribute.t)
                attribute.t.CopyFrom(numpy_helper.from_array((value * 0.5 + 0.25).astype(value.dtype)))
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated names (e.g. resnet50,vgg19,bert); default: all")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per model after one warm-up (default 5)")
    parser.add_argument("--compiles", type=int, default=1, help="compiles per model, the median reported (default 1)")
    parser.add_argument("--kernel-cache", action="store_true", help="time the kernel cache instead")
    args = parser.parse_args()
    if args.kernel_cache:
        bench_kernel_cache(args.runs, args.models.split(",") if args.models else None)
        return 0
    workloads = {path.stem.removeprefix("light_"): _light_workload(path) for path in light_model_paths()}
    workloads.update(_transformers())
    wanted = args.models.split(",") if args.models else list(workloads)
    if unknown := [name for name in wanted if name not in workloads]:
        parser.error(f"no workload named {', '.join(unknown)} (known: {', '.join(workloads)})")
    print(
        f"{'model':<14}  {'compile s':>9}  {'frontend':>8}  {'lower':>6}  {'codegen':>7}  {'cpu':>6}  {'parts':>5}  "
        f"{'load':>5}  {'mlc ms':>8}  {'ORT ms':>8}  {'nodes':>5}"
    )
    for name in wanted:
        print(f"{name} ...", file=sys.stderr, flush=True)
        print(bench_model(name, *workloads[name](), args.runs, args.compiles), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
