"""Numerics of the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) at O0 and O3, against onnx's
reference evaluator (ONNX Runtime's CPU build lacks them), one and several tensors, T = 0 and T > 0, and their
refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError

TRAINING = "ai.onnx.preview.training"


def _optimizer_model(op_type: str, kinds: str, shapes: list[tuple[int, ...]], **attributes: Any) -> onnx.ModelProto:
    """One `op_type` node updating tensors of `shapes`; `kinds` names the per-tensor inputs (e.g. "XGV")."""
    names = [f"{kind}{index}" for kind in kinds for index in range(len(shapes))]
    outputs = [f"{kind}{index}_new" for kind in kinds if kind != "G" for index in range(len(shapes))]
    float_inputs = [
        helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shapes[int(name[1:])]) for name in names
    ]
    node = helper.make_node(op_type, ["R", "T", *names], outputs, domain=TRAINING, **attributes)
    graph = helper.make_graph(
        [node],
        "optimizer",
        [
            helper.make_tensor_value_info("R", onnx.TensorProto.FLOAT, []),
            helper.make_tensor_value_info("T", onnx.TensorProto.INT64, []),
            *float_inputs,
        ],
        [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shapes[int(name[1:-4])]) for name in outputs],
    )
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid(TRAINING, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _feeds(model: onnx.ModelProto, step: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(step)
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64)}
    for vi in model.graph.input[2:]:
        shape = [dim.dim_value for dim in vi.type.tensor_type.shape.dim]
        low = 0.0 if vi.name.startswith("H") else -2.0  # squared-gradient sums are not negative
        feeds[vi.name] = rng.uniform(low, 2.0, shape).astype(np.float32)
    return feeds


CASES = [
    ("Adagrad", "XGH", {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.001}),
    ("Adam", "XGVH", {"alpha": 0.95, "beta": 0.1, "epsilon": 1e-7, "norm_coefficient": 0.001}),
    ("Adam", "XGVH", {"norm_coefficient_post": 0.02}),
    ("Momentum", "XGV", {"alpha": 0.95, "beta": 0.1, "mode": "standard", "norm_coefficient": 0.001}),
    ("Momentum", "XGV", {"alpha": 0.9, "beta": 0.5, "mode": "nesterov", "norm_coefficient": 0.01}),
]


@pytest.mark.parametrize(("op_type", "kinds", "attributes"), CASES)
@pytest.mark.parametrize("shapes", [[(5,)], [(2, 3), (4,)]], ids=["one", "two"])
@pytest.mark.parametrize("step", [0, 3])
def test_optimizer_matches_reference(
    op_type: str, kinds: str, attributes: dict[str, Any], shapes: list[tuple[int, ...]], step: int
) -> None:
    model = _optimizer_model(op_type, kinds, shapes, **attributes)
    feeds = _feeds(model, step)
    # The reference computes a lone tensor's Adam update in float64 once T > 0; the op's outputs are float32.
    expected = [np.asarray(want, np.float32) for want in ReferenceEvaluator(model).run(None, feeds)]
    session = InferenceSession(model, cache=False)
    actual = session.run(None, feeds)
    assert session.stats["kernels"] > 0
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_momentum_refuses_an_unknown_mode() -> None:
    model = _optimizer_model("Momentum", "XGV", [(3,)], alpha=0.9, beta=0.1, mode="heavy", norm_coefficient=0.0)
    with pytest.raises(ModelImportError, match="mode must be 'standard' or 'nesterov'"):
        InferenceSession(model, cache=False)


def test_optimizer_refuses_mismatched_tensor_shapes() -> None:
    model = _optimizer_model("Adagrad", "XGH", [(3,)])
    model.graph.input[3].type.tensor_type.shape.dim[0].dim_value = 4  # G0 is [4], X0 is [3]
    with pytest.raises(ModelImportError, match="must have one shape"):
        InferenceSession(model, cache=False)
