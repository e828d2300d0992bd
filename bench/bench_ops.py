"""Per-node benchmark: every compute node of a model as a one-node model, minimlc vs ONNX Runtime at one thread.

    python bench/bench_ops.py light_shufflenet                 # a light model by name, or a path to an .onnx file
    python bench/bench_ops.py model.onnx --ops Conv,Gemm --runs 5

Finds the kernels that make a model slow: each node (ConstantOfShape and Dropout excepted) becomes a model of its
own with the shapes onnx shape inference gives, its initializers copied and its ConstantOfShape operands (the light
models' weights) replaced by seeded random ones, and is timed with the interleaved medians of `bench_models.py`.
Nodes with the same op, attributes and shapes are timed once and counted each time. Lines are in graph order, then
the totals. Fusion across nodes is not measured: the sum of the nodes is not the model's time.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
from bench_models import interleaved_medians, ort_session  # noqa: E402
from onnx import helper, numpy_helper, shape_inference  # noqa: E402

from minimlc import InferenceSession  # noqa: E402
from minimlc.tools.conformance import light_model_paths  # noqa: E402

SKIPPED = ("ConstantOfShape", "Dropout")


def single_node_models(model: onnx.ModelProto, seed: int = 0) -> list[tuple[str, onnx.ModelProto]]:
    """(description, one-node model) per compute node of `model`, in graph order."""
    model = shape_inference.infer_shapes(model, data_prop=True)
    graph = model.graph
    shapes = {
        info.name: [dim.dim_value for dim in info.type.tensor_type.shape.dim]
        for info in (*graph.value_info, *graph.input, *graph.output)
    }
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    filled = {
        node.output[0]: numpy_helper.to_array(initializers[node.input[0]]).tolist()
        for node in graph.node
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers
    }
    rng = np.random.default_rng(seed)
    models = []
    for node in graph.node:
        if node.op_type in SKIPPED:
            continue
        inputs, constants = [], []
        for name in node.input:
            if name in initializers:
                constants.append(initializers[name])
            elif name in filled:
                values = (rng.standard_normal(filled[name]) * 0.05).astype(np.float32)
                constants.append(numpy_helper.from_array(values, name))
            elif name:
                inputs.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shapes[name]))
        output = node.output[0]
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        single = helper.make_graph(
            [helper.make_node(node.op_type, list(node.input), [output], domain=node.domain, **attributes)],
            node.op_type,
            inputs,
            [helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, shapes[output])],
            constants,
        )
        shown = {k: v for k, v in attributes.items() if not isinstance(v, bytes | onnx.TensorProto)}
        operand_shapes = [list(c.dims) if c.name in initializers else filled.get(c.name) for c in constants]
        description = f"{node.op_type} {[shapes[i.name] for i in inputs]} {operand_shapes} {shown}"
        models.append((description, helper.make_model(single, opset_imports=model.opset_import, ir_version=8)))
    return models


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a light model's name (light_alexnet...) or a path to an .onnx file")
    parser.add_argument("--ops", default="", help="comma-separated op types to time (default all)")
    parser.add_argument("--runs", type=int, default=7, help="timed rounds per node (default 7)")
    parser.add_argument("--budget-seconds", type=float, default=2.0, help="timing budget per node (default 2)")
    args = parser.parse_args(argv)
    light = {path.stem: path for path in light_model_paths()}
    path = light.get(args.model, Path(args.model))
    if not path.is_file():
        parser.error(f"{args.model} is neither a light model ({', '.join(sorted(light))}) nor a file")
    ops = set(filter(None, args.ops.split(",")))
    timed: dict[str, tuple[float, float]] = {}
    totals = [0.0, 0.0]
    for description, single in single_node_models(onnx.load(path)):
        if ops and single.graph.node[0].op_type not in ops:
            continue
        if description not in timed:
            session = InferenceSession(single, num_threads=1, cache=False)
            ort = ort_session(onnxruntime, single, 1)
            rng = np.random.default_rng(1)
            feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in session.get_inputs()}
            medians, _ = interleaved_medians(
                {"minimlc": lambda: session.run(None, feeds), "ort": lambda: ort(feeds)},
                warmup=1, max_rounds=args.runs, budget_seconds=args.budget_seconds,
            )
            timed[description] = medians["minimlc"] * 1e3, medians["ort"] * 1e3
        mini, ort_ms = timed[description]
        totals[0] += mini
        totals[1] += ort_ms
        print(f"{mini:9.3f} ms {ort_ms:9.3f} ms {mini / ort_ms:6.1f}x  {description}", flush=True)
    print(f"{totals[0]:9.3f} ms {totals[1]:9.3f} ms  total (minimlc, onnxruntime; sum of the nodes above)")


if __name__ == "__main__":
    main()
