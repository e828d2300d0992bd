"""What lowering copies less of: `unroll` moves the body into the last iteration instead of copying it, index
constants come from one cached attribute, and default-schedule's vector-code check (`check_vector_code`) copies only
the loops `expand_loops` would rewrite or refuse, leaving the kernel (and its values' uses) as they were; a schedule
step is configured from its text once for every kernel it may name (`apply_steps`)."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.loop.analysis import index_constant_op, loops_of, walk_ops
from minimlc.lowering.loop.expand import unroll
from minimlc.lowering.pipeline import _configured, make_context, run_passes
from minimlc.lowering.schedule.default_schedule import apply_steps, check_vector_code

KERNEL = """
builtin.module {
  func.func private @k(%a: memref<4x8xf32>, %s: memref<4xf32>, %n: index) {
    loop.for "i" %i = 0 to 4 step 1 serial {
      loop.for "j" %j = 0 to UPPER step 1 KIND {
        %x = memref.load %a[%i, %j] : memref<4x8xf32>
        %y = arith.addf %x, %x : f32
        STORE
      }
    }
    func.return
  }
}
"""
ROW_STORE = "memref.store %y, %a[%i, %j] : memref<4x8xf32>"
SUM_STORE = "memref.store %y, %s[%i] : memref<4xf32>"  # one address for every lane: a reduction


def _kernel(kind: str = "vectorize", store: str = ROW_STORE, upper: str = "8") -> tuple[ModuleOp, func.FuncOp]:
    text = KERNEL.replace("KIND", kind).replace("STORE", store).replace("UPPER", upper)
    module = Parser(make_context(), text).parse_module()
    kernel = next(iter(module.ops))
    assert isinstance(kernel, func.FuncOp)
    return module, kernel


def _use_counts(kernel: func.FuncOp) -> list[int]:
    values = [*kernel.body.block.args, *(result for op in walk_ops(kernel) for result in op.results)]
    return [len(list(value.uses)) for value in values]


def test_index_constant_op_is_the_constant_arith_builds() -> None:
    built = index_constant_op(7)
    built.verify()
    assert str(built) == str(arith.ConstantOp(IntegerAttr(7, IndexType())))
    assert index_constant_op(7).value is built.value  # one attribute per value


def test_unroll_copies_all_but_the_last_iteration_which_takes_the_body() -> None:
    module, kernel = _kernel(kind="unroll")
    inner = loops_of(kernel)[1]
    body = list(inner.body.block.ops)
    unroll(inner)
    outer = loops_of(kernel)[0]
    ops = list(outer.body.block.ops)
    assert len(ops) == 8 * (1 + len(body))  # a constant and a body copy per iteration
    assert ops[-len(body) :] == body  # the last copy is the body itself
    constants = [op.value.value.data for op in ops if isinstance(op, arith.ConstantOp)]
    assert constants == list(range(8))
    last_index = ops[-len(body) - 1]
    assert body[0].operands[2] is last_index.result  # memref.load %a[%i, %c7]
    assert "%j" not in str(module)  # the last constant is not named after the loop index
    module.verify()


def test_check_vector_code_accepts_a_row_and_leaves_the_kernel_as_it_was() -> None:
    module, kernel = _kernel()
    before, uses = str(module), _use_counts(kernel)
    check_vector_code(module, kernel)
    assert str(module) == before
    assert _use_counts(kernel) == uses


def test_check_vector_code_refuses_a_reduction_and_leaves_the_kernel_as_it_was() -> None:
    module, kernel = _kernel(store=SUM_STORE)
    before, uses = str(module), _use_counts(kernel)
    with pytest.raises(DiagnosticException, match=r"cannot vectorize loop 'j': 'memref\.store' stores a value"):
        check_vector_code(module, kernel)
    assert str(module) == before
    assert _use_counts(kernel) == uses


def test_check_vector_code_refuses_unrolling_a_run_time_trip_count() -> None:
    module, kernel = _kernel(kind="unroll", upper="%n")
    with pytest.raises(DiagnosticException, match="cannot unroll loop 'j': its trip count is a run-time value"):
        check_vector_code(module, kernel)


def test_check_vector_code_ignores_static_unrolling_outside_vector_loops() -> None:
    module, kernel = _kernel(kind="unroll", store=SUM_STORE)  # unrolled, not vectorized: nothing to check
    before = str(module)
    check_vector_code(module, kernel)
    assert str(module) == before


TWO_KERNELS = """
builtin.module {
  func.func private @k0(%a: memref<8xf32>) {
    loop.for "i" %i = 0 to 8 step 1 serial {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
    }
    func.return
  }
  func.func private @k0_b(%a: memref<8xf32>) {
    loop.for "i" %i = 0 to 8 step 1 serial {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
    }
    func.return
  }
}
"""


def test_apply_steps_configures_a_step_once_for_every_kernel_and_applies_what_run_passes_does() -> None:
    steps = [f"loop-split{{kernel={name} loop=i factor=4}}" for name in ("k0", "k0_b")] + ["cse"]
    expected = Parser(make_context(), TWO_KERNELS).parse_module()
    run_passes(expected, steps)
    module = Parser(make_context(), TWO_KERNELS).parse_module()
    hits = _configured.cache_info().hits
    apply_steps(make_context(), module, steps)
    assert str(module) == str(expected)
    assert 'loop.for "i_i" %i_i = 0 to 4 step 1 serial' in str(module)
    assert _configured.cache_info().hits >= hits + 1  # k0_b's step is k0's but for the name


def test_apply_steps_names_an_unknown_pass_or_a_missing_kernel() -> None:
    module = Parser(make_context(), TWO_KERNELS).parse_module()
    with pytest.raises(ValueError, match="unknown pass 'loop-nope'"):
        apply_steps(make_context(), module, ["loop-nope{kernel=k0}"])
    with pytest.raises(DiagnosticException, match="loop-split: no kernel named 'k9'"):
        apply_steps(make_context(), module, ["loop-split{kernel=k9 loop=i factor=4}"])
