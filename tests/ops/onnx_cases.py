"""One-node ONNX models run by minimlc and by ONNX Runtime, for the op tests under tests/ops/: every feed is a graph
input (nothing is folded at import time), `constants` are initializers (operands that set a shape), and every
output is compared: integers and bools exactly, floats at `rtol`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession


def one_node_model(
    op_type: str,
    feeds: Mapping[str, np.ndarray],
    attributes: Mapping[str, Any],
    *,
    constants: Mapping[str, np.ndarray] | None = None,
    inputs: Sequence[str] | None = None,
    outputs: int = 1,
    opset: int = 18,
) -> onnx.ModelProto:
    """A model of one `op_type` node reading `inputs` (by default the feeds then the constants; "" omits one)."""
    constants = constants or {}
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in feeds.items()
    ]
    names = [f"Y{i}" for i in range(outputs)]
    node = helper.make_node(op_type, list(inputs if inputs is not None else [*feeds, *constants]), names, **attributes)
    initializers = [onnx.numpy_helper.from_array(array, name) for name, array in constants.items()]
    model = helper.make_model(
        helper.make_graph(
            [node], "one_node", graph_inputs, [helper.make_tensor_value_info(n, 0, None) for n in names], initializers
        ),
        opset_imports=[helper.make_opsetid("", opset)],
        ir_version=8,
    )
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def check_against_onnxruntime(
    session_type: type[InferenceSession],
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    rtol: float = 1e-5,
    *,
    atol: float = 1e-6,
    reference: bool = False,
) -> None:
    """Run `model` in ONNX Runtime (with `reference`, where ONNX Runtime lacks the case: in onnx's reference
    evaluator) and in a `session_type` session (bound to the test's opt level by the autouse fixture); the outputs
    must match and native code must have computed them."""
    if reference:
        expected = ReferenceEvaluator(model).run(None, dict(feeds))
    else:
        expected = ort.InferenceSession(model.SerializeToString()).run(None, dict(feeds))
    session = session_type(model, cache=False)
    actual = session.run(None, dict(feeds))
    assert session.stats["kernels"] > 0
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, want)
