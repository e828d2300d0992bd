"""The dynamic rule's rows schedule (`schedule/dynamic.py` -> `schedule/rows.py`) on a prefill's masked softmax over
run-time rows and columns: one compile, numbers against numpy in float64 at column counts below, at and around
the vector width (the remainder loops), rows of one and several; and the schedule the kernel got."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.driver.symbolic import import_symbolic
from minimlc.frontend.onnx_model_file import read_model
from minimlc.lowering.pipeline import run_pipeline
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


def test_the_softmax_kernel_gets_the_rows_schedule_over_run_time_extents():
    imported = import_symbolic(read_model(masked_softmax()), None)
    run_pipeline(imported.module, 3, stop_after="schedule")
    module = imported.module
    kernel = next(op for op in module.ops if getattr(op, "sym_name", None) and "softmax" in op.sym_name.data)
    workload = DYNAMIC.match(module, kernel, target_of(module))
    assert isinstance(workload, RowsWorkload)
    assert workload.at is not None
    assert len(workload.stages) == 3
    steps = DYNAMIC.apply(workload, DYNAMIC.default(workload, target_of(module)))
    assert sum(step.startswith("loop-compute-at") for step in steps) == 3
    assert sum(step.startswith("loop-vectorize") for step in steps) == 2
