"""Every schedule primitive, and default-schedule, keeps a kernel's numbers: JIT the scheduled module and compare it
with numpy in float64 (`reference`; rtol = atol = 1e-5 for K = 40 products, 1e-4 for the default schedule's deeper
ones: float32 rounding of sums the schedules reassociate), and with the unscheduled module too."""

from __future__ import annotations

import math
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import DiagnosticException

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import PIPELINES, make_context, run_passes, split_pass_list
from minimlc.lowering.schedule.default_schedule import apply_steps, schedule_trace
from minimlc.runtime.threadpool import ThreadPool

M, K, N = 24, 40, 48


def matmul_model(m: int = M, k: int = K, n: int = N, relu: bool = False) -> onnx.ModelProto:
    b = np.random.default_rng(0).standard_normal((k, n)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["c" if not relu else "t"])]
    if relu:
        nodes.append(helper.make_node("Relu", ["t"], ["c"]))
    graph = helper.make_graph(
        nodes,
        "mm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_scheduled(model: onnx.ModelProto, steps: list[str], a: np.ndarray) -> np.ndarray:
    imported = import_model(model)
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-loop"][1]), ctx)
    apply_steps(ctx, imported.module, steps)
    imported.module.verify()
    compiled = compile_model(imported, "lower-to-llvm-unscheduled")
    out = np.empty(compiled.outputs[0].shape, dtype=np.float32)
    args = np.concatenate((np.array([a.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    if compiled.pool_slot is None:
        compiled.entry(args.ctypes.data)
        return out
    pool = ThreadPool(2)  # a parallel loop's entry takes the pool's address right after the outputs
    compiled.entry(np.insert(args, compiled.pool_slot, pool.address).ctypes.data)
    return out


def reference(model: onnx.ModelProto, a: np.ndarray) -> np.ndarray:
    """The matmul model (and its ReLU, if any) in float64 numpy."""
    c = a.astype(np.float64) @ numpy_helper.to_array(model.graph.initializer[0]).astype(np.float64)
    return np.maximum(c, 0) if model.graph.node[-1].op_type == "Relu" else c


K0 = "kernel=matmul_0"
SCHEDULES = {
    "none": [],
    "split": [f"loop-split{{{K0} loop=i1 factor=8}}"],
    "reorder": [f"loop-decompose-reduction{{{K0}}}", f"loop-reorder{{{K0} order=k2,i1,i0}}"],
    "unroll": [f"loop-split{{{K0} loop=i0 factor=4}}", f"loop-unroll{{{K0} loop=i0_i}}"],
    "parallel": [f"loop-parallel{{{K0} loop=i0}}"],
    "vectorize": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-reorder{{{K0} order=i0,k2,i1}}",
        f"loop-split{{{K0} loop=i1 factor=16}}",
        f"loop-vectorize{{{K0} loop=i1_i}}",
    ],
    "vectorize-strided": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-reorder{{{K0} order=i1,k2,i0}}",
        f"loop-split{{{K0} loop=i0 factor=8}}",
        f"loop-vectorize{{{K0} loop=i0_i}}",
    ],
    "cache-write-transposed": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-split{{{K0} loop=i0 factor=8}}",
        f"loop-split{{{K0} loop=i1 factor=4}}",
        f"loop-reorder{{{K0} order=i0_o,i1_o,k2,i1_i,i0_i}}",
        f"loop-unroll{{{K0} loop=i1_i}}",
        f"loop-vectorize{{{K0} loop=i0_i}}",
        f"loop-cache-write{{{K0} loop=i1_o}}",
    ],
    "tile": [f"loop-decompose-reduction{{{K0}}}", f"loop-tile{{{K0} loops=i0,i1,k2 sizes=8,16,8}}"],
    "fuse": [f"loop-decompose-reduction{{{K0}}}", f"loop-fuse{{{K0} first=i0_init second=i0}}"],
    "fuse-twice": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-fuse{{{K0} first=i0_init second=i0}}",
        f"loop-fuse{{{K0} first=i1_init second=i1}}",
    ],
    "compute-at-row": [f"loop-decompose-reduction{{{K0}}}", f"loop-compute-at{{{K0} stage=i0_init at=i0}}"],
    "compute-at-element": [f"loop-decompose-reduction{{{K0}}}", f"loop-compute-at{{{K0} stage=i0_init at=i1}}"],
    "pack": [
        f"loop-split{{{K0} loop=i1 factor=16}}",
        f"loop-pack{{{K0} operand=1 dim=1 factor=16}}",
    ],
    "cache-write": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-split{{{K0} loop=i0 factor=4}}",
        f"loop-reorder{{{K0} order=i0_o,i1,k2,i0_i}}",
        f"loop-cache-write{{{K0} loop=i1}}",
    ],
    "cache-write-accumulate": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-split{{{K0} loop=k2 factor=8}}",
        f"loop-reorder{{{K0} order=k2_o,i0,i1,k2_i}}",
        f"loop-cache-write{{{K0} loop=i1 accumulate=true}}",
    ],
    "split-tail": [f"loop-split{{{K0} loop=i0 factor=5}}"],
    "split-tail-vectorize": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-reorder{{{K0} order=i0,k2,i1}}",
        f"loop-split{{{K0} loop=i1 factor=20}}",
        f"loop-vectorize{{{K0} loop=i1_i}}",
    ],
    "tile-tail": [f"loop-decompose-reduction{{{K0}}}", f"loop-tile{{{K0} loops=i0,i1 sizes=5,16}}"],
    "gemm-tail": [
        f"loop-decompose-reduction{{{K0}}}",
        f"loop-split{{{K0} loop=i1 factor=16}}",
        f"loop-split{{{K0} loop=k2 factor=8}}",
        f"loop-split{{{K0} loop=i0 factor=7}}",
        f"loop-reorder{{{K0} order=k2_o,i0_o,i1_o,k2_i,i0_i,i1_i}}",
        f"loop-pack{{{K0} operand=1 dim=1 factor=16}}",
        f"loop-unroll{{{K0} loop=i0_i}}",
        f"loop-vectorize{{{K0} loop=i1_i}}",
        f"loop-cache-write{{{K0} loop=i1_o accumulate=true}}",
    ],
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_keeps_numbers(name: str) -> None:
    model = matmul_model()
    a = np.random.default_rng(1).standard_normal((M, K)).astype(np.float32)
    actual = run_scheduled(model, SCHEDULES[name], a)
    np.testing.assert_allclose(actual, reference(model, a), rtol=1e-5, atol=1e-5)
    if SCHEDULES[name]:
        np.testing.assert_allclose(actual, run_scheduled(model, [], a), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [3, 4])
