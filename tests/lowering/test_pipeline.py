"""The one pipeline runner and builder: a pipeline is an opt level, a name or a pass list everywhere, stops at named
stages, and is built from `PassItem`s (extra passes, tuning database, profiling in any order), never edited as text."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc.dialects import loop, te
from minimlc.driver.compiler import compile_model
from minimlc.driver.profiling import profiled_calls
from minimlc.frontend.onnx import import_model
from minimlc.lowering import pipeline as pipeline_module
from minimlc.lowering.pipeline import (
    OPT_LEVELS,
    PIPELINES,
    PassItem,
    Pipeline,
    build_pipeline,
    pipeline_passes,
    quoted,
    run_pipeline,
    set_pass_options,
    split_pass_list,
    stage_passes,
    tuning_db_of,
)
from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase
from minimlc.lowering.target import target_from_name
from minimlc.tuner.tasks import extract_tasks


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


LEVEL_TEXT = {
    0: "graph-to-te,te-to-loop,loop-outline-parallel,loop-to-scf,convert-scf-to-cf,convert-to-llvm,"
    "reconcile-unrealized-casts",
    1: "graph-simplify,cse,dce,graph-to-te,te-to-loop,loop-plan-memory,loop-outline-parallel,loop-to-scf,"
    "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts",
    2: "graph-simplify,graph-pad-attention-keys,graph-fuse-attention,cse,dce,graph-split-grouped-conv,graph-pad-conv,"
    "graph-pad-max-pool,"
    "graph-to-te,te-conv-im2col,te-conv-layout,te-channels-last,te-conv-winograd,te-inline,te-expand-math,te-clamped-casts,te-to-loop,"
    "default-schedule,loop-fuse-kernels,loop-plan-memory,loop-generalize-kernels,loop-outline-parallel,loop-merge-functions,loop-mark-load-time,loop-to-scf,convert-scf-to-cf,"
    "convert-to-llvm,reconcile-unrealized-casts",
    3: "graph-simplify,graph-fold-batch-norm,graph-pad-attention-keys,graph-fuse-attention,cse,dce,"
    "graph-pad-conv-channels,"
    "graph-pad-gemm-columns,graph-split-grouped-conv,graph-pad-conv,graph-pad-max-pool,graph-to-te,te-conv-im2col,"
    "te-conv-layout,te-channels-last,te-conv-winograd,te-inline,te-expand-math,te-clamped-casts,te-to-loop,loop-hoist-constants,"
    "default-schedule,loop-fuse-kernels,loop-plan-memory,loop-generalize-kernels,loop-outline-parallel,loop-merge-functions,loop-mark-load-time,loop-to-scf,convert-scf-to-cf,"
    "convert-to-llvm,reconcile-unrealized-casts",
}
"""`pipeline_passes(level)` before pipelines were built from `PassItem`s: the built ones render to the same text."""


@pytest.mark.parametrize("level", sorted(LEVEL_TEXT))
def test_the_built_opt_levels_render_to_the_text_they_always_had(level: int) -> None:
    assert ",".join(map(str, build_pipeline(level))) == LEVEL_TEXT[level]
    assert ",".join(pipeline_passes(level)) == LEVEL_TEXT[level]


ODD_PATH = 'tuned dbs/a=b,c{d}/"quoted" \\ back.jsonl'
"""A tuning database path with every character that means something in a pass list."""


@pytest.mark.parametrize(
    "text",
    sorted({item for _, passes in PIPELINES.values() for item in split_pass_list(passes)})
    + [
        "loop-split{kernel=k loop=i factor=4}",
        "loop-reorder{kernel=k order=i,k,j}",
        "default-schedule{annotate}",
        f"default-schedule{{tuning-db={quoted(ODD_PATH)} annotate=true}}",
        'te-conv-winograd{tuning-db="/tmp/x y/=z.jsonl"}',
    ],
)
def test_pass_items_round_trip_through_text(text: str) -> None:
    item = PassItem.parse(text)
    assert str(item) == text
    assert PassItem.parse(str(item)) == item
    assert split_pass_list(f"cse,{text},dce") == ["cse", text, "dce"]


def test_a_quoted_path_reads_back_as_the_path() -> None:
    item = PassItem("default-schedule").with_options(tuning_db=quoted(ODD_PATH))
    assert item.arg_spec().parameters == {"tuning-db": (ODD_PATH,)}
    assert tuning_db_of([str(item)]) == tuning_db_of(build_pipeline(3, tuning_db=ODD_PATH)) == ODD_PATH
    assert tuning_db_of(3) is None


def test_options_set_in_any_order_give_one_item() -> None:
    item = PassItem.parse("loop-split{kernel=k loop=i factor=4}")
    assert item.name == "loop-split" and item.option("factor") == "4" and item.option("nparts") is None
    assert str(item.with_options(factor=8)) == "loop-split{kernel=k loop=i factor=8}"
    first = item.with_options(tail="true").with_options(annotate=True)
    assert (
        first
        == item.with_options(annotate=True).with_options(tail="true")
        == item.with_options(annotate=True, tail=True)
    )
    assert str(first) == "loop-split{annotate=true kernel=k loop=i factor=4 tail=true}"
    assert PassItem.parse("p{tuning_db=x}").with_options(tuning_db="y").options == (("tuning_db", "y"),)


def test_text_that_is_not_one_pass_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown argument value"):
        PassItem.parse("loop-split{factor=}")
    with pytest.raises(ValueError, match="expected one pass, got 2"):
        PassItem.parse("cse,dce")


EXTRA = {"graph": ["cse", "dce"], "loop": "licm", "schedule": ["loop-unroll{kernel=k loop=j}"], "llvm": "canonicalize"}
DB = "/tmp/tuned dbs/model.jsonl"
EDITS: dict[str, Callable[[tuple[PassItem, ...]], tuple[PassItem, ...]]] = {
    "extra passes": lambda passes: pipeline_module._with_extra_passes(passes, EXTRA),
    "tuning database": lambda passes: pipeline_module._with_tuning_db(passes, DB),
    "profiling": lambda passes: pipeline_module._with_profiling(passes, "thread-cpu"),
}


@pytest.mark.parametrize("level", [2, 3])
@pytest.mark.parametrize("order", list(itertools.permutations(EDITS)), ids=" then ".join)
def test_extra_passes_tuning_database_and_profiling_apply_in_any_order(level: int, order: tuple[str, ...]) -> None:
    """The edits the builder makes give one pipeline in every order: before the builder, profiling first left
    `default-schedule{annotate=true}`, which the tuning database's text edit no longer recognised."""
    passes = build_pipeline(level)
    for edit in order:
        passes = EDITS[edit](passes)
    built = build_pipeline(level, extra_passes=EXTRA, tuning_db=DB, profiling="thread-cpu")
    assert passes == built
    names = [item.name for item in built]
    (schedule,) = [item for item in built if item.name == "default-schedule"]
    assert str(schedule) == f'default-schedule{{annotate=true tuning-db="{DB}"}}'
    assert tuning_db_of(built) == DB
    assert built[names.index("te-conv-winograd")].option("tuning-db") == f'"{DB}"'
    assert built[names.index("loop-outline-parallel") - 1] == PassItem("loop-profile-calls", (("clock", "thread-cpu"),))
    assert names[names.index("default-schedule") - 1] == "loop-unroll"


