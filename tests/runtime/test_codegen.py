"""Parallel code generation (`runtime.codegen`): partitions compiled in forked children give the same outputs as one
process, save and load as several object files, and a child's failure reaches the caller as a clear error."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.driver import codegen
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.lowering.workers import WorkerError, compile_jobs
from minimlc.runtime import load

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from make_mlp import build_mlp


@pytest.fixture
def tiny_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Partition even the example MLP (a few hundred ops) instead of compiling it in one process."""
    monkeypatch.setattr(codegen, "MIN_OPS_PER_PARTITION", 1)


def mlp_input() -> dict[str, np.ndarray]:
    return {"input": np.random.default_rng(0).standard_normal((4, 784)).astype(np.float32)}


@pytest.mark.usefixtures("tiny_partitions")
@pytest.mark.parametrize("jobs", [2, 3])
def test_partitions_compute_what_one_process_computes(jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", "1")
    one = InferenceSession(build_mlp(batch=4))
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", str(jobs))
    several = InferenceSession(build_mlp(batch=4))
    assert one.stats["codegen_partitions"] == 1
    assert several.stats["codegen_partitions"] == jobs
    assert several.llvm_ir.count("define void @main(") == 1
    feeds = mlp_input()
    np.testing.assert_array_equal(several.run(None, feeds)[0], one.run(None, feeds)[0])


@pytest.mark.usefixtures("tiny_partitions")
def test_a_partitioned_model_saves_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", "2")
    session = InferenceSession(build_mlp(batch=4))
    assert session.stats["codegen_partitions"] == 2
    session.save(tmp_path / "mlp.mlc")
    feeds = mlp_input()
    np.testing.assert_array_equal(load(tmp_path / "mlp.mlc").run(None, feeds)[0], session.run(None, feeds)[0])


def test_partition_balances_op_counts_keeps_the_entry_first_and_bodies_with_their_kernel() -> None:
    imported = import_model(build_mlp(batch=4))
    run_pipeline(imported.module, 3, stop_after="program")
    names = [f.sym_name.data for f in imported.module.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    bodies = [name for name in names if name.endswith("_body")]
    assert bodies, "the MLP at batch 4 has a parallel loop, outlined into a body function"
    costs = {name: 10 * (i + 1) for i, name in enumerate(names)}
    shares = codegen.partition(imported.module, costs, 2)
    assert "main" in shares[0]
    assert sorted(shares[0] | shares[1]) == sorted(names)
    assert not shares[0] & shares[1]
    for body in bodies:  # the kernel passes the body's address to the pool: one object must hold both
        kernel = body.rsplit("_", 3)[0]
        assert any({body, kernel} <= share for share in shares), (body, shares)
    loads = sorted(sum(costs[name] for name in share) for share in shares)
    assert loads[1] - loads[0] <= sum(sorted(costs.values())[-2:]), (shares, loads)


def transpose_kernel(read: str, upper: str) -> func.FuncOp:
    """A loop-level kernel copying `in` to `out` in a nest whose inner loop runs to `upper`, reading `read`."""
    source = f"""
func.func private @k(%in: memref<?x8xf32>, %t: memref<8x?xf32>, %out: memref<8x?xf32>, %n: index) {{
  loop.for "i" %i = 0 to 8 step 1 serial {{
    loop.for "j" %j = 0 to {upper} step 1 serial {{
      %v = memref.load {read}
      memref.store %v, %out[%i, %j] : memref<8x?xf32>
    }}
  }}
  func.return
}}
"""
    (kernel,) = Parser(make_context(), source).parse_module().ops
    assert isinstance(kernel, func.FuncOp)
    return kernel


def test_an_innermost_run_time_loop_with_strided_reads_costs_its_gathers() -> None:
    """LLVM vectorises a serial innermost loop of a run-time trip count that reads with a stride by gathers: its body
    counts `GATHER_LOOP_COST` times; read with stride 1, or with a static trip count, once."""
    strided, contiguous = "%in[%j, %i] : memref<?x8xf32>", "%t[%i, %j] : memref<8x?xf32>"
    once = 1 + (1 + (1 + 2))  # func.return; loop i; loop j; its load and store
    assert codegen.op_count(transpose_kernel(contiguous, "%n")) == once
    assert codegen.op_count(transpose_kernel(strided, "64")) == once
    assert codegen.op_count(transpose_kernel(strided, "%n")) == 1 + (1 + (1 + codegen.GATHER_LOOP_COST * 2))


@pytest.mark.usefixtures("tiny_partitions")
def test_an_exception_in_a_child_is_raised_here(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    emit = codegen.emit_llvm_ir

    def failing_in_children(module: object) -> str:
        if os.getpid() != parent:
            raise ValueError("cannot translate this partition")
        return emit(module)

    monkeypatch.setattr(codegen, "emit_llvm_ir", failing_in_children)
    with pytest.raises(ValueError, match="cannot translate this partition") as raised:
        compile_model(import_model(build_mlp(batch=4)), jobs=2)
    assert "in the worker process for functions" in str(raised.value.__cause__)


@pytest.mark.usefixtures("tiny_partitions")
def test_a_child_that_dies_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    emit = codegen.emit_llvm_ir

    def dying_in_children(module: object) -> str:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return emit(module)

    monkeypatch.setattr(codegen, "emit_llvm_ir", dying_in_children)
    with pytest.raises(WorkerError, match=r"the worker process for functions .* failed: it was killed by signal 9"):
        compile_model(import_model(build_mlp(batch=4)), jobs=2)


def test_compile_jobs_refuses_a_bad_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", "many")
    with pytest.raises(ValueError, match="MINIMLC_COMPILE_JOBS must be a positive integer, got 'many'"):
        compile_jobs()
    monkeypatch.setenv("MINIMLC_COMPILE_JOBS", "3")
    assert compile_jobs() == 3


def test_an_isolated_compile_leaves_the_module_as_imported_and_reports_its_stages_in_order() -> None:
    from minimlc.driver.compiler import stage_listener

    imported = import_model(build_mlp(batch=4))
    before = str(imported.module)
    stages: list[tuple[str, str]] = []
    with stage_listener(lambda stage, seconds, detail: stages.append((stage, detail))):
        isolated = compile_model(imported, isolated=True)
    assert str(imported.module) == before  # lowered in a child
    assert [stage for stage, _ in stages] == ["lower", "codegen", "load"]
    in_place = compile_model(imported)
    assert str(imported.module) != before
    assert isolated.llvm_ir == in_place.llvm_ir  # sessions compile isolated: every session test runs its code


def test_an_isolated_compiles_error_is_raised_here_with_its_type() -> None:
    imported = import_model(build_mlp(batch=4))
    with pytest.raises(ValueError, match="cannot stop at stage 'program'") as raised:
        compile_model(imported, ["cse"], isolated=True)
    assert "in the worker process for the model's code" in str(raised.value.__cause__)
