"""Benchmark single kernels against numpy/OpenBLAS and ONNX Runtime, all on one thread.

    python bench/bench_kernels.py                        # table on stdout
    python bench/bench_kernels.py --runs 30 --json bench/results/kernels.json
    python bench/bench_kernels.py --all-convs
    python bench/bench_kernels.py --model-convs resnet50,squeezenet --runs 15 --json bench/results/convs.json

- MatMul 1024^3 fp32 with a constant B: minimlc vs numpy (`a @ b`, OpenBLAS) vs ONNX Runtime; GFLOP/s and % of numpy.
- Conv 1x64x56x56, 3x3, 64 filters, pad 1, + ReLU: minimlc vs ONNX Runtime (GFLOP/s, time as a multiple of ONNX
  Runtime's); with `--all-convs` also ResNet-50's kinds of convolution (`CONV_SHAPES`).
- `--model-convs`: every distinct convolution of onnx's light models (one Conv + ReLU each, for minimlc between
  NHWC Transposes, as inside a model where its neighbours are channels-last; ONNX Runtime gets the plain NCHW
  model), compiled with each
  convolution algorithm (direct schedule, im2col + GEMM: `te-conv-im2col`) next to ONNX Runtime; per shape the
  times as multiples of ONNX Runtime's, the faster algorithm and the one O3's `auto` rule picks, then totals weighted
  by calls per inference (direct, im2col, the per-shape best, auto).

numpy's BLAS and ONNX Runtime are pinned to one thread (the environment variables are set before numpy loads).
Contenders run interleaved, one call each per round after a warm-up, so noise hits them alike; figures are medians.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from xdsl.utils.exceptions import PassFailedException  # noqa: E402

import minimlc.dialects.graph  # noqa: E402
from minimlc import InferenceSession  # noqa: E402
from minimlc.dialects import te  # noqa: E402
from minimlc.driver.compiler import compile_model  # noqa: E402
from minimlc.frontend.onnx import import_model  # noqa: E402
from minimlc.lowering.pipeline import (  # noqa: E402
    PIPELINES,
    run_passes,
    split_pass_list,
)


def interleaved_medians(contenders: dict[str, Callable[[], object]], runs: int, warmup: int) -> dict[str, float]:
    """Median seconds per call of each contender, timed round-robin."""
    for _ in range(warmup):
        for call in contenders.values():
            call()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(runs):
        for name, call in contenders.items():
            start = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def _ort_session(model: onnx.ModelProto) -> Callable[[dict[str, np.ndarray]], object] | None:
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def matmul_model(size: int, b: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [size, size])],
        [numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def bench_matmul(size: int, runs: int, warmup: int) -> dict[str, object]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    model = matmul_model(size, b)
    session = InferenceSession(model, num_threads=1, cache=False)
    feeds = {"a": a}
    (ours,) = session.run(None, feeds)
    np.testing.assert_allclose(ours, a @ b, rtol=1e-3, atol=1e-3)
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, feeds), "numpy": lambda: a @ b}
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
    medians = interleaved_medians(contenders, runs, warmup)
    flops = 2 * size**3
    return {
        "kernel": f"MatMul {size}^3",
        "compile_seconds": session.compile_seconds,
        "results": {
            name: {"ms": seconds * 1e3, "gflops": flops / seconds / 1e9, "pct_of_numpy": medians["numpy"] / seconds * 100}
            for name, seconds in medians.items()
        },
    }


CONV_SHAPES = [
    # (label, C, H=W, F, kernel, stride, pad): the bench row of issue 5, then ResNet-50's kinds of convolution.
    ("Conv 1x64x56x56 3x3 64 pad 1 + ReLU", 64, 56, 64, 3, 1, 1),
    ("ResNet-50 stem 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3),
    ("ResNet-50 1x1 64->256 @56", 64, 56, 256, 1, 1, 0),
    ("ResNet-50 1x1 256->64 @56", 256, 56, 64, 1, 1, 0),
    ("ResNet-50 3x3/2 128->128 @56", 128, 56, 128, 3, 2, 1),
    ("ResNet-50 1x1/2 256->512 @56", 256, 56, 512, 1, 2, 0),
    ("ResNet-50 3x3 256->256 @14", 256, 14, 256, 3, 1, 1),
    ("ResNet-50 1x1 1024->256 @14", 1024, 14, 256, 1, 1, 0),
    ("ResNet-50 1x1 512->2048 @7", 512, 7, 2048, 1, 1, 0),
]


ALGORITHMS = {"direct": "lower-to-llvm-conv-direct", "im2col": "lower-to-llvm-conv-im2col"}
"""Convolution algorithm -> the pipeline that compiles every convolution with it (O3 otherwise)."""


@dataclass(frozen=True)
class ConvSpec:
    """One convolution of a model: input (1, c, h, w), weight (f, c, kh, kw), strides, pads, dilations."""

    c: int
    h: int
    w: int
    f: int
    kh: int
    kw: int
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilations: tuple[int, int]

    def label(self) -> str:
        stride = "" if self.strides == (1, 1) else f"/{self.strides[0]}"
        dilation = "" if self.dilations == (1, 1) else f" d{self.dilations[0]}"
        return f"{self.kh}x{self.kw}{stride}{dilation} {self.c}->{self.f} @{self.h}"

    def out_size(self) -> tuple[int, int]:
        return tuple(  # type: ignore[return-value]
            (size + self.pads[axis] + self.pads[axis + 2] - self.dilations[axis] * (kernel - 1) - 1)
            // self.strides[axis]
            + 1
            for axis, (size, kernel) in enumerate(((self.h, self.kh), (self.w, self.kw)))
        )

    def flops(self) -> int:
        oh, ow = self.out_size()
        return 2 * self.c * self.f * self.kh * self.kw * oh * ow


def model_convs(name: str) -> list[tuple[ConvSpec, int]]:
    """The distinct group-1 convolutions of onnx's light model `name` (e.g. resnet50), with calls per inference, in
    first-use order (shapes from onnx shape inference)."""
    from onnx import shape_inference

    from minimlc.tools.conformance import light_model_paths

    (path,) = [p for p in light_model_paths() if p.stem == f"light_{name}"]
    model = shape_inference.infer_shapes(onnx.load(path))
    values = [*model.graph.value_info, *model.graph.input, *model.graph.output]
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
    shapes.update({init.name: list(init.dims) for init in model.graph.initializer})
    calls: dict[ConvSpec, int] = {}
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type != "Conv" or attrs.get("group", 1) != 1:
            continue
        (_, c, h, w), (f, _, kh, kw) = shapes[node.input[0]], shapes[node.input[1]]
        spec = ConvSpec(
            c, h, w, f, kh, kw,
            tuple(attrs.get("strides", (1, 1))),
            tuple(attrs.get("pads", (0, 0, 0, 0))),
            tuple(attrs.get("dilations", (1, 1))),
        )
        calls[spec] = calls.get(spec, 0) + 1
    return list(calls.items())


def conv_spec_model(spec: ConvSpec, channels_last: bool = False) -> onnx.ModelProto:
    """Conv (no bias) + ReLU of `spec`, with seeded weights. With `channels_last`, input and output are NHWC around
    the NCHW Conv (Transpose in, Transpose out), as a convolution inside a model sees its neighbours once
    te-channels-last has made them channels-last: the transposes compile to plain copies, not to transposing ones."""
    w = (np.random.default_rng(0).standard_normal((spec.f, spec.c, spec.kh, spec.kw)) * 0.05).astype(np.float32)
    oh, ow = spec.out_size()
    conv = helper.make_node(
        "Conv", ["x_nchw" if channels_last else "x", "w"], ["t"],
        pads=list(spec.pads), strides=list(spec.strides), dilations=list(spec.dilations),
    )
    nodes = [conv, helper.make_node("Relu", ["t"], ["y_nchw" if channels_last else "y"])]
    x_shape, y_shape = [1, spec.c, spec.h, spec.w], [1, spec.f, oh, ow]
    if channels_last:
        nodes.insert(0, helper.make_node("Transpose", ["x"], ["x_nchw"], perm=[0, 3, 1, 2]))
        nodes.append(helper.make_node("Transpose", ["y_nchw"], ["y"], perm=[0, 2, 3, 1]))
        x_shape, y_shape = [x_shape[d] for d in (0, 2, 3, 1)], [y_shape[d] for d in (0, 2, 3, 1)]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def session_with(model: onnx.ModelProto, pipeline: str) -> InferenceSession:
    """A one-thread session compiled with the named `pipeline` instead of an opt level's."""
    imported = import_model(model)
    session = InferenceSession.__new__(InferenceSession)
    session._set_signature(imported.inputs, imported.outputs, imported.constant_outputs)
    session._bind(compile_model(imported, pipeline), 3, 1)
    return session


