"""Static rules the dynamic rule hands kernels of run-time extents to (`schedule/dynamic.py`): `rows` for a prefill's
masked softmax over run-time rows and columns, `concat` for rotary embeddings' rotate_half under run-time rows. One
compile each, numbers against numpy in float64 (column counts below, at and around the vector width: the remainder
loops; rows of one and several), and the workload each kernel gets."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.driver.symbolic import import_symbolic
from minimlc.frontend.onnx_model_file import read_model
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.schedule.concat import ConcatWorkload
from minimlc.lowering.schedule.dynamic import DYNAMIC
from minimlc.lowering.schedule.rows import RowsWorkload
from minimlc.lowering.target import target_of


def masked_softmax():
    """Softmax(scores + mask, axis=-1) over [batch, 3, sequence, keys], the mask broadcast over the heads."""
    scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 3, "sequence", "keys"])
    mask = helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, "sequence", "keys"])
    probabilities = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 3, "sequence", "keys"])
    nodes = [
        helper.make_node("Add", ["scores", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probabilities"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "masked_softmax", [scores, mask], [probabilities])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.fixture(scope="module")
def session() -> InferenceSession:
    return InferenceSession(masked_softmax(), num_threads=1)


@pytest.mark.parametrize(("batch", "sequence", "keys"), [(1, 1, 1), (1, 5, 8), (2, 7, 13), (1, 3, 130)])
def test_masked_softmax_over_run_time_rows_and_columns_equals_numpy(session, batch, sequence, keys):
    rng = np.random.default_rng(keys)
    scores = (4 * rng.standard_normal((batch, 3, sequence, keys))).astype(np.float32)
    mask = np.where(rng.random((batch, 1, sequence, keys)) < 0.3, np.finfo(np.float32).min, 0).astype(np.float32)
    (result,) = session.run(None, {"scores": scores, "mask": mask})
    masked = scores.astype(np.float64) + mask
    exponentials = np.exp(masked - masked.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(result, exponentials / exponentials.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert session.stats["compiles"] == 1


def workloads(model) -> dict:
    """Kernel name -> the dynamic rule's workload, for the kernels of `model` compiled with run-time extents."""
    imported = import_symbolic(read_model(model), None)
    run_pipeline(imported.module, 3, stop_after="schedule")
    module = imported.module
    kernels = [op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data[-1].isdigit()]
    return {kernel.sym_name.data: DYNAMIC.match(module, kernel, target_of(module)) for kernel in kernels}


def test_the_softmax_kernel_gets_the_rows_schedule_over_run_time_extents():
    (workload,) = (found for name, found in workloads(masked_softmax()).items() if "softmax" in name)
    assert isinstance(workload, RowsWorkload)
    assert workload.at is not None
    assert len(workload.stages) == 3
    steps = DYNAMIC.apply(workload, {"fuse": True, "width": 8})
    assert sum(step.startswith("loop-compute-at") for step in steps) == 3
    assert sum(step.startswith("loop-vectorize") for step in steps) == 2


def rotary():
    """x * cos + rotate_half(x) * sin over [batch, sequence, 64], rotate_half = Concat(-x[..., 32:], x[..., :32])."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 64])
    constants = {
        name: helper.make_tensor(name, TensorProto.INT64, [1], [value])
        for name, value in (("zero", 0), ("half", 32), ("end", 64), ("axis", 2))
    }
    angles = np.arange(64, dtype=np.float32) / 7
    cos = helper.make_tensor("cos", TensorProto.FLOAT, [64], np.cos(angles))
    sin = helper.make_tensor("sin", TensorProto.FLOAT, [64], np.sin(angles))
    nodes = [
        helper.make_node("Slice", ["x", "half", "end", "axis"], ["upper"]),
        helper.make_node("Slice", ["x", "zero", "half", "axis"], ["lower"]),
        helper.make_node("Neg", ["upper"], ["negated"]),
        helper.make_node("Concat", ["negated", "lower"], ["rotated"], axis=2),
        helper.make_node("Mul", ["x", "cos"], ["x_cos"]),
        helper.make_node("Mul", ["rotated", "sin"], ["rotated_sin"]),
        helper.make_node("Add", ["x_cos", "rotated_sin"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "rotary", [x], [y], [*constants.values(), cos, sin])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize(("batch", "sequence"), [(1, 1), (2, 7)])
def test_rotary_embedding_over_run_time_rows_equals_numpy(batch, sequence):
    session = InferenceSession(rotary(), num_threads=1)
    x = np.random.default_rng(sequence).standard_normal((batch, sequence, 64)).astype(np.float32)
    (result,) = session.run(None, {"x": x})
    angles = np.arange(64) / 7
    rotated = np.concatenate([-x[..., 32:], x[..., :32]], axis=-1).astype(np.float64)
    np.testing.assert_allclose(result, x * np.cos(angles) + rotated * np.sin(angles), rtol=1e-5, atol=1e-6)


def test_the_rotary_kernel_gets_the_concat_schedule_over_run_time_rows():
    (workload,) = workloads(rotary()).values()
    assert isinstance(workload, ConcatWorkload)
    assert workload.points == (32,)
    steps = DYNAMIC.apply(workload, {"width": 8})
    assert steps[0].startswith("loop-partition")
    assert sum(step.startswith("loop-vectorize") for step in steps) == 2
