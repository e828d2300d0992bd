"""loop-plan-memory with run-time sizes: one arena per run, buffers alive together never overlap at any size.

The slot assignment is checked on its own, then the pass on random functions: the arena's index arithmetic is
evaluated at several run-time sizes (0 included), and no two buffers alive at the same op may share a byte. Then a
model with a symbolic batch, against ONNX Runtime at batch 1, 5, 17 and 0 from one session, with one allocation per
run for all its intermediates.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.dialects import loop
from minimlc.frontend.onnx import import_model
from minimlc.lowering.abi import entry_function
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.lowering.program.arena_slots import Lifetime, assign_slots
from minimlc.lowering.program.loop_plan_memory import ALIGNMENT, LoopPlanMemoryPass

RTOL, ATOL = 1e-5, 1e-5


@pytest.mark.parametrize("seed", range(20))
def test_a_slots_buffers_are_never_alive_together(seed: int) -> None:
    rng = random.Random(seed)
    lifetimes, keys = [], []
    for _ in range(rng.randint(1, 30)):
        start = rng.randint(0, 40)
        lifetimes.append(Lifetime(rng.choice([4, 12, 64, 3072]), start, start + rng.randint(0, 6)))
        keys.append(rng.choice(["n", "m", "nm"]))
    numbers, slots = assign_slots(lifetimes, keys)
    for (first, a), (second, b) in itertools.combinations(enumerate(lifetimes), 2):
        if numbers[first] == numbers[second]:
            assert a.end < b.start or b.end < a.start, f"{a} and {b} share slot {numbers[first]}"
    for lifetime, key, number in zip(lifetimes, keys, numbers):
        assert slots[number].terms[key] >= lifetime.size
    most_alive = max(sum(item.start <= at <= item.end for item in lifetimes) for at in range(47))
    assert len(slots) == most_alive  # sorted by start, a free slot is always reused: as few slots as possible


def test_a_free_slot_with_the_same_sizes_is_preferred() -> None:
    # a (n) and b (m) are alive together; c (n) starts when both are dead: it joins a's slot, adding no maxui.
    lifetimes = [Lifetime(64, 0, 1), Lifetime(64, 1, 2), Lifetime(128, 3, 4)]
    numbers, slots = assign_slots(lifetimes, ["m", "n", "n"])
    assert numbers == [0, 1, 1]
    assert [slot.terms for slot in slots] == [{"m": 64}, {"n": 128}]


# The pass on random functions of buffers with static and run-time sizes.

SHAPES = [("[%n]", "?x3xf32"), ("[%n]", "?x16xf32"), ("[%m]", "?xi8"), ("[%n, %m]", "?x?xf64"), ("", "5xf32")]


def random_function(rng: random.Random) -> str:
    """@f(%n, %m): buffers of SHAPES, each used by calls at a random first and last step."""
    count = rng.randint(1, 12)
    spans = [sorted(rng.sample(range(16), 2)) for _ in range(count)]
    lines, declarations = [], []
    for index in range(count):
        sizes, type = rng.choice(SHAPES)
        lines.append(f'  %b{index} = loop.alloc "global" {sizes} : memref<{type}>')
        declarations.append(f"func.func private @use{index}(%b: memref<{type}>)")
    for step in range(16):
        for index, span in enumerate(spans):
            if step in span:
                type = lines[index].rsplit(": ", 1)[1]
                lines.append(f"  func.call @use{index}(%b{index}) : ({type}) -> ()")
    body = "\n".join(lines)
    return f"func.func @f(%n: index, %m: index) {{\n{body}\n  func.return\n}}\n" + "\n".join(declarations)


def evaluate(ops: list[Operation], values: dict[SSAValue, int]) -> None:
    """The index arithmetic the pass emits, on Python integers."""
    binary = {arith.MuliOp: int.__mul__, arith.AddiOp: int.__add__, arith.AndIOp: int.__and__, arith.MaxUIOp: max}
    for op in ops:
        if isinstance(op, arith.ConstantOp):
            assert isinstance(op.value, IntegerAttr)
            values[op.result] = op.value.value.data
        elif type(op) in binary:
            values[op.results[0]] = binary[type(op)](values[op.operands[0]], values[op.operands[1]])


def byte_size(view: memref.ViewOp, values: dict[SSAValue, int]) -> int:
    assert isinstance(view.result.type, MemRefType)
    sizes = iter(values[size] for size in view.sizes)
    element = {"f32": 4, "f64": 8, "i8": 1}[str(view.result.type.element_type)]
    return element * math.prod(next(sizes) if dim < 0 else dim for dim in view.result.type.get_shape())


@pytest.mark.parametrize("seed", range(12))
def test_buffers_alive_together_never_overlap_at_any_size(seed: int) -> None:
    rng = random.Random(seed)
    module = Parser(make_context(), random_function(rng)).parse_module()
    LoopPlanMemoryPass().apply(make_context(), module)
    module.verify()
    function = next(op for op in module.ops if op.sym_name.data == "f")  # type: ignore[attr-defined]
    body = list(function.body.block.ops)
    arenas = [op for op in body if isinstance(op, loop.AllocOp)]
    assert len(arenas) == 1  # every buffer in the one arena
    views = [op for op in body if isinstance(op, memref.ViewOp)]
    spans = [[body.index(use.operation) for use in view.result.uses] for view in views]
    for n, m in [(0, 0), (1, 7), (5, 0), (17, 3), (rng.randint(0, 99), rng.randint(0, 99))]:
        values: dict[SSAValue, int] = dict(zip(function.body.block.args, (n, m)))
        evaluate(body, values)
        (total,) = [values[size] for size in arenas[0].dynamic_sizes] or arenas[0].result.type.get_shape()
        places = [(values[view.byte_shift], byte_size(view, values)) for view in views]
        for offset, size in places:
            assert offset % ALIGNMENT == 0
            assert offset + size <= total
        for (first, (a, a_size)), (second, (b, b_size)) in itertools.combinations(enumerate(places), 2):
            alive_together = min(spans[first]) <= max(spans[second]) and min(spans[second]) <= max(spans[first])
            disjoint = a + a_size <= b or b + b_size <= a or 0 in (a_size, b_size)
            assert not alive_together or disjoint, f"n={n}, m={m}: {views[first]} overlaps {views[second]}"


# A model with a symbolic batch.


def symbolic_batch_model() -> onnx.ModelProto:
    """out = tanh(softmax(relu(x @ w1) @ w2) + x) * softmax(...): x [batch, 16]. Intermediates of 32 and 16
    columns; the softmax's is alive until the end (overlapping all after it), the others die one kernel later."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    w2 = rng.standard_normal((32, 16)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["c"]),
        helper.make_node("Softmax", ["c"], ["s"], axis=-1),
        helper.make_node("Add", ["s", "x"], ["d"]),
        helper.make_node("Tanh", ["d"], ["e"]),
        helper.make_node("Mul", ["e", "s"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "symbolic_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 16])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_time_allocations(opt_level: int) -> tuple[int, int]:
    """The `aligned_alloc` and `free` calls of the model's lowered entry at `opt_level`."""
    module = import_model(symbolic_batch_model(), symbolic=True).module
    run_pipeline(module, opt_level)
    entry = entry_function(module)
    assert isinstance(entry, llvm.FuncOp)
    callees = [op.callee.string_value() for op in entry.walk() if isinstance(op, llvm.CallOp) and op.callee]
    return callees.count("aligned_alloc"), callees.count("free")


@pytest.mark.parametrize("opt_level", [1, 3])
def test_a_symbolic_batch_runs_from_one_arena_per_run(opt_level: int) -> None:
    session = InferenceSession(symbolic_batch_model(), num_threads=2, opt_level=opt_level)
    oracle = ort.InferenceSession(symbolic_batch_model().SerializeToString())
    for batch in (1, 5, 17, 0, 5):
        feed = {"x": np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)}
        (actual,) = session.run(None, feed)
        assert actual.shape == (batch, 16)
        np.testing.assert_allclose(actual, oracle.run(None, feed)[0], rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1
    assert "symbolic_fallback" not in session.stats
    assert session.stats["arena_bytes"] == session.stats["intermediate_bytes"] == 0  # no static intermediates
    assert run_time_allocations(opt_level) == (1, 1)


def test_without_planning_every_intermediate_is_its_own_allocation() -> None:
    allocations, frees = run_time_allocations(0)
    assert allocations == frees >= 6