def test_split_by_an_imperfect_factor_matches_numpy(rows: int) -> None:
    """10 rows split by 3 (or 4): a main nest over 9 (or 8) rows and a peeled tail over the rest."""
    model = matmul_model(10, K, N)
    a = np.random.default_rng(3).standard_normal((10, K)).astype(np.float32)
    steps = [f"loop-decompose-reduction{{{K0}}}", f"loop-split{{{K0} loop=i0 factor={rows}}}"]
    np.testing.assert_allclose(run_scheduled(model, steps, a), reference(model, a), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("m", "k", "n", "relu"), [(24, 40, 48, False), (64, 512, 64, True), (1, 784, 128, False)])
def test_default_schedule_keeps_numbers(m: int, k: int, n: int, relu: bool) -> None:
    model = matmul_model(m, k, n, relu)
    a = np.random.default_rng(2).standard_normal((m, k)).astype(np.float32)
    (actual,) = InferenceSession(model).run(None, {"a": a})
    np.testing.assert_allclose(actual, reference(model, a), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual, run_scheduled(model, [], a), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (f"loop-split{{{K0} loop=q factor=8}}", r"no loop named 'q' in kernel 'matmul_0' \(loops: i0, i1, k2\)"),
        ("loop-split{kernel=nope loop=i0 factor=8}", "no kernel named 'nope'"),
        (f"loop-split{{{K0} loop=i1 factor=49}}", "factor 49 is not between 1 and the 48 iterations"),
        (f"loop-split{{{K0} loop=i1 factor=0}}", "factor 0 is not between 1 and the 48 iterations"),
        (f"loop-reorder{{{K0} order=k2,i1}}", "not perfectly nested"),
        (f"loop-cache-write{{{K0} loop=i1}}", "must write exactly one buffer, not 2"),
        (f"loop-pack{{{K0} operand=0 dim=0 factor=8}}", "not a weight"),
        (
            f"loop-pack{{{K0} operand=1 dim=1 factor=16 order=1}}",
            r"order \[1\] is not a permutation of the other dimensions \[0\]",
        ),
        (f"loop-tile{{{K0} loops=i0,i1 sizes=8}}", "2 loops but 1 sizes"),
        (f"loop-fuse{{{K0} first=i0 second=i1}}", "not adjacent"),
        (f"loop-compute-at{{{K0} stage=i0 at=i1}}", "must be the loop nest right before"),
    ],
)
def test_bad_options_are_named(step: str, message: str) -> None:
    imported = import_model(matmul_model())
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-loop"][1]), ctx)
    with pytest.raises(DiagnosticException, match=message):
        apply_steps(ctx, imported.module, [step])


