"""The one pipeline runner: a pipeline is an opt level, a name or a pass list everywhere, and stops at named stages."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc.dialects import loop, te
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import (
    OPT_LEVELS,
    Pipeline,
    pipeline_passes,
    run_pipeline,
    split_pass_list,
    stage_passes,
)


def gemm_relu_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weight = helper.make_tensor("w", TensorProto.FLOAT, [16, 8], rng.standard_normal((16, 8)).ravel())
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 8])],
        [weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_compiled(pipeline: Pipeline) -> None:
    """Compile the model with `pipeline`, call its entry and compare with numpy in float64."""
    model = gemm_relu_model()
    compiled = compile_model(import_model(model), pipeline)
    assert compiled.pool_slot is None  # too small for a parallel loop: the argument array is inputs, outputs, weights
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    out = np.empty((4, 8), np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    weight = numpy_helper.to_array(model.graph.initializer[0]).astype(np.float64)
    np.testing.assert_allclose(out, np.maximum(x.astype(np.float64) @ weight, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "pipeline",
    [0, 3, "lower-to-llvm-O1", OPT_LEVELS[2], split_pass_list(OPT_LEVELS[3]), ["lower-to-loop", "lower-to-llvm"]],
    ids=["level-0", "level-3", "name", "comma-list", "pass-list", "list-of-names"],
)
def test_compile_model_takes_any_form_of_pipeline(pipeline: Pipeline) -> None:
    run_compiled(pipeline)


def test_named_pipelines_expand_inside_a_pass_list() -> None:
    assert pipeline_passes(["lower-to-te", "cse"]) == ["graph-to-te", "cse"]
    assert pipeline_passes(1) == split_pass_list(OPT_LEVELS[1])


@pytest.mark.parametrize(("stage", "kind"), [("te", te.ComputeOp), ("loop", loop.ForOp)])
def test_run_pipeline_stops_after_a_stage(stage: str, kind: type) -> None:
    module = import_model(gemm_relu_model()).module
    run_pipeline(module, 3, stop_after=stage)
    assert any(isinstance(op, kind) for op in module.walk())


def test_stage_passes_cut_a_level_at_its_stage_boundaries() -> None:
    passes = split_pass_list(OPT_LEVELS[3])
    assert stage_passes(3, stop_after="schedule")[-1] == passes[passes.index("default-schedule") - 1]
    assert stage_passes(3, start_after="scf")[0] == passes[passes.index("loop-to-scf") + 1]


def test_a_stage_the_pipeline_does_not_reach_is_refused() -> None:
    with pytest.raises(ValueError, match="does not run default-schedule, so it cannot stop at stage 'schedule'"):
        stage_passes(1, stop_after="schedule")
    with pytest.raises(ValueError, match="unknown stage 'lop'; stages: graph, te, loop, schedule, program, scf, llvm"):
        stage_passes(3, stop_after="lop")


def test_unknown_pass_and_pipeline_names_are_refused() -> None:
    module = import_model(gemm_relu_model()).module
    with pytest.raises(ValueError, match="unknown pass 'graph-to-tee'"):
        run_pipeline(module, ["graph-to-tee"])
    with pytest.raises(ValueError, match="opt_level must be one of 0, 1, 2, 3, got 7"):
        run_pipeline(module, 7)
