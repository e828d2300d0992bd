// RUN: mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k2 operand=1}' | filecheck %s
// RUN: mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k2 operand=1},loop-to-scf,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts' | filecheck %s --check-prefix=LLVM
// RUN: not mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k2 operand=5}' 2>&1 | filecheck %s --check-prefix=OPERAND
// RUN: not mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k2 operand=1 dim=3}' 2>&1 | filecheck %s --check-prefix=DIM
// RUN: not mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k2 operand=1 ahead=0}' 2>&1 | filecheck %s --check-prefix=AHEAD
// RUN: not mini-opt %s -p 'loop-prefetch{kernel=conv_0 loop=k9 operand=1}' 2>&1 | filecheck %s --check-prefix=LOOP

// A register tile (4 columns x 32 channels) over a packed weight of 3 panels of 32 channels: each step of the
// reduction loop k2 reads 32 floats (two cache lines) of panel p = i1_o / 32. The prefetches go at the head of k2's
// body, for panel p + 1 (the last panel prefetches itself), one per line, the tile loops at their first iteration.

builtin.module {
  func.func private @conv_0(%in0: memref<8x16xf32> {llvm.noalias}, %in1: memref<3x16x32xf32> {llvm.noalias}, %out: memref<8x96xf32> {llvm.noalias}) {
    loop.for "i1_o" %i1_o = 0 to 96 step 32 serial {
      loop.for "i0_o" %i0_o = 0 to 8 step 4 serial {
        loop.for "k2" %k2 = 0 to 16 step 1 serial {
          loop.for "i0_i" %i0_i = 0 to 4 step 1 unroll {
            loop.for "i1_i" %i1_i = 0 to 32 step 1 vectorize {
              %i0 = arith.addi %i0_o, %i0_i : index
              %i1 = arith.addi %i1_o, %i1_i : index
              %x = memref.load %in0[%i0, %k2] : memref<8x16xf32>
              %c32 = arith.constant 32 : index
              %p = arith.divui %i1_o, %c32 : index
              %w = memref.load %in1[%p, %k2, %i1_i] : memref<3x16x32xf32>
              %m = arith.mulf %x, %w fastmath<contract> : f32
              %o = memref.load %out[%i0, %i1] : memref<8x96xf32>
              %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
              memref.store %s, %out[%i0, %i1] : memref<8x96xf32>
            }
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      loop.for "k2" %k2 = 0 to 16 step 1 serial {
// CHECK-NEXT:   %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:   %[[P:.*]] = arith.divui %i1_o, %[[C32]] : index
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[P]], %[[ONE]] : index
// CHECK-NEXT:   %[[LAST:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[PANEL:.*]] = arith.minui %[[NEXT]], %[[LAST]] : index
// CHECK-NEXT:   loop.prefetch %in1[%[[PANEL]], %k2, %[[ZERO]]] : memref<3x16x32xf32>
// CHECK-NEXT:   %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK-NEXT:   %[[SECOND:.*]] = arith.addi %[[ZERO]], %[[SIXTEEN]] : index
// CHECK-NEXT:   loop.prefetch %in1[%[[PANEL]], %k2, %[[SECOND]]] : memref<3x16x32xf32>
// CHECK-NEXT:   loop.for "i0_i" %i0_i = 0 to 4 step 1 unroll {

// LLVM-COUNT-2: llvm.call_intrinsic "llvm.prefetch.p0"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
// LLVM-NOT:     loop.prefetch

// OPERAND: loop-prefetch: kernel 'conv_0' has 3 parameters, no operand 5
// DIM: loop-prefetch: operand 1 has rank 3, no dimension 3
// AHEAD: loop-prefetch: ahead must be at least 1, got 0
// LOOP: loop-prefetch: no loop named 'k9' in kernel 'conv_0' (loops: i1_o, i0_o, k2, i0_i, i1_i)