def test_split_tail_is_named_where_it_breaks_a_nest() -> None:
    imported = import_model(matmul_model())
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-loop"][1]), ctx)
    apply_steps(ctx, imported.module, [f"loop-decompose-reduction{{{K0}}}", f"loop-split{{{K0} loop=i1 factor=5}}"])
    with pytest.raises(DiagnosticException, match="loop 'i1_t' lies beside them: the tail of a split"):
        apply_steps(ctx, imported.module, [f"loop-reorder{{{K0} order=i1_o,i0}}"])


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_num_threads_is_validated(bad: object) -> None:
    with pytest.raises(ValueError, match="num_threads"):
        InferenceSession(matmul_model(), num_threads=bad)  # type: ignore[arg-type]


def test_num_threads_one_is_accepted() -> None:
    assert InferenceSession(matmul_model(), num_threads=1).num_threads == 1


def test_with_num_threads_shares_the_compiled_module() -> None:
    imported = import_model(matmul_model())
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-loop"][1]), ctx)
    apply_steps(ctx, imported.module, [f"loop-parallel{{{K0} loop=i0}}"])
    one = InferenceSession.from_imported(imported, num_threads=1)
    two = one.with_num_threads(2)
    assert (one.num_threads, two.num_threads) == (1, 2)
    assert two.llvm_ir is one.llvm_ir
    assert "minimlc_parallel_for" in one.llvm_ir
    a = np.random.default_rng(3).standard_normal((M, K)).astype(np.float32)
    expected = reference(matmul_model(), a)
    for session in (one, two):
        np.testing.assert_allclose(session.run(None, {"a": a})[0], expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="num_threads"):
        one.with_num_threads(0)


def _trace(model: onnx.ModelProto) -> str:
    imported = import_model(model)
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-schedule"][1]), ctx)
    return schedule_trace(ctx, imported.module)


@pytest.mark.parametrize(("m", "k", "n", "relu"), [(64, 512, 64, True), (96, 64, 256, False)])
def test_default_schedule_parallel_gemm_is_exact_on_two_threads(m: int, k: int, n: int, relu: bool) -> None:
    """Tasks own disjoint row blocks and sum in the same order as one thread: results are bitwise equal."""
    model = matmul_model(m, k, n, relu)
    assert "loop-parallel{kernel=matmul_0 loop=i0_o}" in _trace(model)
    a = np.random.default_rng(3).standard_normal((m, k)).astype(np.float32)
    one_thread = InferenceSession(model, num_threads=1)
    (one,) = one_thread.run(None, {"a": a})
    two_threads = one_thread.with_num_threads(2)
    deadline = time.monotonic() + 60
    while True:  # a busy machine may keep the second thread out of a run: repeat until both threads took tasks
        (two,) = two_threads.run(None, {"a": a})
        np.testing.assert_array_equal(two, one)
        if min(two_threads.task_counts()) > 0 or time.monotonic() > deadline:
            break
    assert min(two_threads.task_counts()) > 0, two_threads.task_counts()
    np.testing.assert_allclose(two, reference(model, a), rtol=1e-4, atol=1e-4)


def test_libm_math_is_not_vectorized_and_runs_scalar() -> None:
    """`math.erf` lowers to a scalar libm call: vectorizing its loop is refused by name, and the default schedule,
    finding the elementwise schedule refused, leaves the kernel scalar (it used to fail in convert-to-llvm)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Erf", ["x"], ["y"])], "erf", [x], [y]),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    module = import_model(model).module
    run_passes(module, ["graph-to-te", "te-to-loop"])
    steps = ["loop-split{kernel=erf_0 loop=i1 factor=16}", "loop-vectorize{kernel=erf_0 loop=i1_i}", "loop-to-scf"]
    with pytest.raises(DiagnosticException, match=r"cannot vectorize loop 'i1_i'.*math\.erf.*no vector form"):
        apply_steps(make_context(), module, steps)
    data = np.random.default_rng(3).standard_normal((2, 64)).astype(np.float32)
    (actual,) = InferenceSession(model).run(None, {"x": data})
    expected = np.vectorize(math.erf)(data.astype(np.float64))
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (["loop-compute-at{kernel=matmul_0 stage=i0_init at=k2}"], "not perfectly nested 3 loops deep"),
        (
            ["loop-split{kernel=matmul_0 loop=i0 factor=8}", "loop-compute-at{kernel=matmul_0 stage=i0_init at=i0_o}"],
            r"loops 'i0_init' and 'i0_o' have different bounds \(\(0, 24, 1\) and \(0, 24, 8\)\)",
        ),
    ],
)
def test_compute_at_refuses_what_would_change_the_result(steps: list[str], message: str) -> None:
    imported = import_model(matmul_model())
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-loop"][1]), ctx)
    with pytest.raises(DiagnosticException, match=message):
        apply_steps(ctx, imported.module, ["loop-decompose-reduction{kernel=matmul_0}", *steps])
