// RUN: mini-opt %s -p loop-to-scf | filecheck %s

// An unrolled op free of effects whose operands are the same in every iteration (%two, and %row, unused) is copied
// once, for the first iteration; the others use that copy. Loads and stores are copied per iteration. Inside a
// vectorize loop every op is copied per iteration: the product %p, used once per iteration, becomes one fma each.

builtin.module {
  func.func private @scale_0(%in0: memref<2x3xf32> {llvm.noalias}, %out: memref<2x3xf32> {llvm.noalias}) {
    loop.for "i" %i = 0 to 2 step 1 serial {
      loop.for "j" %j = 0 to 3 step 1 unroll {
        %two = arith.constant 2.000000e+00 : f32
        %row = arith.addi %i, %i : index
        %x = memref.load %in0[%i, %j] : memref<2x3xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i, %j] : memref<2x3xf32>
      }
    }
    func.return
  }
  func.func private @madd_0(%in0: memref<2x8xf32> {llvm.noalias}, %in1: memref<8xf32> {llvm.noalias}, %out: memref<2x8xf32> {llvm.noalias}) {
    loop.for "j" %j = 0 to 8 step 1 vectorize {
      %a = memref.load %in1[%j] : memref<8xf32>
      loop.for "u" %u = 0 to 2 step 1 unroll {
        %p = arith.mulf %a, %a fastmath<contract> : f32
        %x = memref.load %in0[%u, %j] : memref<2x8xf32>
        %s = arith.addf %p, %x fastmath<contract> : f32
        memref.store %s, %out[%u, %j] : memref<2x8xf32>
      }
    }
    func.return
  }
}

// CHECK-LABEL: func.func private @scale_0
// CHECK:         scf.for %i = %0 to %1 step %2 {
// CHECK-NEXT:      %3 = arith.constant 0 : index
// CHECK-NEXT:      %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %row = arith.addi %i, %i : index
// CHECK-NEXT:      %x = memref.load %in0[%i, %3] : memref<2x3xf32>
// CHECK-NEXT:      %y = arith.mulf %x, %two : f32
// CHECK-NEXT:      memref.store %y, %out[%i, %3] : memref<2x3xf32>
// CHECK-NEXT:      %4 = arith.constant 1 : index
// CHECK-NEXT:      %x_1 = memref.load %in0[%i, %4] : memref<2x3xf32>
// CHECK-NEXT:      %y_1 = arith.mulf %x_1, %two : f32
// CHECK-NEXT:      memref.store %y_1, %out[%i, %4] : memref<2x3xf32>
// CHECK-NEXT:      %5 = arith.constant 2 : index
// CHECK-NEXT:      %x_2 = memref.load %in0[%i, %5] : memref<2x3xf32>
// CHECK-NEXT:      %y_2 = arith.mulf %x_2, %two : f32
// CHECK-NEXT:      memref.store %y_2, %out[%i, %5] : memref<2x3xf32>
// CHECK-NEXT:    }

// CHECK-LABEL: func.func private @madd_0
// CHECK:         %1 = vector.load %in1[%0] : memref<8xf32>, vector<8xf32>
// CHECK:         %3 = vector.load %in0[%2, %0] : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT:    %4 = vector.fma %1, %1, %3 : vector<8xf32>
// CHECK-NEXT:    vector.store %4, %out[%2, %0] : memref<2x8xf32>, vector<8xf32>
// CHECK:         %6 = vector.load %in0[%5, %0] : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT:    %7 = vector.fma %1, %1, %6 : vector<8xf32>
