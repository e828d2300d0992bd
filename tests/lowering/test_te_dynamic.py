"""te computes with run-time extents (`docs/design/symbolic_shapes.md`): the Python API of `te.ComputeOp` and
`te.DimOp`, the te passes on dynamic computes, and the numbers of te-to-loop's dynamic kernels and entry ABI: each
module is lowered to LLVM, JIT-compiled once and run at sizes 1, 5 and 64 through `@main_packed` (inputs, outputs,
the extents buffer) after `@main_output_extents_packed` has given the output extents, against numpy (rtol 1e-5:
float32 sums of at most 64 terms)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, TensorType, f32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects import te
from minimlc.lowering.abi import INPUT_EXTENTS_ATTR, OUTPUT_EXTENTS_ATTR, int_attribute
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes, run_pipeline
from minimlc.runtime.jit import JitModule
from tests.lowering.dynamic_entry import compile_entry, parse, run_entry

SIZES = (1, 5, 64)
LOWER = "te-to-loop,loop-to-scf,cse,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"

ADD = """
func.func @main(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %n = te.dim %x[0] : tensor<?x8xf32>
  %z = te.compute "add" (%i, %j) [%n] -> tensor<?x8xf32> {
    %a = te.read %x[%i, %j] : tensor<?x8xf32>
    %b = te.read %y[%i, %j] : tensor<?x8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %z : tensor<?x8xf32>
}
"""

# A row softmax over n x s as one kernel group (reductions over the run-time extent s), and the row means of its
# exponentials' sums, whose body divides by the outside extent %s.
SOFTMAX = """
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %n = te.dim %x[0] : tensor<?x?xf32>
  %s = te.dim %x[1] : tensor<?x?xf32>
  %m = te.compute "softmax_max" (%i) [%n] reduce max (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %x[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %e = te.compute "softmax_exp" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %x[%i, %j] : tensor<?x?xf32>
    %w = te.read %m[%i] : tensor<?xf32>
    %d = arith.subf %v, %w : f32
    %r = math.exp %d : f32
    te.yield %r : f32
  } attributes {kernel_group = 0 : i64}
  %t = te.compute "softmax_sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %e[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %y = te.compute "softmax" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %e[%i, %j] : tensor<?x?xf32>
    %w = te.read %t[%i] : tensor<?xf32>
    %r = arith.divf %v, %w : f32
    te.yield %r : f32
  } attributes {kernel_group = 0 : i64}
  %mean = te.compute "row_mean" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %t[%i] : tensor<?xf32>
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.divf %v, %f : f32
    te.yield %r : f32
  }
  func.return %y, %mean : tensor<?x?xf32>, tensor<?xf32>
}
"""

# Concatenation along a run-time axis (output extent m + n), a returned argument (copy kernel), a static output.
CONCAT = """
func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %w: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) {
  %m = te.dim %a[0] : tensor<?x4xf32>
  %n = te.dim %b[0] : tensor<?x4xf32>
  %total = arith.addi %m, %n : index
  %y = te.compute "concat" (%i, %j) [%total] -> tensor<?x4xf32> {
    %inside = arith.cmpi ult, %i, %m : index
    %c1 = arith.constant 1 : index
    %last = arith.subi %m, %c1 : index
    %ia = arith.minui %i, %last : index
    %u = te.read %a[%ia, %j] : tensor<?x4xf32>
    %k = arith.subi %i, %m : index
    %c0 = arith.constant 0 : index
    %ib = arith.select %inside, %c0, %k : index
    %v = te.read %b[%ib, %j] : tensor<?x4xf32>
    %r = arith.select %inside, %u, %v : f32
    te.yield %r : f32
  }
  %s = te.compute "double" (%j) -> tensor<4xf32> {
    %v = te.read %w[%j] : tensor<4xf32>
    %t = arith.addf %v, %v : f32
    te.yield %t : f32
  }
  func.return %y, %a, %s : tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>
}
"""

# An elementwise chain into a reduction over a run-time extent, then a mean and a ReLU: te-inline folds exp into the
# sum and the mean into the ReLU.
CHAIN = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %n = te.dim %x[0] : tensor<?x?xf32>
  %s = te.dim %x[1] : tensor<?x?xf32>
  %e = te.compute "exp" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %x[%i, %j] : tensor<?x?xf32>
    %r = math.exp %v : f32
    te.yield %r : f32
  }
  %t = te.compute "sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %e[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  }
  %m = te.compute "mean" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %t[%i] : tensor<?xf32>
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.divf %v, %f : f32
    %h = arith.constant 1.500000e+00 : f32
    %d = arith.subf %r, %h : f32
    te.yield %d : f32
  }
  %y = te.compute "relu" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %m[%i] : tensor<?xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    te.yield %r : f32
  }
  func.return %y : tensor<?xf32>
}
"""


@pytest.fixture(scope="module")
def add() -> JitModule:
    return compile_entry(ADD, LOWER)


@pytest.fixture(scope="module")
def softmax() -> JitModule:
    return compile_entry(SOFTMAX, LOWER)


@pytest.fixture(scope="module")
def concat() -> JitModule:
    return compile_entry(CONCAT, LOWER)


