// RUN: mini-opt %s -p loop-to-scf | filecheck %s

// A per-channel operand of shape [C, 1, 1] (a broadcast batch-norm scale) read at [c, 0, 0] in a vectorized loop
// over c is one contiguous vector load: its trailing dimensions of extent 1 do not move. Subtracting a constant from
// the loop index keeps it affine (the second input of a concatenation, read at c - 16).
func.func private @scale_0(%in0: memref<32xf32>, %in1: memref<16x1x1xf32>, %out: memref<32xf32>) {
  loop.for "c_o" %c_o = 16 to 32 step 16 serial {
    loop.for "c_i" %c_i = 0 to 16 step 1 vectorize {
      %c = arith.addi %c_o, %c_i : index
      %0 = arith.constant 16 : index
      %1 = arith.subi %c, %0 : index
      %2 = arith.constant 0 : index
      %3 = memref.load %in0[%c] : memref<32xf32>
      %4 = memref.load %in1[%1, %2, %2] : memref<16x1x1xf32>
      %5 = arith.mulf %3, %4 : f32
      memref.store %5, %out[%c] : memref<32xf32>
    }
  }
  func.return
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func private @scale_0(%in0: memref<32xf32>, %in1: memref<16x1x1xf32>, %out: memref<32xf32>) {
// CHECK-NEXT:     %0 = arith.constant 16 : index
// CHECK-NEXT:     %1 = arith.constant 32 : index
// CHECK-NEXT:     %2 = arith.constant 16 : index
// CHECK-NEXT:     scf.for %c_o = %0 to %1 step %2 {
// CHECK-NEXT:       %3 = arith.constant 0 : index
// CHECK-NEXT:       %c = arith.addi %c_o, %3 : index
// CHECK-NEXT:       %4 = arith.constant 16 : index
// CHECK-NEXT:       %5 = arith.subi %c, %4 : index
// CHECK-NEXT:       %6 = arith.constant 0 : index
// CHECK-NEXT:       %7 = vector.load %in0[%c] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:       %8 = vector.load %in1[%5, %6, %6] : memref<16x1x1xf32>, vector<16xf32>
// CHECK-NEXT:       %9 = arith.mulf %7, %8 : vector<16xf32>
// CHECK-NEXT:       vector.store %9, %out[%c] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
