"""Check minimlc against another runtime: model transforms, seeded inputs, oracles and error tables.

    model = randomise_weights(onnx.load("light_resnet50.onnx"), seed=0)   # float weights -> seeded random
    model, names = expose_intermediates(model)                            # every intermediate as an output
    feeds = random_inputs(model, seed=0)
    expected = run_oracle(model, feeds, "onnxruntime")                    # or "reference" (onnx.reference)

ONNX Runtime is the default oracle: `onnx.reference` computes BatchNormalization-9 (training-mode semantics) and
Softmax before opset 13 differently from the specification's inference semantics that ONNX Runtime and minimlc
implement. Used by `minimlc compare` and the light-model tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

ORACLES = ("onnxruntime", "reference")

_PASS_THROUGH_OPS = {"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Transpose", "Cast"}
"""Ops that only move a weight around: its role is decided by the op that consumes their output."""


def randomise_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """Replace the model's float weights by seeded random values of the same shapes and types: every float
    initializer of more than one element, and every constant `ConstantOfShape` (by a `Constant`).

    The scale follows the op and input slot the value feeds (through reshapes and unsqueezes): conv and matrix
    weights have std 1/sqrt(fan_in) (LeCun scaling: activations shrink a little per ReLU layer instead of growing
    through residual sums); BatchNormalization scale and variance, the multiplier of a Mul and the divisor of a Div
    are uniform in [0.5, 1.5] (positive, near 1); biases, means, and the addend of an Add are normal with std 0.1.
    Kept: integer and bool initializers (shapes, indices), scalars (an epsilon, an exponent), and float values an op
    reads as a shape or axes (`CONSTANT_OPERANDS`: Resize's scales, Pad's constant value). Only ConstantOfShape nodes
    whose shape is an initializer or a Constant are replaced. The model is copied, the input is left untouched:

        randomise_weights(mlp, seed=1).graph.initializer[0]   # the first Gemm's weight, other values, same shape
    """
    from minimlc.frontend.onnx_operators import CONSTANT_OPERANDS

    result = onnx.ModelProto()
    result.CopyFrom(model)
    graph = result.graph
    constants = _constant_arrays(graph)
    consumers = _consumers(graph)
    rng = np.random.default_rng(seed)
    for index, node in enumerate(graph.node):
        if node.op_type != "ConstantOfShape" or node.input[0] not in constants:
            continue
        shape = tuple(int(d) for d in constants[node.input[0]])
        op_type, slot, consumer = _final_consumer(node.output[0], consumers)
        values = _random_weight(rng, shape, op_type, slot, consumer)
        tensor = numpy_helper.from_array(values, node.output[0])
        graph.node[index].CopyFrom(helper.make_node("Constant", [], [node.output[0]], name=node.name, value=tensor))
    for index, tensor in enumerate(graph.initializer):
        array = numpy_helper.to_array(tensor)
        read_as_shape = any(
            slot in CONSTANT_OPERANDS.get(user.op_type, ()) for user, slot in consumers.get(tensor.name, [])
        )
        if not np.issubdtype(array.dtype, np.floating) or array.size <= 1 or read_as_shape:
            continue
        op_type, slot, consumer = _final_consumer(tensor.name, consumers)
        values = _random_weight(rng, array.shape, op_type, slot, consumer).astype(array.dtype)
        graph.initializer[index].CopyFrom(numpy_helper.from_array(values, tensor.name))
    return result


def _constant_arrays(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    arrays = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    arrays[node.output[0]] = numpy_helper.to_array(attribute.t)
    return arrays


def _consumers(graph: onnx.GraphProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for slot, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, slot))
    return consumers


def _final_consumer(
    name: str, consumers: Mapping[str, list[tuple[onnx.NodeProto, int]]]
) -> tuple[str, int, onnx.NodeProto | None]:
    users = consumers.get(name, [])
    if not users:
        return "", 0, None
    node, slot = users[0]
    if node.op_type in _PASS_THROUGH_OPS and slot == 0:
        return _final_consumer(node.output[0], consumers)
    return node.op_type, slot, node


def _random_weight(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    op_type: str,
    slot: int,
    consumer: onnx.NodeProto | None,
) -> np.ndarray:
    if (op_type in ("Conv", "ConvTranspose") and slot == 1) or (op_type in ("Gemm", "MatMul") and slot == 1):
        std = math.sqrt(1.0 / _fan_in(shape, op_type, consumer))
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)
    if (op_type == "BatchNormalization" and slot in (1, 4)) or op_type == "Mul" or (op_type == "Div" and slot == 1):
        return rng.random(shape, dtype=np.float32) + np.float32(0.5)
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.1)


def _fan_in(shape: tuple[int, ...], op_type: str, consumer: onnx.NodeProto | None) -> int:
    if not shape:
        return 1
    if op_type in ("Conv", "ConvTranspose"):
        return max(1, math.prod(shape[1:]))
    transposed = consumer is not None and any(
        a.name == "transB" and helper.get_attribute_value(a) for a in consumer.attribute
    )
    return max(1, shape[-1] if transposed else math.prod(shape[:-1]))


def expose_intermediates(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[str]]:
    """Add every intermediate tensor (`intermediate_tensors`) as a graph output.

    Returns the new model and the names of all its outputs: the intermediates in node order, then the original
    outputs. Exposing a tensor can keep a compiler from fusing it away, so the model may be scheduled a little
    differently from the original.
    """
    intermediates = intermediate_tensors(model)
    return with_outputs(model, [vi.name for vi in intermediates], intermediates), [
        *(vi.name for vi in intermediates),
        *(vi.name for vi in model.graph.output),
    ]


def intermediate_tensors(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Every computed float tensor of known static shape that is not a graph output, in node (topological) order.

    Shapes come from onnx shape inference; tensors that depend on constants only (weights being built, shapes)
    are left out.
    """
    graph = onnx.shape_inference.infer_shapes(model).graph
    known = {vi.name: vi for vi in graph.value_info}
    constant = {tensor.name for tensor in graph.initializer}
    outputs = {vi.name for vi in graph.output}
    found: list[onnx.ValueInfoProto] = []
    for node in graph.node:
        if all(name in constant for name in node.input if name):
            constant.update(node.output)
            continue
        found += [
            known[name]
            for name in node.output
            if name in known and name not in outputs and _is_static_float(known[name])
        ]
    return found