def auto_choice(model: onnx.ModelProto) -> str:
    """The algorithm O3's `te-conv-im2col` (algorithm=auto) gives the model's convolution."""
    imported = import_model(model)
    passes = split_pass_list(PIPELINES["lower-to-llvm"][1])
    run_passes(imported.module, passes[: passes.index("te-conv-im2col") + 1])
    tags = {op.tag.data for op in imported.module.walk() if isinstance(op, te.ComputeOp)}
    return "im2col" if "conv_gemm" in tags else "direct"


def bench_conv_algorithms(spec: ConvSpec, calls: int, runs: int, warmup: int) -> dict[str, object]:
    """One convolution (+ ReLU) with each algorithm vs ONNX Runtime: ms, GFLOP/s, time / ONNX Runtime's."""
    model = conv_spec_model(spec)
    x = np.random.default_rng(1).standard_normal((1, spec.c, spec.h, spec.w)).astype(np.float32)
    feeds, feeds_nhwc = {"x": x}, {"x": np.ascontiguousarray(x.transpose(0, 2, 3, 1))}
    contenders: dict[str, Callable[[], object]] = {}
    sessions = {name: session_with(conv_spec_model(spec, True), pipeline) for name, pipeline in ALGORITHMS.items()}
    for name, session in sessions.items():
        contenders[name] = lambda session=session: session.run(None, feeds_nhwc)
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
        (theirs,) = ort(feeds)  # type: ignore[misc]
        for session in sessions.values():
            ours = session.run(None, feeds_nhwc)[0].transpose(0, 3, 1, 2)
            np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3)
    medians = interleaved_medians(contenders, runs, warmup)
    base = medians.get("onnxruntime", medians["direct"])
    return {
        "kernel": f"{spec.label()} (x{calls})",
        "spec": asdict(spec),
        "calls": calls,
        "auto": auto_choice(model),
        "results": {
            name: {"ms": s * 1e3, "gflops": spec.flops() / s / 1e9, "x_onnxruntime": s / base}
            for name, s in medians.items()
        },
    }


