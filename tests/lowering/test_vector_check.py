"""`check_in_place` tells whether the vector code of a `vectorize` loop can be generated without building it: it
raises what `expand_loops(vectors_only=True)` raises on a copy of the loop, passes where that passes, and declines
(False: copy it) where an unrolled loop's index scales the vector index (it differs between the copies), where a
loop in it is not a static unroll loop, or where its own trip count is a run-time value."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of
from minimlc.lowering.loop.expand import check_in_place, expand_loops
from minimlc.lowering.pipeline import make_context

KERNEL = """
func.func private @k_0(%a: memref<4x8xf32>, %b: memref<8xf32>, %m: memref<8xi1>, %n: index) {{
  %c2 = arith.constant 2 : index
  loop.for "j" %j = 0 to 8 step 1 vectorize {{
{body}
  }}
  func.return
}}
"""

STORE_Y = "\nmemref.store %y, %b[%j] : memref<8xf32>"

BODIES = {
    "contiguous": "%x = memref.load %b[%j] : memref<8xf32>\n%y = arith.mulf %x, %x : f32" + STORE_Y,
    "reduction": "%x = memref.load %b[%j] : memref<8xf32>\nmemref.store %x, %a[%c2, %c2] : memref<4x8xf32>",
    "gather": "%x = memref.load %b[%j] : memref<8xf32>\n%i = arith.fptoui %x : f32 to i32\n"
    "%k = arith.index_cast %i : i32 to index\n%y = memref.load %b[%k] : memref<8xf32>" + STORE_Y,
    "non_affine": "%k = arith.divui %j, %c2 : index\n%y = memref.load %b[%k] : memref<8xf32>" + STORE_Y,
    "scaled_by_value": "%k = arith.muli %j, %n : index\n%y = memref.load %b[%k] : memref<8xf32>" + STORE_Y,
    "libm": "%x = memref.load %b[%j] : memref<8xf32>\n%y = math.erf %x : f32" + STORE_Y,
    "bools": "%k = arith.muli %j, %c2 : index\n%x = memref.load %m[%k] : memref<8xi1>\n"
    "memref.store %x, %m[%j] : memref<8xi1>",
    "nested_serial": 'loop.for "s" %s = 0 to 2 step 1 serial {\n%x = memref.load %a[%s, %j] : memref<4x8xf32>\n'
    "memref.store %x, %b[%j] : memref<8xf32>\n}",
    "unrolled": 'loop.for "u" %u = 0 to 4 step 1 unroll {\n%x = memref.load %a[%u, %j] : memref<4x8xf32>\n'
    "%y = arith.mulf %x, %x : f32\nmemref.store %y, %a[%u, %j] : memref<4x8xf32>\n}",
    "unrolled_reduction": 'loop.for "u" %u = 0 to 4 step 1 unroll {\n%x = memref.load %a[%u, %j] : memref<4x8xf32>\n'
    "memref.store %x, %a[%u, %c2] : memref<4x8xf32>\n}",
    "unrolled_scale": 'loop.for "u" %u = 0 to 2 step 1 unroll {\n%k = arith.muli %j, %u : index\n'
    "%x = memref.load %b[%k] : memref<8xf32>\nmemref.store %x, %a[%u, %j] : memref<4x8xf32>\n}",
}


def _vectorize_loop(body: str) -> loop.ForOp:
    module = Parser(make_context(), KERNEL.format(body=body)).parse_module()
    (kernel,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return loops_of(kernel)[0]


def _by_copy(root: loop.ForOp) -> str | None:
    """What `expand_loops(vectors_only=True)` on a copy of `root` raises (None: it passes)."""
    trial = ModuleOp([root.clone()])
    try:
        expand_loops(trial, vectors_only=True)
    except DiagnosticException as error:
        return str(error)
    finally:
        trial.erase()
    return None


def _in_place(root: loop.ForOp) -> str | bool:
    try:
        return check_in_place(root)
    except DiagnosticException as error:
        return str(error)


@pytest.mark.parametrize("case", sorted(set(BODIES) - {"unrolled_scale", "nested_serial"}))
def test_the_check_in_place_raises_what_expanding_a_copy_raises(case: str) -> None:
    root = _vectorize_loop(BODIES[case])
    before = str(root)
    expected = _by_copy(root)
    assert _in_place(root) == (True if expected is None else expected)
    assert str(root) == before


def test_the_failures_are_the_expected_ones() -> None:
    passing = {case for case in BODIES if _by_copy(_vectorize_loop(BODIES[case])) is None}
    assert passing == {"contiguous", "unrolled", "unrolled_scale"}


@pytest.mark.parametrize("case", ["unrolled_scale", "nested_serial"])
def test_an_unrolled_index_scaling_the_vector_index_or_a_loop_not_unrolled_is_left_to_the_copy(case: str) -> None:
    assert check_in_place(_vectorize_loop(BODIES[case])) is False


def test_a_loop_with_a_run_time_trip_count_is_left_to_the_copy() -> None:
    dynamic = Parser(make_context(), KERNEL.format(body=BODIES["contiguous"]).replace("0 to 8", "0 to %n"))
    assert check_in_place(loops_of(dynamic.parse_module())[0]) is False
