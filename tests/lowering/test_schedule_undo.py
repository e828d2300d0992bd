"""`default-schedule` applies a kernel's schedule once and undoes it where it does not lower (`apply_or_undo`): the
kernel, its call sites and the module's functions are then exactly as before, including what `loop-pack` did outside
the kernel (a packing function, `loop.precompute` at the calls); a schedule that lowers stays applied."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from minimlc.dialects import loop
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.schedule.default_schedule import apply_or_undo
from minimlc.lowering.target import set_target, target_from_name

GEMM = """
builtin.module {
  func.func @main(%x: memref<4x64xf32>, %y: memref<4x32xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<64x32xf32>
    func.call @gemm_0(%x, %w, %y) : (memref<4x64xf32>, memref<64x32xf32>, memref<4x32xf32>) -> ()
    func.return
  }
  func.func private @gemm_0(%a: memref<4x64xf32> {llvm.noalias}, %b: memref<64x32xf32> {llvm.noalias},
                            %c: memref<4x32xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 64 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<4x64xf32>
          %2 = memref.load %b[%k2, %i1] : memref<64x32xf32>
          %3 = arith.mulf %1, %2 : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<4x32xf32>
      }
    }
    func.return
  }
}
"""

PACK = "loop-pack{kernel=gemm_0 operand=1 dim=1 factor=16}"


def _module() -> ModuleOp:
    module = Parser(make_context(), GEMM).parse_module()
    set_target(module, target_from_name("x86-64-v3"))
    return module


def test_a_schedule_that_fails_after_packing_is_undone_inside_and_outside_the_kernel() -> None:
    module = _module()
    before = str(module)
    assert not apply_or_undo(make_context(), module, "gemm_0", [PACK, "loop-split{kernel=gemm_0 loop=k9 factor=2}"])
    assert str(module) == before
    module.verify()


def test_a_schedule_whose_vector_code_cannot_be_generated_is_undone() -> None:
    """Every step applies, but vectorizing the reduction loop `k2` stores a value that differs per lane to the one
    accumulator: found only when the vector code is generated, after the packing changed the call site."""
    module = _module()
    before = str(module)
    steps = ["loop-split{kernel=gemm_0 loop=i1 factor=16}", PACK, "loop-vectorize{kernel=gemm_0 loop=k2}"]
    assert not apply_or_undo(make_context(), module, "gemm_0", steps)
    assert str(module) == before


def test_a_schedule_that_lowers_stays_applied() -> None:
    module = _module()
    steps = [
        "loop-split{kernel=gemm_0 loop=i1 factor=16}",
        PACK,
        "loop-decompose-reduction{kernel=gemm_0}",
        "loop-reorder{kernel=gemm_0 order=i1_o,k2,i1_i}",
        "loop-vectorize{kernel=gemm_0 loop=i1_i}",
    ]
    assert apply_or_undo(make_context(), module, "gemm_0", steps)
    precomputes = [op for op in module.walk() if isinstance(op, loop.PrecomputeOp)]
    assert [op.kernel.root_reference.data for op in precomputes] == ["gemm_0_pack1"]
    assert 'loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize' in str(module)