@pytest.mark.parametrize("n", SIZES)
def test_dynamic_add_matches_numpy(add: JitModule, n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = (rng.standard_normal((n, 8)).astype(np.float32) for _ in range(2))
    extents, (z,) = run_entry(add, [x, y], [(0,), (0,)], [(-1, 8)])
    assert extents.tolist() == [n]
    np.testing.assert_array_equal(z, x + y)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("s", SIZES)
def test_row_softmax_and_mean_over_run_time_extents_match_numpy(softmax: JitModule, n: int, s: int) -> None:
    x = np.random.default_rng(n * 100 + s).standard_normal((n, s)).astype(np.float32)
    extents, (y, mean) = run_entry(softmax, [x], [(0, 1)], [(-1, -1), (-1,)])
    assert extents.tolist() == [n, s, n]
    exp = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, exp / exp.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, exp.sum(axis=1) / s, rtol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_output_extents_computed_from_input_extents(concat: JitModule, n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, 4)).astype(np.float32)
    b = rng.standard_normal((n + 2, 4)).astype(np.float32)
    w = rng.standard_normal(4).astype(np.float32)
    extents, (y, copied, doubled) = run_entry(concat, [a, b, w], [(0,), (0,), ()], [(-1, 4), (-1, 4), (4,)])
    assert extents.tolist() == [2 * n + 2, n]
    np.testing.assert_array_equal(y, np.concatenate([a, b]))
    np.testing.assert_array_equal(copied, a)
    np.testing.assert_array_equal(doubled, w + w)


@pytest.mark.parametrize("n", SIZES)
def test_te_passes_then_te_to_loop_on_dynamic_computes(n: int) -> None:
    module = parse(CHAIN)
    passes = "te-conv-im2col,te-conv-layout,te-channels-last,te-conv-winograd,te-inline,te-expand-math"
    run_passes(module, passes.split(","), make_context())
    assert [op.tag.data for op in module.walk() if isinstance(op, te.ComputeOp)] == ["sum", "relu"]
    run_pipeline(module, LOWER)
    jit = JitModule(translate_to_llvm_ir(module))
    x = np.random.default_rng(n).standard_normal((n, 7)).astype(np.float32)
    extents, (y,) = run_entry(jit, [x], [(0, 1)], [(-1,)])
    assert extents.tolist() == [n]
    np.testing.assert_allclose(y, np.maximum(np.exp(x.astype(np.float64)).mean(axis=1) - 1.5, 0), rtol=1e-5, atol=1e-6)


def test_entry_attributes_count_the_extents() -> None:
    module = parse(SOFTMAX)
    run_pipeline(module, "te-to-loop")
    entry = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    assert (int_attribute(entry, INPUT_EXTENTS_ATTR), int_attribute(entry, OUTPUT_EXTENTS_ATTR)) == (2, 3)


def _row_sum() -> tuple[func.FuncOp, te.ComputeOp, te.DimOp, te.DimOp]:
    """`@f(%x: tensor<?x?xf32>)`: the row sums over a run-time extent, built with the Python API."""
    x_type = TensorType(f32, [DYNAMIC_INDEX, DYNAMIC_INDEX])
    block = Block(arg_types=[x_type])
    rows, columns = te.DimOp(block.args[0], 0), te.DimOp(block.args[0], 1)
    body = te.ComputeOp.block_for((DYNAMIC_INDEX,), (te.DYNAMIC_EXTENT,))
    read = te.ReadOp(block.args[0], list(body.args))
    body.add_ops([read, te.YieldOp(read.result)])
    compute = te.ComputeOp(
        "row_sum",
        TensorType(f32, [DYNAMIC_INDEX]),
        body,
        reduce_extents=(te.DYNAMIC_EXTENT,),
        combiner="sum",
        dynamic_sizes=[rows.result, columns.result],
    )
    block.add_ops([rows, columns, compute, func.ReturnOp(compute.result)])
    function = func.FuncOp("f", ([x_type], [compute.result.type]), Region(block))
    return function, compute, rows, columns


def test_python_api_of_dynamic_computes() -> None:
    function, compute, rows, columns = _row_sum()
    function.verify()
    assert compute.output_extents() == [rows.result]
    assert compute.reduce_extent_values() == [columns.result]
    assert list(compute.dynamic_sizes) == [rows.result, columns.result]
    assert compute.shape == (DYNAMIC_INDEX,)
    assert compute.extents == (te.DYNAMIC_EXTENT,)
    assert compute.has_run_time_extents()
    assert str(compute).startswith('%0 = te.compute "row_sum" (%1) [%2] reduce sum (%3 : ?) [%4] -> tensor<?xf32>')
    assert rows.axis.value.data == 0
    assert isinstance(rows.result.type, IndexType)


def test_static_compute_has_no_run_time_extents() -> None:
    (function,) = parse(ADD.replace("?", "3").replace("[%n] ", "")).ops
    compute = next(op for op in function.walk() if isinstance(op, te.ComputeOp))
    assert compute.output_extents() == [3, 8]
    assert compute.reduce_extent_values() == []
    assert not compute.has_run_time_extents()


def test_verifier_counts_size_operands() -> None:
    _, compute, rows, _ = _row_sum()
    compute.operands = [rows.result]
    with pytest.raises(VerifyException, match=r"te\.compute 'row_sum': has 1 size operands, expected 2"):
        compute.verify()


def test_verifier_refuses_minus_one_as_a_dimension() -> None:
    body = te.ComputeOp.block_for((1,))
    constant = arith.ConstantOp(FloatAttr(0.0, f32))
    body.add_ops([constant, te.YieldOp(constant.result)])
    compute = te.ComputeOp("fill", TensorType(f32, [-1]), body)
    with pytest.raises(VerifyException, match=r"result dimensions must be sizes or '\?' \(DYNAMIC_INDEX\)"):
        compute.verify()