def with_outputs(
    model: onnx.ModelProto, names: Sequence[str], value_infos: Sequence[onnx.ValueInfoProto] = ()
) -> onnx.ModelProto:
    """A copy of `model` that also outputs the tensors `names` (types from `value_infos` or shape inference)."""
    known = {vi.name: vi for vi in value_infos}
    if any(name not in known for name in names):
        known.update((vi.name, vi) for vi in onnx.shape_inference.infer_shapes(model).graph.value_info)
    missing = [name for name in names if name not in known]
    if missing:
        raise ValueError(f"no inferred type for tensor(s) {missing}")
    result = onnx.ModelProto()
    result.CopyFrom(model)
    result.graph.output.extend(known[name] for name in names)
    return result


def _is_static_float(vi: onnx.ValueInfoProto) -> bool:
    tensor = vi.type.tensor_type
    return (
        vi.type.HasField("tensor_type")
        and tensor.elem_type == onnx.TensorProto.FLOAT
        and tensor.HasField("shape")
        and all(dim.HasField("dim_value") for dim in tensor.shape.dim)
    )


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that are not initializers: what a caller feeds."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in initializers]


def random_inputs(
    model: onnx.ModelProto,
    seed: int = 0,
    given: Mapping[str, np.ndarray] | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, np.ndarray]:
    """Standard-normal inputs (of each input's element type) from a seeded generator; `given` ones are kept. An input
    with a symbolic or unknown dimension takes its shape from `shapes`; ValueError naming it if `shapes` has none."""
    rng = np.random.default_rng(seed)
    feeds = dict(given or {})
    for vi in graph_inputs(model):
        if vi.name in feeds:
            continue
        dims = vi.type.tensor_type.shape.dim
        if shapes is not None and vi.name in shapes:
            shape = list(shapes[vi.name])
        elif vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            shape = [d.dim_value for d in dims]
        else:
            symbols = [d.dim_param or "?" for d in dims if not d.HasField("dim_value")]
            what = f"symbolic dimension(s) {', '.join(symbols)}" if dims else "an unknown rank"
            raise ValueError(f"input '{vi.name}' has {what}")
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def run_oracle(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], oracle: str = "onnxruntime"
) -> dict[str, np.ndarray]:
    """Run `model` on `feeds` with ONNX Runtime (CPU, graph optimisations off) or `onnx.reference`."""
    names = [vi.name for vi in model.graph.output]
    if oracle == "onnxruntime":
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        outputs = session.run(names, dict(feeds))
    elif oracle == "reference":
        from onnx.reference import ReferenceEvaluator

        outputs = ReferenceEvaluator(model).run(names, dict(feeds))
    else:
        raise ValueError(f"unknown oracle '{oracle}'; expected one of {', '.join(ORACLES)}")
    return {name: np.asarray(value) for name, value in zip(names, outputs)}


@dataclass(frozen=True)
class TensorError:
    """How far one computed tensor is from the oracle's."""

    name: str
    shape: tuple[int, ...]
    max_abs: float
    """max |actual - expected|"""
    max_rel: float
    """max_abs / max |expected|: the error relative to the tensor's scale"""
    within_tolerance: bool
    """max_abs <= atol + rtol * max |expected| (NaN and infinities must match exactly, else max_abs is inf)"""


def tensor_error(name: str, actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> TensorError:
    """Compare with a norm-wise tolerance: `max|a - e| <= atol + rtol * max|e|`.

    Scaling by the tensor's largest magnitude (not element by element) keeps elements near zero, which carry
    the absolute rounding error of their large neighbours in a sum, from failing a correct result.
    """
    if actual.shape != expected.shape:
        return TensorError(name, tuple(actual.shape), math.inf, math.inf, False)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e)
    specials_match = np.array_equal(np.isfinite(a), finite) and np.array_equal(a[~finite], e[~finite], equal_nan=True)
    difference = np.abs(a[finite] - e[finite]) if specials_match else np.array([math.inf])
    max_abs = float(difference.max()) if difference.size else 0.0
    scale = float(np.abs(e[finite]).max()) if finite.any() else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
    ok = max_abs <= atol + rtol * scale
    return TensorError(name, tuple(expected.shape), max_abs, max_rel, ok)


def compare(
    actual: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    names: Sequence[str],
    rtol: float,
    atol: float,
) -> list[TensorError]:
    """`tensor_error` for each name, in the given order."""
    return [tensor_error(name, actual[name], expected[name], rtol, atol) for name in names]
