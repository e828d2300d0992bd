"""`minimlc.schedule.Schedule`: every primitive applies its loop pass, is recorded in the trace and keeps results
equal to numpy; the trace replays (here and with mini-opt) to the same IR; refusals name the loop and the problem.
The two examples (`examples/te_mlp.py`, `examples/te_matmul.py`) run here."""

from __future__ import annotations

import numpy as np
import pytest
import te_matmul
import te_mlp

import minimlc
from minimlc import te
from minimlc.schedule import LoopRV, Schedule, ScheduleError

RNG = np.random.default_rng(1)


def matmul(n: int = 6, m: int = 20, k: int = 10):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_function([A, B, C], name="mm")


def check_matmul(sch: Schedule, n: int = 6, m: int = 20, k: int = 10) -> None:
    a, b = RNG.standard_normal((n, k), np.float32), RNG.standard_normal((k, m), np.float32)
    c = np.empty((n, m), np.float32)
    minimlc.build(sch)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    replayed = Schedule(matmul(n, m, k))
    replayed.replay(str(sch.trace))
    assert str(replayed.mod) == str(sch.mod)


def test_get_loops_names_the_lambda_parameters_and_reduce_axes() -> None:
    sch = Schedule(matmul())
    assert sch.kernels() == ["C_0"]
    assert [str(lp) for lp in sch.get_loops("C")] == ["i", "j", "r"]
    assert sch.get_block("C_0").kernel == sch.get_block("C").kernel == "C_0"
    with pytest.raises(ScheduleError, match=r"no block named 'D' \(blocks: C \(C_0\)\)"):
        sch.get_block("D")


def test_split_reorder_vectorize_parallel_unroll() -> None:
    sch = Schedule(matmul(n=8, m=32))
    i, j, r = sch.get_loops("C")
    i_o, i_i = sch.split(i, factors=[None, 2])
    j_o, j_i = sch.split(j, factors=[None, 16])
    sch.reorder(i_o, j_o, i_i, j_i)
    sch.unroll(i_i)
    sch.parallel(i_o)
    assert str(sch.trace) == (
        "loop-split{kernel=C_0 loop=i factor=2},loop-split{kernel=C_0 loop=j factor=16},"
        "loop-reorder{kernel=C_0 order=i_o,j_o,i_i,j_i},loop-unroll{kernel=C_0 loop=i_i},"
        "loop-parallel{kernel=C_0 loop=i_o}"
    )
    assert "parallel" in str(sch.mod) and "unroll" in str(sch.mod)
    check_matmul(sch, n=8, m=32)


def test_imperfect_and_three_way_splits() -> None:
    sch = Schedule(matmul())
    i, j, r = sch.get_loops("C")
    j_o, j_i = sch.split(j, factors=[None, 8])  # 20 = 2 * 8 + a tail of 4
    assert [str(lp) for lp in sch.get_loops("C")] == ["i", "j_o", "j_i", "r", "j_t", "r_in_j_t"]
    outer, middle, inner = sch.split(r, factors=[None, 5, 2])
    assert (str(outer), str(middle), str(inner)) == ("r_o", "r_i_o", "r_i_i")
    check_matmul(sch)


def test_tile_and_decompose_reduction_then_vectorize_and_cache_write() -> None:
    sch = Schedule(matmul(n=8, m=32))
    init = sch.decompose_reduction("C")
    assert [str(lp) for lp in init] == ["i_init", "j_init"]
    sch.vectorize(init[1])
    _, _, i, j, r = sch.get_loops("C")
    i_o, j_o, i_i, j_i = sch.tile([i, j], [4, 16])
    sch.reorder(j_o, r, i_i, j_i)
    sch.vectorize(j_i)
    sch.cache_write(j_o, accumulate=True)
    assert "loop-tile{kernel=C_0 loops=i,j sizes=4,16}" in str(sch.trace)
    check_matmul(sch, n=8, m=32)


def test_cache_read_packs_the_rows_a_block_of_rows_reads() -> None:
    sch = Schedule(matmul(n=8, m=32))
    sch.decompose_reduction("C")
    _, _, i, j, r = sch.get_loops("C")
    i_o, i_i = sch.split(i, factors=[None, 4])
    j_o, j_i = sch.split(j, factors=[None, 16])
    sch.reorder(i_o, j_o, r, i_i, j_i)
    sch.vectorize(j_i)
    sch.cache_read(i_o, 0)  # A's 4 x 10 rows of one i_o iteration, kept depth-major as r, i_i walk them
    assert str(sch.trace).endswith("loop-cache-read{kernel=C_0 loop=i_o operand=0}")
    assert 'loop.alloc "local" : memref<10x4xf32>' in str(sch.mod)
    assert [str(lp) for lp in sch.get_loops("C")][2:5] == ["i_o", "i_o_rd0", "i_o_rd1"]
    check_matmul(sch, n=8, m=32)
    with pytest.raises(ScheduleError, match="operand 2 in loop 'i_o' of kernel 'C_0': the kernel writes it"):
        sch.cache_read(i_o, 2)


