"""The dynamic GEMM rule's minimum work for column-panel tasks (`GEMM_PANELS_MIN_WORK`): a projection whose one row
is smaller (depth x columns below it) has its row tiles as parallel tasks, `floor(M / 6)` at run time, so that a
decode step's one row runs on the calling thread and a prompt's rows still split; a bigger one keeps its column
panels as tasks at every row count. Checked on the schedule, on the tasks the pool runs, and on the numbers against
ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.loop.analysis import find_kernel, loops_of
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.schedule.default_schedule import apply_default_schedules
from minimlc.lowering.schedule.dynamic import GEMM_PANELS_MIN_WORK

DEPTH = 256
SMALL, BIG = 128, GEMM_PANELS_MIN_WORK // DEPTH
"""Columns: one row of the small projection is 32,768 multiply-adds, of the big one exactly the minimum."""


def projection(columns: int, batched: bool = False) -> onnx.ModelProto:
    """`y[rows, columns] = x[rows, DEPTH] @ w`, a weight and a run-time row count (`batched`: `x[batch, rows,
    DEPTH]`, a run-time batch too, as a decoder's activations)."""
    weight = np.random.default_rng(columns).standard_normal((DEPTH, columns)).astype(np.float32) / 16
    leading = ["batch", "rows"] if batched else ["rows"]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*leading, DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [*leading, columns])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def parallel_loops(columns: int) -> list[tuple[str, bool]]:
    """The GEMM kernel's parallel loops after default-schedule: (name, whether its trip count is a run-time one)."""
    module = import_model(projection(columns), None, symbolic=True).module
    run_pipeline(module, 3, stop_after="schedule", target="x86-64-v3")
    ((kernel, _),) = [(name, steps) for name, steps in apply_default_schedules(Context(), module) if "matmul" in name]
    scheduled = find_kernel(module, "test", kernel)
    return [(lp.loop_name.data, lp.is_dynamic) for lp in loops_of(scheduled) if lp.kind.data == "parallel"]


def test_a_small_projection_splits_its_row_tiles_and_a_big_one_its_column_panels() -> None:
    small, big = parallel_loops(SMALL), parallel_loops(BIG)
    assert [dynamic for name, dynamic in small if not name.endswith("_init")] == [True]  # the row tiles, `i_o`
    assert [dynamic for name, dynamic in big if not name.endswith("_init")] == [False]  # the column panels, `j_o`


@pytest.mark.parametrize("batched", [False, True], ids=["rows", "batch-rows"])
@pytest.mark.parametrize(("columns", "dispatched"), [(SMALL, {1: False, 7: False, 128: True}), (BIG, None)])
def test_tasks_reach_the_pool_only_when_worth_a_dispatch(
    columns: int, dispatched: dict[int, bool] | None, batched: bool
) -> None:
    """At two threads the pool counts the tasks it dispatched (not those run inline on the caller); the numbers
    match ONNX Runtime's at every row count. Under a run-time batch of 1 (a generator's) the GEMM's own tasks are
    the parallel ones, not the batch's one."""
    model = projection(columns, batched)
    bounds = {"rows": 256, "batch": 4} if batched else {"rows": 256}
    session = InferenceSession(model, num_threads=2, input_bounds=bounds)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 128, DEPTH) if batched else (128, DEPTH)).astype(np.float32)
    for rows in (1, 7, 128):
        before = sum(session.task_counts())
        (got,) = session.run(None, {"x": x[..., :rows, :]})
        ran = sum(session.task_counts()) - before
        (want,) = reference.run(None, {"x": x[..., :rows, :]})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{rows} rows")
        assert (ran > 0) == (dispatched[rows] if dispatched else True), f"{rows} rows: {ran} tasks dispatched"