def conv_algorithm_table(model: str, runs: int, warmup: int) -> list[dict[str, object]]:
    """Every distinct convolution of `model` with both algorithms, and a total weighted by calls per inference
    for each algorithm, the per-shape best, and `auto`'s choice."""
    reports = []
    totals: dict[str, float] = {}
    for spec, calls in model_convs(model):
        report = bench_conv_algorithms(spec, calls, runs, warmup)
        results = report["results"]
        assert isinstance(results, dict)
        rows = dict(results)
        rows["best"] = min((results[name] for name in ALGORITHMS), key=lambda row: row["ms"])
        rows["auto"] = results[report["auto"]]
        for name, row in rows.items():
            totals[name] = totals.get(name, 0.0) + row["ms"] * calls
        reports.append(report)
        ratios = "  ".join(f"{name} {row['x_onnxruntime']:.2f}" for name, row in results.items())
        print(f"  {model}: {report['kernel']}: {ratios}  (auto: {report['auto']})", file=sys.stderr)
    base = totals.get("onnxruntime", totals["direct"])
    reports.append(
        {
            "kernel": f"{model} convolutions, weighted by calls per inference",
            "results": {name: {"ms": ms, "x_onnxruntime": ms / base} for name, ms in totals.items()},
        }
    )
    return reports


