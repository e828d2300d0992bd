"""The GEMM rule's BLIS order (`order=k,j,i`: column panels outside the register tiles' rows, `mc` row blocks
outside the panels): its configs keep the numbers (numpy in float64), with row tails and column blocks, and its
default applies where a weight's rows of panels fill L2 (MatMul 1024^3) and nowhere else; B prefetched; a classifier's
1000 columns padded to whole vectors so that it is scheduled at all."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline, stage_passes
from minimlc.lowering.schedule.default_schedule import apply_steps, kernel_space
from minimlc.lowering.schedule.gemm import GEMM, GemmWorkload
from minimlc.lowering.schedule.kernel_analysis import kernels_of
from minimlc.lowering.target import target_from_name, target_of
from minimlc.tuner.tasks import extract_tasks

RTOL = ATOL = 1e-4
M, K, N = 72, 40, 256
B = np.random.default_rng(0).standard_normal((K, N)).astype(np.float32)


def _matmul_model():
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])],
        [numpy_helper.from_array(B, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def _run(change: dict[str, object], x: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The MatMul with its GEMM kernel scheduled as the default config with `change`; the output and the steps."""
    imported = import_model(_matmul_model())
    run_pipeline(imported.module, 3, stop_after="schedule")
    target = target_of(imported.module)
    (space,) = [s for k in kernels_of(imported.module) if (s := kernel_space(imported.module, k, target)) is not None]
    assert space.rule is GEMM
    steps = space.steps({**space.space.default(), **change})  # type: ignore[dict-item]
    apply_steps(make_context(), imported.module, steps)
    rest = [item for item in stage_passes(3, start_after="schedule") if item != "default-schedule"]
    compiled = compile_model(imported, rest)
    out = np.empty((M, N), dtype=np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    return out, steps


@pytest.mark.parametrize(
    ("change", "reorder"),
    [
        # 9 tiles of 8 rows in blocks of 3 (at most 32 rows).
        ({"mr": 8, "mc": 32}, "order=k2_o,i0_o_o,i1_o,i0_o_i,"),
        # 14 tiles of 5 rows (and a tail of 2) in blocks of 2 tiles, 2 depth blocks, column blocks of 128.
        ({"mr": 5, "mc": 32, "kc": 20, "nc": 128}, "order=k2_o,i1_o_o,i0_o_o,i1_o_i,i0_o_i,"),
        # No row block: the panels outside all the row tiles.
        ({"mr": 6, "mc": 0}, "order=k2_o,i1_o,i0_o,"),
        # A row block of one tile is none (5 tiles of 13 rows: 5 does not divide into blocks of at most 32 rows);
        # without row blocks the rows are split inside the panels, the tail of 7 rows after each panel's full tiles.
        ({"mr": 13, "mc": 32}, "order=k2_o,i1_o,i0,k2_i,i1_i}"),
        # The same with column blocks of 128 and 2 depth blocks (the tiles accumulate).
        ({"mr": 5, "mc": 0, "kc": 20, "nc": 128}, "order=k2_o,i1_o_o,i1_o_i,i0,k2_i,i1_i}"),
    ],
)
def test_blis_order_keeps_the_numbers(change: dict[str, object], reorder: str) -> None:
    x = np.random.default_rng(1).standard_normal((M, K)).astype(np.float32)
    actual, steps = _run({**change, "order": "k,j,i"}, x)
    reorders = [step for step in steps if step.startswith("loop-reorder")]
    assert reorder in reorders[0]
    if M % int(change["mr"]):  # the tail of rows is a register tile of its own: one more reorder and cache-write
        assert "i0_t_o" in reorders[-1]
        assert any(step.startswith("loop-cache-write") and "loop=i0_t_o " in step for step in steps)
    else:
        assert len(reorders) == 1
    np.testing.assert_allclose(actual, x.astype(np.float64) @ B.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("change", "block"),
    [
        # BLIS: a row block's rows of A (3 tiles of 8 x the depth) copied once for all the column panels.
        ({"order": "k,j,i", "mr": 8, "mc": 32}, "i0_o_o"),
        # Every full tile's rows (13 tiles of 5, a tail of 7 rows unpacked) per depth block of 20.
        ({"order": "k,j,i", "mr": 5, "mc": 0, "kc": 20}, "k2_o"),
        # One tile's 6 rows, under the row tile loop, for the panels inside it.
        ({"order": "k,i,j", "mr": 6}, "i0_o"),
        ({"order": "i,k,j", "mr": 6, "kc": 8}, "k2_o"),
    ],
)
def test_packing_a_keeps_the_numbers(change: dict[str, object], block: str) -> None:
    x = np.random.default_rng(2).standard_normal((M, K)).astype(np.float32)
    actual, steps = _run({**change, "pack_a": True}, x)
    assert [step for step in steps if step.startswith("loop-cache-read")] == [
        f"loop-cache-read{{kernel=matmul_0 loop={block} operand=0}}"
    ]
    np.testing.assert_allclose(actual, x.astype(np.float64) @ B.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("change", "step"),
    [
        # Packed panels [j / nr, k, nr]: the depth is dimension 1.
        ({"prefetch": 8}, "loop-prefetch{kernel=matmul_0 loop=k2_i operand=1 dim=1 ahead=8}"),
        # B as it is, [k, j]: dimension 0.
        (
            {"prefetch": 16, "pack": False, "kc": 20},
            "loop-prefetch{kernel=matmul_0 loop=k2_i operand=1 dim=0 ahead=16}",
        ),
    ],
)
def test_prefetching_b_keeps_the_numbers(change: dict[str, object], step: str) -> None:
    """`prefetch` asks each depth step for the lines of B the tile reads `ahead` steps later (clamped to the last
    row: a 40-deep GEMM with 16 ahead reads past no row)."""
    x = np.random.default_rng(3).standard_normal((M, K)).astype(np.float32)
    actual, steps = _run(change, x)
    assert [item for item in steps if item.startswith("loop-prefetch")] == [step]
    np.testing.assert_allclose(actual, x.astype(np.float64) @ B.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("cpu", "mr", "nr"),
    [("znver4", 8, 32), ("x86-64-v3", 6, 16)],
)
def test_default_takes_the_blis_order_where_b_fills_l2(cpu: str, mr: int, nr: int) -> None:
    """MatMul 1024^3: a 256-deep row of B's panels is 1 MB, a 1 MB L2: one 1024-deep block, row blocks of 64 rows
    (64 x 1024 floats of A: a quarter of L2). AVX2's 6-row tiles leave a tail of 4 rows."""
    big = GemmWorkload("matmul_0", "i0", "i1", "k2", 1024, 1024, 1024, 1, 1, True, False)
    config = GEMM.default(big, target_from_name(cpu))
    expected = {
        "mr": mr,
        "nr": nr,
        "kc": 1024,
        "nc": 0,
        "order": "k,j,i",
        "mc": 64,
        "unroll": True,
        "pack": True,
        "pack_a": False,
        "prefetch": 0,
    }
    assert config == expected
    assert GEMM.space(big, target_from_name(cpu)).default() == config


@pytest.mark.parametrize(
    ("m", "batched", "cpu", "mr"),
    [
        (197, False, "x86-64-v3", 6),  # ViT's tokens: prime, the widest tile of 2 AVX2 vectors with a tail of 5
        (197, False, "znver4", 8),  # 24 tiles of 8 rows of 2 zmm vectors and a tail of 5
        (196, False, "x86-64-v3", 6),  # 32 tiles of 6 rows (12 accumulators, not 4 rows' 8) and a tail of 4
        (16, False, "x86-64-v3", 4),  # fewer than 4 tiles of the widest: a divisor of 4 rows or more is kept
        (196, True, "x86-64-v3", 4),  # under batch loops of several iterations, too
        # Under batch loops a tail shares their body (the parallel band is then the batch loops alone), taken only
        # where no divisor of 4 rows or more fits: one row at a time ran Winograd's 16 x (49 x 256) x (256 x 256)
        # GEMM at 7.0 ms, 6 rows with a tail of 1 at 4.1 (an AVX2 EPYC, znver1, in the tuner's measurer).
        (197, True, "x86-64-v3", 6),
        (49, True, "x86-64-v3", 6),
        (49, True, "znver4", 7),  # a 7x7 window's rows under batch loops: 7 rows of 2 zmm vectors, not one at a time
        (98, False, "znver4", 8),  # without batch loops the widest tile with a tail (2 rows) still wins over 7
        (5, False, "x86-64-v3", 1),  # no more rows than the widest tile: no tail, one row at a time as before
    ],
)
def test_default_rows_per_tile(m: int, batched: bool, cpu: str, mr: int) -> None:
    workload = GemmWorkload("gemm_0", "i0", "i1", "k2", m, 192, 192, 1, 1, True, False, batched)
    assert GEMM.default(workload, target_from_name(cpu))["mr"] == mr


@pytest.mark.parametrize(
    ("m", "cpu", "mr"),
    [
        (197, "znver4", 12),  # 208 columns are one zmm vector wide: 12 rows (12 accumulators) and a tail of 5
        (192, "znver4", 8),  # rows that 8 divides keep 8, no tail
        (197, "x86-64-v3", 6),  # two ymm vectors divide 208 columns: the two-vector tile as before
    ],
)
def test_one_vector_tiles_are_twelve_rows_tall_where_a_tail_is_needed(m: int, cpu: str, mr: int) -> None:
    workload = GemmWorkload("matmul_0", "i2", "i3", "k4", m, 208, 64, 1, 3, False, True, True)
    assert GEMM.default(workload, target_from_name(cpu))["mr"] == mr


def test_attention_scores_on_twelve_row_tiles_keep_the_numbers() -> None:
    """ViT's attention scores, [1, 3, 197, 64] by [1, 3, 64, 208] (two activations), on AVX-512's 12-row tiles and
    their 5-row tail: numpy's product (float64) within the tolerance."""
    rng = np.random.default_rng(6)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["q", "k"], ["s"])],
        "scores",
        [
            helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 3, 197, 64]),
            helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 3, 64, 208]),
        ],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 3, 197, 208])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    (gemm,) = [task for task in extract_tasks(import_model(model), target_from_name("znver4")) if task.rule == "gemm"]
    assert gemm.space.default()["mr"] == 12
    if missing := target_from_name("znver4").missing_on_host():
        pytest.skip(f"this host lacks {', '.join(missing)} to run the znver4 build")
    q = rng.standard_normal((1, 3, 197, 64)).astype(np.float32)
    k = rng.standard_normal((1, 3, 64, 208)).astype(np.float32)
    (s,) = InferenceSession(model, cache=False, target="znver4").run(None, {"q": q, "k": k})
    np.testing.assert_allclose(s, q.astype(np.float64) @ k.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(("cpu", "mr"), [("znver4", 7), ("x86-64-v3", 6)])
def test_batched_window_rows_take_wide_tiles_and_keep_the_numbers(cpu: str, mr: int) -> None:
    """A batched MatMul of 49 rows (a 7x7 window's pixels or tokens) by a weight: 7-row tiles on AVX-512, 6-row tiles
    and a tail row under the batch loop on AVX2 (one row at a time before), numpy's product (float64) within the
    tolerance."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 64, 32)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "window",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 49, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 49, 32])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    (gemm,) = [task for task in extract_tasks(import_model(model), target_from_name(cpu)) if task.rule == "gemm"]
    assert gemm.space.default()["mr"] == mr
    x = rng.standard_normal((4, 49, 64)).astype(np.float32)
    if missing := target_from_name(cpu).missing_on_host():
        pytest.skip(f"this host lacks {', '.join(missing)} to run the {cpu} build")
    (y,) = InferenceSession(model, cache=False, target=cpu).run(None, {"x": x})
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    "workload",
    [
        GemmWorkload("gemm_0", "i0", "i1", "k2", 3136, 64, 576, 1, 1, True, False),  # an im2col convolution
        GemmWorkload("gemm_0", "i0", "i1", "k2", 8, 4096, 4096, 1, 1, True, False),  # too few rows
        GemmWorkload("gemm_0", "i0", "i1", "k2", 1024, 1024, 1024, 1, 1, False, True),  # B not a weight
    ],
)
def test_default_keeps_the_k_i_j_order_elsewhere(workload: GemmWorkload) -> None:
    config = GEMM.default(workload, target_from_name("znver4"))
    assert (config["order"], config["mc"]) == ("k,i,j", 0)
    assert int(config["kc"]) <= 256


@pytest.mark.parametrize("trans_b", [True, False])
def test_a_classifier_of_1000_columns_is_padded_scheduled_and_exact(trans_b: bool) -> None:
    """`graph-pad-gemm-columns` (O3): 1000 classes pad to whole vectors, so the GEMM rule schedules the kernel (before,
    no vector width divided 1000 and it ran scalar); the 1000 real columns are B's products, bias added."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((1000, 64) if trans_b else (64, 1000)).astype(np.float32)
    bias = rng.standard_normal(1000).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=int(trans_b))],
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1000])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    (gemm,) = [task for task in extract_tasks(import_model(model), target_from_name("host")) if task.rule == "gemm"]
    assert {knob.name for knob in gemm.space.knobs} >= {"mr", "nr", "kc"}
    x = rng.standard_normal((1, 64)).astype(np.float32)
    (y,) = InferenceSession(model, cache=False).run(None, {"x": x})
    b64 = w.astype(np.float64).T if trans_b else w.astype(np.float64)
    np.testing.assert_allclose(y, x.astype(np.float64) @ b64 + bias, rtol=RTOL, atol=ATOL)


