"""The dynamic GEMM rule's depth block for packed weights: a prefill's projection over run-time rows takes the whole
depth in one block up to 1024 (else the largest divisor up to 1024), and its numbers match ONNX Runtime's at the row
counts a generator runs (1: decode; 7 and 11: remainders of 1 and 5 rows beside a 6-row tile; 128: a prompt). With 512
columns (32 panels of 16; one row is `GEMM_PANELS_MIN_WORK` multiply-adds or more, so the panels are outermost) the
remainder of rows runs inside each column panel, after its full tiles, in tiles of 2 rows then one."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession

ROWS = (1, 7, 11, 128)


def projection(depth: int, columns: int, transposed: bool) -> tuple[onnx.ModelProto, np.ndarray]:
    """`y[M, columns] = x[M, depth] @ w`: MatMul by a `[depth, columns]` weight, or Gemm by a `[columns, depth]`
    one with transB."""
    rng = np.random.default_rng(depth + columns)
    weight = rng.standard_normal((columns, depth) if transposed else (depth, columns)).astype(np.float32)
    node = (
        helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)
        if transposed
        else helper.make_node("MatMul", ["x", "w"], ["y"])
    )
    graph = helper.make_graph(
        [node],
        "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", columns])],
        [numpy_helper.from_array((weight / np.sqrt(depth)).astype(np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    return model, rng.standard_normal((max(ROWS), depth)).astype(np.float32)


@pytest.mark.parametrize(
    ("depth", "transposed", "block"),
    [(640, False, 640), (1536, False, 768), (640, True, 640)],
    ids=["one-block", "two-blocks", "transposed-weight"],
)
def test_projection_depth_block_and_numbers(depth: int, transposed: bool, block: int) -> None:
    model, x = projection(depth, 512, transposed)
    session = InferenceSession(model, num_threads=1, input_bounds={"rows": 256}, enable_profiling=True)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for rows in ROWS:
        (got,) = session.run(None, {"x": x[:rows]})
        (want,) = reference.run(None, {"x": x[:rows]})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{rows} rows")
    (gemm,) = [row for row in session.profiler.summary() if "mr=" in row["schedule"]]
    assert f" kc={block} " in gemm["schedule"]