def test_set_pass_options_edits_one_pass_everywhere() -> None:
    passes = set_pass_options(build_pipeline(3), "te-conv-winograd", convolutions="all")
    assert ",".join(map(str, passes)) == PIPELINES["lower-to-llvm-conv-winograd"][1]
    # a fixed algorithm takes no tuning database: the builder leaves it alone
    assert build_pipeline(passes, tuning_db=DB)[[item.name for item in passes].index("te-conv-winograd")] == PassItem(
        "te-conv-winograd", (("convolutions", "all"),)
    )


def test_a_tuning_database_applies_in_a_profiled_build(tmp_path: Path) -> None:
    """The record's config is the one the profiler reports for the kernel: a profiled build applies the database."""
    model = gemm_relu_model()
    host = target_from_name("host")
    gemm = next(task for task in extract_tasks(import_model(model), host) if task.rule == "gemm")
    tuned = {**gemm.space.default(), "mr": 1, "unroll": False, "parallel": False}
    assert tuned != gemm.space.default()
    db = TuningDatabase(tmp_path / "tuning.jsonl")
    db.add(Record(gemm.key, host.cpu, "gemm", gemm.kernel, gemm.flops, tuned, 1e-6))
    schedules = []
    for database in (None, db.path):
        module = import_model(model).module
        run_pipeline(module, build_pipeline(3, profiling="monotonic", tuning_db=database), stop_after="program")
        schedules.append(" ".join(call.schedule for call in profiled_calls(module)))
    assert "mr=1 " not in schedules[0] and "mr=1 " in schedules[1]
