"""`loop-generalize-kernels` on a DenseNet-style block (1x1 convolutions over 16, 32, 48 and 64 concatenated
channels): the convolutions scheduled alike (16, 32 and 48 channels at znver3) become one kernel taking its channel
count at run time, and the compiled model matches ONNX Runtime (rtol/atol 1e-4). The IR rewrite itself is checked by
tests/filecheck/lowering/loop-generalize-kernels.mlir."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline, run_pipeline
from minimlc.lowering.target import set_target, target_from_name

GROWTH = 16
LAYERS = 4


def dense_block() -> onnx.ModelProto:
    """x (1x16x6x6) -> LAYERS times: y = Conv1x1(Relu(x)) with GROWTH outputs, x = Concat(x, y)."""
    rng = np.random.default_rng(0)
    nodes, weights, current, channels = [], [], "x", GROWTH
    for layer in range(LAYERS):
        weight = (rng.standard_normal((GROWTH, channels, 1, 1)) / np.sqrt(channels)).astype(np.float32)
        weights.append(numpy_helper.from_array(weight, f"w{layer}"))
        nodes += [
            helper.make_node("Relu", [current], [f"r{layer}"]),
            helper.make_node("Conv", [f"r{layer}", f"w{layer}"], [f"y{layer}"]),
            helper.make_node("Concat", [current, f"y{layer}"], [f"x{layer}"], axis=1),
        ]
        current, channels = f"x{layer}", channels + GROWTH
    graph = helper.make_graph(
        nodes,
        "dense_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, GROWTH, 6, 6])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [1, channels, 6, 6])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def kernel_count(with_pass: bool) -> int:
    """The defined non-entry functions of the block at the `program` stage (znver3), with or without the pass."""
    imported = import_model(dense_block())
    set_target(imported.module, target_from_name("znver3"))
    passes = [item for item in build_pipeline(3) if with_pass or item.name != "loop-generalize-kernels"]
    run_pipeline(imported.module, passes, stop_after="program")
    return sum(
        1
        for op in imported.module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and "minimlc.entry" not in op.attributes
    )


def test_three_block_convolutions_share_one_kernel() -> None:
    assert kernel_count(with_pass=True) == kernel_count(with_pass=False) - 2


def test_the_generalized_block_matches_onnxruntime() -> None:
    model = dense_block()
    x = np.random.default_rng(1).standard_normal((1, GROWTH, 6, 6)).astype(np.float32)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    actual = InferenceSession(model, cache=False).run(None, {"x": x})[0]
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
