"""Convolution algorithms as a tuning decision (TVM's choice among a convolution's implementations, each timed): for
every distinct stride-1 3x3 convolution shape of a model that Winograd F(2x2, 3x3) could take
(`te_conv_winograd.eligible_convolution`), a standalone block is built both ways and timed in the measurer's worker,
and both latencies are remembered as records keyed by the shape (`tuning_db.algorithm_key`, rule `conv-algorithm`);
`te-conv-winograd{tuning-db}` takes the faster one ahead of `prefers_winograd`'s rule, for this model and any other
with the shape. A shape with records on this target is not timed again.

The block holds the convolution as a network does: a 1x1 convolution and a ReLU before it (its input arrives
channels-last, and its padding and that ReLU fold into the input transform), the 3x3 convolution with a bias and a
ReLU, and a 1x1 convolution after it (so it is stored channels-last). Both builds run the same 1x1 convolutions, so
their difference is the 3x3 convolution's algorithm; they are timed in alternating batches (thread CPU time on one
thread), warm, as paired candidates are:

    with Measurer() as measurer:
        chosen = tune_algorithms(imported, db, target, measurer, "model.onnx", out=sys.stdout)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TextIO

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from minimlc.dialects import te
from minimlc.frontend.onnx import ImportedModel
from minimlc.lowering.pipeline import PassItem, build_pipeline, pipeline_passes, quoted, run_passes, set_pass_options
from minimlc.lowering.strategy.conv import ConvShape, prefers_winograd
from minimlc.lowering.strategy.tuning_db import ALGORITHM_RULE, Record, TuningDatabase, algorithm_key, target_key
from minimlc.lowering.target import Target, set_target
from minimlc.lowering.te.te_conv_winograd import eligible_convolution
from minimlc.tuner.measure import Measurer, measure_builds

ALGORITHMS = ("winograd", "direct")


def winograd_shapes(imported: ImportedModel, target: Target, opt_level: int = 3) -> list[ConvShape]:
    """The distinct shapes of `imported`'s convolutions that `te-conv-winograd` could take at `opt_level` (none at
    O0 and O1, which do not run it), in program order; `imported` itself is left as it is."""
    passes = pipeline_passes(opt_level)
    if "te-conv-winograd" not in passes:
        return []
    module = imported.module.clone()
    set_target(module, target)
    run_passes(module, passes[: passes.index("te-conv-winograd")])
    shapes: list[ConvShape] = []
    for op in module.walk():
        if isinstance(op, te.ComputeOp) and eligible_convolution(op) is not None:
            n, height, width, out_channels = op.shape
            shape = ConvShape(n, op.reduce_extents.get_values()[0], out_channels, height, width, 3, 3)
            if shape not in shapes:
                shapes.append(shape)
    return shapes


def block_model(shape: ConvShape) -> onnx.ModelProto:
    """1x1 convolution + ReLU -> the 3x3 convolution (pad 1, bias) + ReLU -> 1x1 convolution, with `shape`'s
    batch, channels and map (see the module docstring)."""
    rng = np.random.default_rng(0)
    c, f = shape.in_channels, shape.out_channels

    def weight(name: str, dims: tuple[int, ...]) -> TensorProto:
        scale = (2.0 / np.prod(dims[1:])) ** 0.5
        return numpy_helper.from_array((rng.standard_normal(dims) * scale).astype(np.float32), name)

    weights = [weight("w0", (c, c, 1, 1)), weight("w", (f, c, 3, 3)), weight("w2", (f, f, 1, 1))]
    weights.append(numpy_helper.from_array((rng.standard_normal(f) * 0.1).astype(np.float32), "b"))
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"]),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["ar", "w", "b"], ["t"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["t"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["y"]),
    ]
    dims = [shape.batch, c, shape.out_height, shape.out_width]
    graph = helper.make_graph(
        nodes,
        "conv3x3_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [shape.batch, f, *dims[2:]])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def tune_algorithms(
    imported: ImportedModel,
    db: TuningDatabase,
    target: Target,
    measurer: Measurer,
    name: str,
    opt_level: int = 3,
    out: TextIO | None = None,
) -> dict[ConvShape, str]:
    """Time both algorithms of every Winograd-eligible shape of `imported` without records on `target` (see the
    module docstring), add the records to `db`, print a table to `out`; returns each shape's faster algorithm (the
    records' best: earlier runs' too), leaving out shapes whose blocks failed to build or time."""
    cpu = target_key(target)
    passes = build_pipeline(opt_level)
    chosen: dict[ConvShape, str] = {}
    rows = []
    for shape in winograd_shapes(imported, target, opt_level):
        key = algorithm_key(shape)
        timed = "reused"
        if not db.records_for(key, cpu):
            timed = "timed"
            builds = [set_pass_options(passes, "te-conv-winograd", convolutions=c) for c in ("all", "none")]
            block = block_model(shape).SerializeToString()
            result = measurer.run(measure_builds, _job(block, builds, target, measurer))
            flops = 2 * shape.rows * shape.depth * shape.out_channels
            latencies = (result.latency, result.baseline)
            for algorithm, latency in zip(ALGORITHMS, latencies):
                error = result.error if latency is None else None
                record = Record(key, cpu, ALGORITHM_RULE, key, flops, {"algorithm": algorithm}, latency, error, name)
                db.add(record)
        best = db.best(key, cpu)
        if best is None:
            rows.append(f"{key:<28} | {'-':>11} | {'-':>11} | {'failed':<8} | {timed}")
            continue
        chosen[shape] = str(best.config["algorithm"])
        records = {r.config["algorithm"]: r.latency for r in db.records_for(key, cpu) if r.latency is not None}
        cells = [f"{records[a] * 1e3:.3f}" if a in records else "-" for a in ALGORITHMS]
        rows.append(f"{key:<28} | {cells[0]:>11} | {cells[1]:>11} | {chosen[shape]:<8} | {timed}")
    if rows and out is not None:
        header = f"{'convolution':<28} | {'winograd ms':>11} | {'direct ms':>11} | {'chosen':<8} | records"
        print("\n".join([header, "-" * len(header), *rows]), file=out, flush=True)
    return chosen


def check_in_model(
    model: bytes,
    chosen: dict[ConvShape, str],
    db: TuningDatabase,
    target: Target,
    measurer: Measurer,
    name: str,
    opt_level: int = 3,
    out: TextIO | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> bool:
    """Time the model with the algorithms `chosen` against `prefers_winograd`'s, where they differ (default schedules
    both, alternating batches in the worker); if the chosen ones are not faster there, give each differing choice a
    failed record (`slower in the model`), so that the rule's algorithm is applied instead. A block is not the
    convolution in its model (its neighbours differ, its weights come from memory).
    Returns whether the choices were kept (True where none differ)."""
    differing = {s: a for s, a in chosen.items() if (a == "winograd") != prefers_winograd(s, target)}
    if not differing:
        return True
    passes = build_pipeline(opt_level)
    tuned = set_pass_options(passes, "te-conv-winograd", tuning_db=quoted(str(db.path)))
    result = measurer.run(measure_builds, _job(model, [tuned, passes], target, measurer, input_shapes))
    ratio = result.latency / result.baseline if result.latency and result.baseline else None
    kept = ratio is not None and ratio < 1.0
    if out is not None:
        shown = f"{ratio:.3f}x" if ratio is not None else f"not measured ({result.error})"
        verdict = "kept" if kept else "rejected: the rule's algorithms apply"
        differ = f"{len(differing)} measured algorithm choice(s) that differ from the rule's"
        print(f"the model with the {differ}: {shown} its time with the rule's; {verdict}", file=out, flush=True)
    if not kept:
        error = f"slower in the model: {ratio:.3f}x" if ratio is not None else f"not measured: {result.error}"
        for shape, algorithm in differing.items():
            key = algorithm_key(shape)
            db.add(Record(key, target_key(target), ALGORITHM_RULE, key, 0, {"algorithm": algorithm}, None, error, name))
    return kept


def _job(
    model: bytes,
    builds: list[tuple[PassItem, ...]],
    target: Target,
    measurer: Measurer,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, object]:
    return {
        "model": model,
        "input_shapes": dict(input_shapes or {}),
        "builds": builds,
        "target": target.cpu,
        "threads": measurer.threads,
        "min_seconds": measurer.min_seconds,
        "repeats": measurer.repeats,
    }