def print_algorithm_table(model: str, reports: list[dict[str, object]]) -> None:
    """Per shape: direct / ORT, im2col / ORT, the faster, auto's choice; then the weighted totals."""
    print(f"\n{model}: time / ONNX Runtime's, one thread, medians of interleaved runs")
    print(f"  {'convolution (calls)':34s} {'ORT ms':>8s} {'direct':>7s} {'im2col':>7s}  faster  auto")
    for report in reports[:-1]:
        r = report["results"]
        assert isinstance(r, dict)
        faster = min(ALGORITHMS, key=lambda name: r[name]["ms"])
        ort_ms = r.get("onnxruntime", {}).get("ms", float("nan"))
        print(
            f"  {report['kernel']:34s} {ort_ms:8.3f} {r['direct']['x_onnxruntime']:7.2f} "
            f"{r['im2col']['x_onnxruntime']:7.2f}  {faster:6s}  {report['auto']}"
        )
    totals = reports[-1]["results"]
    assert isinstance(totals, dict)
    cells = "  ".join(f"{name} {row['x_onnxruntime']:.2f}" for name, row in totals.items())
    print(f"  weighted total / ORT: {cells}")


def conv_model(c: int, size: int, f: int, kernel: int, stride: int, pad: int) -> onnx.ModelProto:
    """Conv (no bias) + ReLU on a 1 x c x size x size input, with seeded weights."""
    w = (np.random.default_rng(0).standard_normal((f, c, kernel, kernel)) * 0.05).astype(np.float32)
    out = (size + 2 * pad - kernel) // stride + 1
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["t"], pads=[pad] * 4, strides=[stride] * 2),
            helper.make_node("Relu", ["t"], ["y"]),
        ],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, out, out])],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def bench_conv(label: str, c: int, size: int, f: int, kernel: int, stride: int, pad: int, runs: int, warmup: int):
    """One convolution (+ ReLU): minimlc vs ONNX Runtime, GFLOP/s and time relative to ONNX Runtime."""
    if not hasattr(minimlc.dialects.graph, "ConvOp"):
        return {"kernel": label, "skipped": "the graph dialect has no ConvOp yet"}
    model = conv_model(c, size, f, kernel, stride, pad)
    x = np.random.default_rng(1).standard_normal((1, c, size, size)).astype(np.float32)
    try:
        session = InferenceSession(model, num_threads=1, cache=False)
    except PassFailedException as error:
        return {"kernel": label, "skipped": f"minimlc cannot compile it yet ({error})"}
    feeds = {"x": x}
    contenders: dict[str, Callable[[], object]] = {"minimlc": lambda: session.run(None, feeds)}
    if (ort := _ort_session(model)) is not None:
        contenders["onnxruntime"] = lambda: ort(feeds)
        (ours,), (theirs,) = session.run(None, feeds), ort(feeds)  # type: ignore[misc]
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3)
    medians = interleaved_medians(contenders, runs, warmup)
    out = (size + 2 * pad - kernel) // stride + 1
    flops = 2 * c * f * kernel * kernel * out * out
    base = medians.get("onnxruntime", medians["minimlc"])
    return {
        "kernel": label,
        "compile_seconds": session.compile_seconds,
        "results": {
            name: {"ms": s * 1e3, "gflops": flops / s / 1e9, "x_onnxruntime": s / base} for name, s in medians.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--size", type=int, default=1024, help="MatMul size (default 1024)")
    parser.add_argument("--all-convs", action="store_true", help="also the ResNet-50 convolution shapes")
    parser.add_argument(
        "--model-convs",
        help="only the distinct convolutions of these light models (e.g. resnet50,squeezenet,inception_v1): "
        "direct vs im2col vs ONNX Runtime per shape, weighted totals",
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.model_convs:
        tables = {name: conv_algorithm_table(name, args.runs, args.warmup) for name in args.model_convs.split(",")}
        for name, reports in tables.items():
            print_algorithm_table(name, reports)
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(tables, handle, indent=2)
        return
    shapes = CONV_SHAPES if args.all_convs else CONV_SHAPES[:1]
    reports = [bench_matmul(args.size, args.runs, args.warmup)]
    reports += [bench_conv(*shape, runs=args.runs, warmup=args.warmup) for shape in shapes]
    for report in reports:
        print(f"\n{report['kernel']}" + (f"  (compile {report['compile_seconds']:.2f} s)" if "compile_seconds" in report else ""))
        if "skipped" in report:
            print(f"  skipped: {report['skipped']}")
            continue
        for name, row in report["results"].items():  # type: ignore[union-attr]
            cells = "  ".join(f"{key} {value:8.2f}" for key, value in row.items())
            print(f"  {name:12s} {cells}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(reports, handle, indent=2)


if __name__ == "__main__":
    main()
