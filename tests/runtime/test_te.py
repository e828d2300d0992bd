"""The Python TE API (`minimlc.te`) and `minimlc.build`: expressions against numpy at every opt level, the emitted
te dialect re-parsed by mini-opt, and the refusals (dtype, shape, arguments) with the names they must carry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

import minimlc
from minimlc import te
from minimlc.driver.build import ArgumentError

MINI_OPT = str(Path(sys.executable).parent / "mini-opt")
RNG = np.random.default_rng(0)


def run(tensors, arrays, opt_level=3):
    """Build `te.create_function(tensors)` and run it on `arrays` (inputs), returning the outputs."""
    function = te.create_function(tensors, name="f")
    built = minimlc.build(function, opt_level=opt_level)
    outputs = [np.empty(info.shape, info.dtype) for info in built.outputs]
    built(*arrays, *outputs)
    return outputs


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_matmul_bias_relu_matches_numpy(opt_level: int) -> None:
    A = te.placeholder((5, 12), name="A")
    B = te.placeholder((12, 7), name="B")
    bias = te.placeholder((7,), name="bias")
    k = te.reduce_axis((0, 12), name="k")
    C = te.compute((5, 7), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((5, 7), lambda i, j: te.max(C[i, j] + bias[j], 0.0), name="D")
    a, b = RNG.standard_normal((5, 12), np.float32), RNG.standard_normal((12, 7), np.float32)
    c = RNG.random(7, np.float32)
    (d,) = run([A, B, bias, D], [a, b, c], opt_level)
    np.testing.assert_allclose(d, np.maximum(a @ b + c, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda X, i, j: te.exp(X[i, j]), lambda x, i, j: np.exp(x)),
        (lambda X, i, j: te.log(te.abs(X[i, j]) + 1.0), lambda x, i, j: np.log(np.abs(x) + 1)),
        (lambda X, i, j: te.sqrt(te.abs(X[i, j])), lambda x, i, j: np.sqrt(np.abs(x))),
        (lambda X, i, j: te.tanh(X[i, j]), lambda x, i, j: np.tanh(x)),
        (lambda X, i, j: te.sigmoid(X[i, j]), lambda x, i, j: 1 / (1 + np.exp(-x))),
        (
            lambda X, i, j: te.min(X[i, j], 0.5) * 2.0 - 1.0 / (X[i, j] * X[i, j] + 1.0),
            lambda x, i, j: np.minimum(x, 0.5) * 2 - 1 / (x * x + 1),
        ),
        (lambda X, i, j: te.if_then_else(X[i, j] > 0.0, X[i, j], -X[i, j]), lambda x, i, j: np.abs(x)),
        (lambda X, i, j: X[i, j] + (i * 3 + j).astype("float32"), lambda x, i, j: x + (i * 3 + j)),
        (
            lambda X, i, j: te.if_then_else(te.all(i >= 1, j < 5), X[i - 1, j + 1], te.const(7.0)),
            lambda x, i, j: np.where((i >= 1) & (j < 5), x[np.maximum(i - 1, 0), np.minimum(j + 1, 5)], 7.0),
        ),
        (lambda X, i, j: X[(i + 1) % 4, j // 2], lambda x, i, j: x[(i + 1) % 4, j // 2]),
    ],
    ids=["exp", "log", "sqrt", "tanh", "sigmoid", "arith", "select", "index_cast", "padding", "floor_div_mod"],
)
def test_elementwise_expressions_match_numpy(make, expected) -> None:
    X = te.placeholder((4, 6), name="X")
    Y = te.compute((4, 6), lambda i, j: make(X, i, j), name="Y")
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    (y,) = run([X, Y], [x])
    i, j = np.meshgrid(np.arange(4), np.arange(6), indexing="ij")
    np.testing.assert_allclose(y, expected(x, i, j), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("combiner", ["sum", "max", "min"])
def test_reductions_over_two_axes_with_an_offset(combiner: str) -> None:
    X = te.placeholder((3, 8, 5), name="X")
    r = te.reduce_axis((2, 8), name="r")
    s = te.reduce_axis((0, 5), name="s")
    reducer = getattr(te, combiner)
    Y = te.compute((3,), lambda n: reducer(X[n, r, s], axis=[r, s]), name="Y")
    x = RNG.standard_normal((3, 8, 5)).astype(np.float32)
    (y,) = run([X, Y], [x])
    np.testing.assert_allclose(y, getattr(np, combiner)(x[:, 2:, :], axis=(1, 2)), rtol=1e-5)


def test_integer_tensors() -> None:
    X = te.placeholder((6,), dtype="int32", name="X")
    Y = te.compute((6,), lambda i: X[i] * 3 - X[5 - i] // 2 + i.astype("int32"), name="Y")
    x = np.arange(-3, 3, dtype=np.int32)
    (y,) = run([X, Y], [x])
    np.testing.assert_array_equal(y, x * 3 - x[::-1] // 2 + np.arange(6))


def test_create_function_returns_a_te_function_that_mini_opt_parses() -> None:
    A = te.placeholder((2, 3), name="A")
    B = te.compute((2, 3), lambda i, j: A[i, j] * 2.0, name="B")
    function = te.create_function([A, B], name="double")
    assert isinstance(function, func.FuncOp)
    text = str(function)
    assert 'te.compute "B" (%i, %j) -> tensor<2x3xf32>' in text
    parsed = subprocess.run([MINI_OPT], input=text, capture_output=True, text=True, check=True).stdout
    assert "func.func @double(%A: tensor<2x3xf32>) -> tensor<2x3xf32>" in parsed
    lowered = subprocess.run([MINI_OPT, "-p", "lower-to-llvm"], input=text, capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr


def test_out_of_range_reads_are_clamped_and_in_range_reads_are_not() -> None:
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: te.if_then_else(i >= 1, A[i - 1], 0.0) + A[i], name="B")
    text = str(te.create_function([A, B]))
    assert text.count("arith.maxsi") == 1 and "arith.minsi" not in text


def test_build_checks_every_argument_before_running() -> None:
    A = te.placeholder((2, 3), name="A")
    B = te.compute((2, 3), lambda i, j: A[i, j] + 1.0, name="B")
    f = minimlc.build(te.create_function([A, B], name="inc"))
    a, b = np.ones((2, 3), np.float32), np.empty((2, 3), np.float32)
    f(a, b)
    np.testing.assert_array_equal(b, 2.0)
    with pytest.raises(ArgumentError, match=r"inc takes 2 arrays \(A, B\), got 1"):
        f(a)
    with pytest.raises(ArgumentError, match=r"argument 0 'A' \(input\): expected shape \(2, 3\), got \(3, 2\)"):
        f(a.T.copy(), b)
    with pytest.raises(ArgumentError, match=r"argument 0 'A' \(input\): expected dtype float32, got float64"):
        f(a.astype(np.float64), b)
    with pytest.raises(ArgumentError, match=r"argument 1 'B' \(output\): expected a numpy array"):
        f(a, [[0.0] * 3] * 2)
    with pytest.raises(ArgumentError, match=r"argument 1 'B' \(output\): must be a writable, C-contiguous"):
        f(a, np.empty((3, 2), np.float32).T)
    with pytest.raises(ArgumentError, match=r"argument 1 'B' \(output\): overlaps another argument"):
        f(a, a)
    f(np.ones((3, 2), np.float32).T, b)  # a strided input is copied
    np.testing.assert_array_equal(b, 2.0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda A: te.compute((2, 3), lambda i: A[i, 0]), "the function takes 1 indices for a 2-d shape"),
        (lambda A: te.compute((2,), lambda i: A[i]), "tensor 'A' has 2 dimensions, indexed with 1"),
        (lambda A: te.compute((2,), lambda i: A[i, A[i, 0]]), "index 1 is a float32 expression"),
        (lambda A: te.compute((2,), lambda i: A[i, 0] + i), r"'add' of a float32 and a index expression"),
        (lambda A: te.compute((2,), lambda i: A[i, 0] // 2.0), "'floordiv' of float32 expressions"),
        (
            lambda A: te.compute((2,), lambda i: te.sum(A[i, te.reduce_axis((0, 3), "k")], axis=[]) + 1.0),
            "no reduction axis given",
        ),
        (lambda A: te.placeholder((2, 0), name="Z"), "must be positive integers"),
        (lambda A: te.placeholder((2,), dtype="float16", name="Z"), "unsupported dtype 'float16'"),
        (lambda A: te.reduce_axis((3, 3), name="k"), "start < stop"),
    ],
)
def test_malformed_expressions_are_refused_by_name(build, message: str) -> None:
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(te.TEError, match=message):
        build(A)


def test_a_reduction_inside_an_expression_is_refused() -> None:
    A = te.placeholder((2, 3), name="A")
    k = te.reduce_axis((0, 3), name="k")
    with pytest.raises(te.TEError, match=r"compute 'S': te.sum must be the whole body"):
        te.compute((2,), lambda i: te.sum(A[i, k], axis=k) + 1.0, name="S")
    with pytest.raises(te.TEError, match=r"compute 'T': reduction axis 'k' does not belong to this compute"):
        te.compute((2,), lambda i: A[i, k], name="T")


def test_create_function_refusals() -> None:
    A = te.placeholder((2,), name="A")
    other = te.placeholder((2,), name="other")
    B = te.compute((2,), lambda i: A[i] + other[i], name="B")
    with pytest.raises(te.TEError, match="placeholder\\(s\\) other are read but not in the arguments"):
        te.create_function([A, B])
    with pytest.raises(te.TEError, match="list the placeholders \\(inputs\\) first"):
        te.create_function([A, B, other])
    with pytest.raises(te.TEError, match="no computed tensor"):
        te.create_function([A])
    C = te.compute((2,), lambda i: A[i], name="A")
    with pytest.raises(te.TEError, match="several tensors are named A"):
        te.create_function([A, C])


def test_tvm_seed_code_ports_by_changing_the_import() -> None:
    # The mm_relu of the seed (MLC course, "TensorIR" chapter), verbatim but for the import.
    A = te.placeholder((128, 128), "float32", name="A")
    B = te.placeholder((128, 128), "float32", name="B")
    k = te.reduce_axis((0, 128), "k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], 0), name="C")
    te_func = te.create_prim_func([A, B, C], name="mm_relu")
    a, b = RNG.standard_normal((128, 128), np.float32), RNG.standard_normal((128, 128), np.float32)
    c = np.empty((128, 128), np.float32)
    minimlc.build(te_func, target="x86-64")(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_variadic_indices_and_calling_a_tensor_as_tvm_spells_them() -> None:
    """`lambda *i: te.max(A(*i), 0)` (the seed's te_relu): all indices at once, loops named i0, i1, ..."""
    A = te.placeholder((3, 4, 5), name="A")
    B = te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")
    assert [axis.name for axis in B.axis] == ["i0", "i1", "i2"]
    a = RNG.standard_normal((3, 4, 5), np.float32)
    (b,) = run([A, B], [a])
    np.testing.assert_array_equal(b, np.maximum(a, 0))
    with pytest.raises(te.TEError, match="has 3 dimensions, indexed with 2"):
        te.compute((3, 4), lambda *i: A(*i), name="short")
