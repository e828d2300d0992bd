"""The GEMM rule's split-K GEMV (`split_k`, `loop-rfactor`): B read unpacked, each depth range reduced into a partial
row by its own parallel task, then summed. Configs keep the numbers (numpy in float64) with a depth that the ranges
divide and one that leaves a tail; the default takes it only for a GEMV whose weight exceeds the last-level cache, and
the knob appears only for GEMVs."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.lowering.schedule.default_schedule import kernel_space, schedule_kernel
from minimlc.lowering.schedule.gemm import GEMM, GemmWorkload, split_depth
from minimlc.lowering.schedule.kernel_analysis import kernels_of
from minimlc.lowering.target import Target, target_from_name, target_of

RTOL = ATOL = 1e-4
TARGET = "x86-64-v3"
"""A named CPU: its caches are the typical sizes (a 32 MiB last level), not the host's."""


def _gemv_model(weight: np.ndarray, bias: np.ndarray | None) -> onnx.ModelProto:
    """`y = x @ w` (`+ b` with a bias), x [1, depth]."""
    depth, width = weight.shape
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p" if bias is not None else "y"])]
    initializers = [numpy_helper.from_array(weight, "w")]
    if bias is not None:
        nodes.append(helper.make_node("Add", ["p", "b"], ["y"]))
        initializers.append(numpy_helper.from_array(bias, "b"))
    graph = helper.make_graph(
        nodes,
        "gemv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize(
    ("depth", "change", "split", "bias"),
    [
        (512, {"split_k": 8}, "factor=64}", False),  # 8 ranges of 64 rows
        (517, {"split_k": 8}, "factor=64}", True),  # 8 ranges of 64 rows, a tail of 5 the combining nest adds
        (1000, {"split_k": 32, "unroll": False}, "factor=16}", False),  # 62 ranges of 16 rows, a tail of 8
    ],
)
def test_split_k_matches_onnxruntime(depth: int, change: dict[str, object], split: str, bias: bool) -> None:
    """The split-K schedule, given as the kernel's schedule (`extra_passes` after the loop stage), at 1 and 2
    threads: the ranges are the parallel tasks; no packed copy of B is made."""
    rng = np.random.default_rng(depth)
    weight = rng.standard_normal((depth, 48)).astype(np.float32)
    model = _gemv_model(weight, rng.standard_normal(48).astype(np.float32) if bias else None)
    workload = GemmWorkload("matmul_0", "i0", "i1", "k2", m=1, n=48, k=depth, b_operand=1, b_dim=1,
                            b_is_weight=True, b_batched=False)  # fmt: skip
    target = target_from_name(TARGET)
    steps = GEMM.apply(workload, {**GEMM.default(workload, target), **change})
    assert steps[0] == f"loop-split{{kernel=matmul_0 loop=k2 {split}"
    assert "loop-rfactor{kernel=matmul_0 loop=k2_o}" in steps
    assert steps[-1] == "loop-parallel{kernel=matmul_0 loop=k2_o}"
    x = rng.standard_normal((1, depth)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )
    for threads in (1, 2):
        session = InferenceSession(model, num_threads=threads, target=TARGET, cache=False, extra_passes={"loop": steps})
        assert not session._model.precomputed
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=RTOL, atol=ATOL)


def test_parallel_placement_keeps_the_ranges_as_the_band() -> None:
    """With the rule's parallel depth ranges (each zeroing its own partial row first), placement adds no band inside
    them (their depth blocks accumulate into one partial row); the combining nest gets its own."""
    imported = import_model(_gemv_model(np.ones((512, 1024), np.float32), None))
    run_pipeline(imported.module, 3, stop_after="schedule")
    target = target_of(imported.module)
    (space,) = [s for k in kernels_of(imported.module) if (s := kernel_space(imported.module, k, target)) is not None]
    steps = schedule_kernel(make_context(), imported.module, space, {**space.space.default(), "split_k": 32})
    assert steps is not None
    assert [step for step in steps if step.startswith("loop-parallel")] == [
        "loop-parallel{kernel=matmul_0 loop=k2_o}",
        "loop-parallel{kernel=matmul_0 loop=i1}",
    ]


@pytest.mark.parametrize(("depth", "parts", "size"), [(65536, 32, 2048), (517, 8, 64), (1000, 32, 16), (100, 8, 8)])
def test_split_depth_leaves_the_fewest_rows_over(depth: int, parts: int, size: int) -> None:
    assert split_depth(depth, parts) == size
    assert split_depth(depth, parts) % 8 == 0


def _pinned(last_level_cache: int) -> Target:
    """The x86-64-v3 target with its last-level cache pinned to `last_level_cache` bytes."""
    named = target_from_name(TARGET)
    return dataclasses.replace(named, cache_bytes=(*named.cache_bytes[:2], last_level_cache))


def test_default_splits_only_a_gemv_whose_weight_exceeds_the_last_level_cache() -> None:
    gemv = GemmWorkload("k", "i0", "i1", "k2", m=1, n=512, k=4096, b_operand=1, b_dim=1, b_is_weight=True,
                        b_batched=False)  # fmt: skip
    weight_bytes = 4 * 4096 * 512
    streamed = GEMM.default(gemv, _pinned(weight_bytes // 2))
    assert (streamed["split_k"], streamed["pack"]) == (32, False)
    assert GEMM.space(gemv, _pinned(weight_bytes // 2)).fits(streamed)
    cached = GEMM.default(gemv, _pinned(weight_bytes * 2))
    assert (cached["split_k"], cached["pack"]) == (0, True)
    assert GEMM.space(gemv, _pinned(weight_bytes * 2)).fits(cached)
    knobs = {knob.name: knob.values for knob in GEMM.space(gemv, _pinned(weight_bytes)).knobs}
    assert knobs["split_k"] == (0, 8, 32, 128)
    # More than one row, B not a weight, or an i32 sum (the integer rule): no split_k knob at all (the knob space of
    # other GEMMs is unchanged).
    others = (dataclasses.replace(gemv, m=4), dataclasses.replace(gemv, b_is_weight=False))
    for other in (*others, dataclasses.replace(gemv, float_sum=False)):
        assert "split_k" not in {knob.name for knob in GEMM.space(other, _pinned(weight_bytes // 2)).knobs}


def test_split_k_choices_keep_the_partials_within_their_bound() -> None:
    """A 32000-column classifier: 8 ranges of partial rows (1,024,000 bytes) fit `RFACTOR_MAX_BYTES`, 32 would not;
    the default above the last-level cache takes the 8."""
    wide = GemmWorkload("k", "i0", "i1", "k2", m=1, n=32000, k=4096, b_operand=1, b_dim=1, b_is_weight=True,
                        b_batched=False)  # fmt: skip
    knobs = {knob.name: knob.values for knob in GEMM.space(wide, _pinned(1 << 20)).knobs}
    assert knobs["split_k"] == (0, 8)
    assert GEMM.default(wide, _pinned(1 << 20))["split_k"] == 8
