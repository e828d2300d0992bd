"""Differential fuzzing in the suite (small, fixed-seed slices; `bench/fuzz.py` runs the long version).

1. Random valid graphs (`strategies.onnx_graphs`) through minimlc at O0 and at O3 (one thread) against ONNX Runtime,
   at |minimlc - ORT| <= 1e-4 * max(1, max|ORT|) + 1e-4 * |ORT|. 60 graphs per level (different graphs: each level
   has its own seed). A clear refusal (`NotImplementedError`, `ModelImportError`) is counted, not a failure; any other
   exception or a mismatch fails. Every failure found becomes a regression test below.
2. Random graphs with symbolic inputs (`strategies.symbolic_onnx_graphs`: `[batch, ...]`, `[batch, seq, d]`) through
   one minimlc session each at O0 and at O3 (one thread), run at every size of `strategies.SYMBOL_SIZES` the graph
   takes (1, 3, 7, 17, 0 ...) against ONNX Runtime at the same tolerances: compiled once when no `STATIC_ONLY` op is
   drawn, else compiled per shapes with `stats["symbolic_fallback"]` saying why. 20 graphs per level.
3. Bytes into the ONNX loader: random and mutated valid models give a model or a `ModelImportError`.
4. Text into `mini-opt`: mutated `.mlir` test inputs give output or `mini-opt: error:`, never a traceback.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from onnx import TensorProto, helper, numpy_helper
from oracles import differential, differential_symbolic, load_bytes, mlir_seeds, mutate, parse_text
from strategies import SymbolicCase, onnx_graphs, symbolic_onnx_graphs

from minimlc import InferenceSession

GRAPHS_PER_LEVEL = 60
FUZZ_SETTINGS = settings(
    max_examples=GRAPHS_PER_LEVEL,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 3])
def test_random_graphs_match_onnxruntime(opt_level: int) -> None:
    outcomes: Counter[str] = Counter()
    failures: list[str] = []

    @seed(opt_level)
    @FUZZ_SETTINGS
    @given(case=onnx_graphs())
    def check(case: tuple[onnx.ModelProto, dict[str, np.ndarray]]) -> None:
        model, feeds = case
        outcome = differential(model, feeds, opt_level)
        outcomes[outcome.kind] += 1
        if outcome.kind in ("mismatch", "crash"):
            ops = " -> ".join(node.op_type for node in model.graph.node)
            failures.append(f"{ops}: {outcome.message}")

    check()
    assert failures == []
    assert sum(outcomes.values()) >= GRAPHS_PER_LEVEL
    assert outcomes["ok"] >= 0.8 * GRAPHS_PER_LEVEL, outcomes  # refusals must not hollow the fuzzer out


SYMBOLIC_GRAPHS_PER_LEVEL = 20


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 3])
def test_random_symbolic_graphs_match_onnxruntime_at_every_size(opt_level: int) -> None:
    outcomes: Counter[str] = Counter()
    sizes_run: Counter[int] = Counter()
    failures: list[str] = []

    @seed(100 + opt_level)
    @settings(FUZZ_SETTINGS, max_examples=SYMBOLIC_GRAPHS_PER_LEVEL)
    @given(case=symbolic_onnx_graphs())
    def check(case: SymbolicCase) -> None:
        outcome, sizes = differential_symbolic(case, opt_level)
        outcomes[outcome.kind] += 1
        sizes_run[sizes] += 1
        if outcome.kind in ("mismatch", "crash"):
            inputs = {
                i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
                for i in case.model.graph.input
            }
            ops = " -> ".join(node.op_type for node in case.model.graph.node)
            failures.append(f"{inputs}: {ops}: {outcome.message}")

    check()
    assert failures == []
    assert sum(outcomes.values()) >= SYMBOLIC_GRAPHS_PER_LEVEL
    assert outcomes["ok"] >= 0.6 * SYMBOLIC_GRAPHS_PER_LEVEL, outcomes  # most compile once, for every size
    assert outcomes["fallback"] > 0, outcomes
    assert sum(count for runs, count in sizes_run.items() if runs >= 4) >= 0.8 * sum(sizes_run.values()), sizes_run


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_gemm_per_feature_prelu_tanh(opt_level: int) -> None:
    """Found by the fuzzer: the per-lane select of a per-feature PRelu folded into a Gemm's vectorized write-back
    failed at O2/O3 ("'arith.select' chooses per lane"); it is now an LLVM vector select."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["h"]),
        helper.make_node("PRelu", ["h", "slope"], ["p"]),
        helper.make_node("Tanh", ["p"], ["y"]),
    ]
    weights = [
        numpy_helper.from_array(rng.uniform(-1, 1, (16, 32)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.uniform(-1, 1, (32,)).astype(np.float32), "slope"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"x": rng.uniform(-1, 1, (4, 16)).astype(np.float32)}
    assert differential(model, feeds, opt_level) == ("ok", "")


def test_slice_past_the_end_of_a_run_time_axis() -> None:
    """Found by the symbolic fuzzer: `x[1:]` of `x[batch, 4]` at batch 0 is empty (ONNX's Slice clamps)."""
    starts, ends, axes = (
        numpy_helper.from_array(np.array([v], np.int64), n) for v, n in ((1, "s"), (2**63 - 1, "e"), (0, "a"))
    )
    graph = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"]), helper.make_node("Neg", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, 4])],
        [starts, ends, axes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = InferenceSession(model, num_threads=1)
    assert session.stats["compiles"] == 1
    for batch in (3, 1, 0):
        x = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4)
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], -x[1:])


def test_random_and_mutated_bytes_give_clear_import_errors(mlp_bytes: bytes) -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.bytes(int(rng.integers(0, 200))) for _ in range(150)]
    inputs += [mutate(mlp_bytes, rng) for _ in range(150)]
    crashes = [(data[:40], outcome.message) for data in inputs if (outcome := load_bytes(data)).kind == "crash"]
    assert crashes == []


def test_mutated_mlir_gives_diagnostics_not_tracebacks(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    seeds = mlir_seeds()
    assert len(seeds) >= 5
    crashes = []
    for index in range(60):
        text = mutate(seeds[index % len(seeds)].encode(), rng).decode(errors="replace")
        outcome = parse_text(text, tmp_path)
        if outcome.kind == "crash":
            crashes.append((index, outcome.message))
    assert crashes == []


@pytest.fixture(scope="module")
def mlp_bytes() -> bytes:
    rng = np.random.default_rng(1)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1), helper.make_node("Relu", ["h"], ["y"])],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [
            numpy_helper.from_array(rng.uniform(-1, 1, (4, 8)).astype(np.float32), "w"),
            numpy_helper.from_array(rng.uniform(-1, 1, (4,)).astype(np.float32), "b"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