def test_a_matmul_head_of_an_odd_vocabulary_is_padded_scheduled_and_exact() -> None:
    """A language-model head (4 tokens x 64 @ 64 x 1003, B a weight): padded to whole vectors and scheduled (a
    32-token 256 x 50,257 head ran 148 ms scalar, 9.6 after, ONNX Runtime 6 ms); the real columns are exact."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((64, 1003)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "head",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1003])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    (gemm,) = [task for task in extract_tasks(import_model(model), target_from_name("host")) if task.rule == "gemm"]
    assert {knob.name for knob in gemm.space.knobs} >= {"mr", "nr", "kc"}
    x = rng.standard_normal((1, 4, 64)).astype(np.float32)
    (y,) = InferenceSession(model, cache=False).run(None, {"x": x})
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.astype(np.float64), rtol=RTOL, atol=ATOL)


def test_one_row_takes_the_whole_depth_in_one_block() -> None:
    """A batch-1 classifier (2048 -> 1024 columns) streams B once: no depth blocks, which would each dispatch the
    parallel column panels again (8 dispatches at `kc` 256) and zero the output first."""
    vector = GemmWorkload("gemm_0", "i0", "i1", "k2", 1, 1024, 2048, 1, 1, True, False)
    config = GEMM.default(vector, target_from_name("znver4"))
    assert config["kc"] == 2048
    assert GEMM.space(vector, target_from_name("znver4")).default() == config
    rows = GemmWorkload("gemm_0", "i0", "i1", "k2", 2, 1024, 2048, 1, 1, True, False)
    assert GEMM.default(rows, target_from_name("znver4"))["kc"] == 256