def test_compute_at_and_fuse_the_init_nest() -> None:
    for primitive in ("compute_at", "fuse"):
        sch = Schedule(matmul())
        i_init, _ = sch.decompose_reduction("C")
        _, _, i, _, _ = sch.get_loops("C")
        getattr(sch, primitive)(i_init, i)
        assert [str(lp) for lp in sch.get_loops("C")][0] in ("i", "i_init")
        assert len([lp for lp in sch.get_loops("C") if lp.name.startswith("i")]) == 1
        check_matmul(sch)


def test_refusals_name_the_loop_and_leave_the_schedule_unchanged() -> None:
    sch = Schedule(matmul())
    i, j, r = sch.get_loops("C")
    sch.split(j, factors=[None, 8])
    before, trace = str(sch.mod), str(sch.trace)
    with pytest.raises(ScheduleError, match=r"kernel 'C_0' has no loop 'j' .*its loops: i, j_o, j_i, r, j_t"):
        sch.vectorize(j)
    with pytest.raises(ScheduleError, match=r"split of loop 'i' \(6 iterations\).*leave no whole factor"):
        sch.split(i, factors=[4, None])
    with pytest.raises(ScheduleError, match=r"split of loop 'i' \(6 iterations\).*cover fewer than 6"):
        sch.split(i, factors=[2, 2])
    with pytest.raises(ScheduleError, match=r"at most one factor may be None"):
        sch.split(i, factors=[None, None])
    with pytest.raises(ScheduleError, match=r"split of loop 'i' \(6 iterations\).*inner factors \[7\] exceed"):
        sch.split(i, factors=[None, 7])
    with pytest.raises(ScheduleError, match=r"loop-reorder: loops r, j_t of kernel 'C_0'"):
        sch.reorder(LoopRV("C_0", "r"), LoopRV("C_0", "j_t"))
    with pytest.raises(ScheduleError, match=r"decompose_reduction of kernel 'C_0' at loop 'r'.*outermost one, 'i'"):
        sch.decompose_reduction("C", LoopRV("C_0", "r"))
    with pytest.raises(ScheduleError, match=r"'cse' is not a schedule primitive"):
        sch.replay("cse")
    assert (str(sch.mod), str(sch.trace)) == (before, trace)


def test_vectorize_refuses_a_loop_holding_loops_but_unrolled_ones() -> None:
    sch = Schedule(matmul(n=8, m=16))
    i, j, r = sch.get_loops("C")
    before = str(sch.mod)
    with pytest.raises(ScheduleError, match=r"loop 'i' is not innermost \(it holds loop 'j'\).*vectorized: 'r'"):
        sch.vectorize(i)
    with pytest.raises(ScheduleError, match=r"loop 'j' is not innermost \(it holds loop 'r'\).*vectorized: 'r'"):
        sch.vectorize(j)
    assert str(sch.mod) == before
    assert len(sch.trace) == 0
    sch.decompose_reduction("C")
    i_o, i_i = sch.split(i, factors=[None, 2])
    sch.reorder(i_o, r, j, i_i)
    sch.unroll(i_i)
    sch.vectorize(j)  # holds only the unrolled i_i
    check_matmul(sch, n=8, m=16)


def test_mlp_example_matches_numpy() -> None:
    assert te_mlp.main() < 1e-3


@pytest.mark.slow
def test_matmul_example_trace_replays_with_mini_opt_to_identical_loop_ir() -> None:
    function = te_matmul.matmul_function(64)
    sch = te_matmul.hand_schedule(Schedule(function))
    assert te_matmul.replayed_loop_ir(function, str(sch.trace)).rstrip("\n") == str(sch.mod)  # mini-opt ends the file
    te_matmul.main(64)


def test_get_block_checks_tvm_func_name() -> None:
    sch = Schedule(matmul())
    assert sch.get_block("C", func_name="mm").kernel == "C_0"
    with pytest.raises(ScheduleError, match=r"no function named 'main' \(this schedule is of 'mm'\)"):
        sch.get_block("C", func_name="main")


def test_computes_with_identical_bodies_share_their_kernel() -> None:
    X = te.placeholder((4, 16), name="X")
    first = te.compute((4, 16), lambda i, j: te.max(X[i, j], 0.0), name="first")
    second = te.compute((4, 16), lambda i, j: te.max(first[i, j], 0.0), name="second")
    sch = Schedule(te.create_function([X, second], name="twice"))
    assert sch.get_block("first").kernel == sch.get_block("second").kernel == "first_0"
    _, j = sch.get_loops("second")
    sch.vectorize(j)
    x, y = RNG.standard_normal((4, 16), np.float32), np.empty((4, 16), np.float32)
    minimlc.build(sch)(x, y)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
