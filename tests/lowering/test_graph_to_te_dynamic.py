"""graph-to-te on graph ops with run-time (`?`) dimensions (`docs/design/symbolic_shapes.md`): the extents it emits,
the refusal of ops that do not take `?`, and numbers: each module is lowered through te-to-loop to LLVM, JIT-compiled
once and run at several sizes through `@main_packed` (inputs, outputs, the extents buffer) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import te
from minimlc.lowering.graph_to_te.graph_to_te import GraphToTePass
from minimlc.lowering.pipeline import make_context
from minimlc.runtime.jit import JitModule
from tests.lowering.dynamic_entry import compile_entry, parse, run_entry

LOWER = "graph-to-te,te-inline,te-to-loop,loop-to-scf,cse,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"

# Broadcasting: `?` against `?`, against 1 and (a `?` that is 1 or 8 at run time) against a static 8; a unary op.
BROADCAST = """
func.func @main(%x: tensor<?x?x8xf32>, %b: tensor<8xf32>, %m: tensor<?x1x?xf32>, %n: tensor<?x8xf32>)
    -> tensor<?x?x8xf32> {
  %0 = graph.add %x, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %1 = graph.mul %0, %m : (tensor<?x?x8xf32>, tensor<?x1x?xf32>) -> tensor<?x?x8xf32>
  %2 = graph.sub %1, %n : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  %3 = graph.tanh %2 : tensor<?x?x8xf32>
  func.return %3 : tensor<?x?x8xf32>
}
"""

# Rows through a linear layer, softmax and a mean over the (static) features; column sums over the run-time rows.
ROWS = """
func.func @main(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %c: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?xf32>, tensor<1x4xf32>) {
  %0 = graph.matmul %x, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %1 = graph.add %0, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %2 = graph.softmax %1 {axis = 1 : i64} : tensor<?x4xf32>
  %3 = graph.reduce_mean %1 {axes = array<i64: 1>} : tensor<?x4xf32> -> tensor<?xf32>
  %4 = graph.reduce_mean %1 {axes = array<i64: 0>, keepdims} : tensor<?x4xf32> -> tensor<1x4xf32>
  func.return %2, %3, %4 : tensor<?x4xf32>, tensor<?xf32>, tensor<1x4xf32>
}
"""

# Self-attention over [batch, sequence, 8] in two heads of 4: reshapes with ONNX targets (0 copies, -1 the rest),
# transposes, batched matmuls contracting over the run-time sequence, a softmax along it.
ATTENTION = """
func.func @main(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %0 = graph.reshape %x {shape = array<i64: 0, 0, 2, 4>} : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %2 = graph.transpose %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x2x4xf32> -> tensor<?x2x4x?xf32>
  %3 = graph.matmul %1, %2 : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
  %4 = graph.softmax %3 {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %5 = graph.matmul %4, %1 : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %6 = graph.transpose %5 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
  %7 = graph.reshape %6 {shape = array<i64: 0, -1, 8>} : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  func.return %7 : tensor<?x?x8xf32>
}
"""

# Concatenation along a run-time axis, a slice from 1 to its end, a flattening reshape (a single `?`).
CONCAT = """
func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?xf32>) {
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = graph.slice %0 {starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = graph.reshape %1 : tensor<?x4xf32> -> tensor<?xf32>
  func.return %1, %2 : tensor<?x4xf32>, tensor<?xf32>
}
"""


def _random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def broadcast() -> JitModule:
    return compile_entry(BROADCAST, LOWER)


@pytest.fixture(scope="module")
def rows() -> JitModule:
    return compile_entry(ROWS, LOWER)


@pytest.fixture(scope="module")
def attention() -> JitModule:
    return compile_entry(ATTENTION, LOWER)


@pytest.fixture(scope="module")
def concat() -> JitModule:
    return compile_entry(CONCAT, LOWER)


@pytest.mark.parametrize(("batch", "sequence", "mask"), [(1, 1, 1), (2, 5, 8), (3, 7, 1)])
def test_broadcasting_matches_numpy(broadcast: JitModule, batch: int, sequence: int, mask: int) -> None:
    rng = np.random.default_rng(batch * 10 + sequence)
    x, b, m, n = (
        _random(rng, batch, sequence, 8),
        _random(rng, 8),
        _random(rng, batch, 1, mask),
        _random(rng, sequence, 8),
    )
    _, (y,) = run_entry(broadcast, [x, b, m, n], [(0, 1), (), (0, 2), (0,)], [(-1, -1, 8)])
    np.testing.assert_allclose(y, np.tanh((x + b) * m - n), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 6, 33])
def test_linear_softmax_and_means_match_numpy(rows: JitModule, n: int) -> None:
    rng = np.random.default_rng(n)
    x, w, c = _random(rng, n, 8), _random(rng, 8, 4), _random(rng, 4)
    _, (probabilities, row_means, column_means) = run_entry(rows, [x, w, c], [(0,), (), ()], [(-1, 4), (-1,), (1, 4)])
    logits = x.astype(np.float64) @ w + c
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(probabilities, exp / exp.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(row_means, logits.mean(axis=1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(column_means, logits.mean(axis=0, keepdims=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("batch", "sequence"), [(1, 1), (2, 5), (3, 16)])
def test_self_attention_matches_numpy(attention: JitModule, batch: int, sequence: int) -> None:
    x = _random(np.random.default_rng(batch * 100 + sequence), batch, sequence, 8)
    _, (y,) = run_entry(attention, [x], [(0, 1)], [(-1, -1, 8)])
    heads = x.astype(np.float64).reshape(batch, sequence, 2, 4).transpose(0, 2, 1, 3)
    scores = heads @ heads.transpose(0, 1, 3, 2)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    expected = (weights @ heads).transpose(0, 2, 1, 3).reshape(batch, sequence, 8)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 5), (9, 4)])
def test_concat_slice_and_flatten_match_numpy(concat: JitModule, m: int, n: int) -> None:
    rng = np.random.default_rng(m * 10 + n)
    a, b = _random(rng, m, 4), _random(rng, n, 4)
    _, (sliced, flat) = run_entry(concat, [a, b], [(0,), (0,)], [(-1, 4), (-1,)])
    expected = np.concatenate([a, b])[1:]
    np.testing.assert_array_equal(sliced, expected)
    np.testing.assert_array_equal(flat, expected.reshape(-1))


def _lower(source: str) -> ModuleOp:
    module = parse(source)
    GraphToTePass().apply(make_context(), module)
    return module


def test_extents_are_size_operands_and_one_dim_per_argument_axis() -> None:
    module = _lower(BROADCAST)
    dims = [op for op in module.walk() if isinstance(op, te.DimOp)]
    assert [(op.tensor.name_hint, op.axis.value.data) for op in dims] == [("x", 0), ("x", 1), ("m", 2)]
    computes = [op for op in module.walk() if isinstance(op, te.ComputeOp)]
    assert all(list(op.dynamic_sizes) == [dims[0].result, dims[1].result] for op in computes)


def test_static_shapes_emit_no_extents() -> None:
    module = _lower(ROWS.replace("?", "3"))
    assert not [op for op in module.walk() if isinstance(op, te.DimOp)]
    assert all(not op.dynamic_sizes for op in module.walk() if isinstance(op, te.ComputeOp))


GATHER_ND = """
func.func @main(%x: tensor<?x4xf32>, %i: tensor<2x1xi64>) -> tensor<2x4xf32> {
  %y = graph.gather_nd %x, %i : (tensor<?x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
"""


def test_op_without_a_dynamic_lowering_is_refused_by_name() -> None:
    module = parse(GATHER_ND)
    next(op for op in module.walk() if op.name == "graph.gather_nd").results[0].name_hint = "rows"
    with pytest.raises(DiagnosticException, match=r"graph-to-te: 'graph\.gather_nd' \(rows\) does not take run-time"):
        GraphToTePass().apply(make_context(), module)


def test_reshape_to_several_run_time_dims_needs_its_target() -> None:
    source = ATTENTION.replace("{shape = array<i64: 0, 0, 2, 4>} ", "")
    with pytest.raises(DiagnosticException, match=r"'graph\.reshape' reshapes to several run-time dimensions"):
        _lower(source)


SLICE_OF_STATIC_AXIS = """
func.func @main(%x: tensor<9x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.slice %x {starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : tensor<9x4xf32> -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
"""


def test_slice_not_to_the_end_of_a_run_time_axis_is_refused() -> None:
    with pytest.raises(DiagnosticException, match=r"'graph\.slice' has a run-time extent along axis 0 that is not"):
        _lower(SLICE_OF_STATIC_AXIS)
