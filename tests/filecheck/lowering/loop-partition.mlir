// RUN: mini-opt %s -p 'loop-partition{kernel=concat_0 loop=i1 points=3}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-partition{kernel=concat_0 loop=i1 points=3,3}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not mini-opt %s -p 'loop-partition{kernel=concat_0 loop=i1 points=8}' 2>&1 | filecheck %s --check-prefix=OUTSIDE
// RUN: not mini-opt %s -p 'loop-partition{kernel=concat_0 loop=q points=1}' 2>&1 | filecheck %s --check-prefix=LOOP

// A concatenation of a 2x3 and a 2x5 matrix along their last dimension, partitioned where the inputs meet: in
// `i1_p0` (0 to 3) the comparison is true and the clamp `minsi %i1, 2` is `%i1`, so only the first input's read
// remains; in `i1_p1` (3 to 8) the comparison is false and `maxsi (%i1 - 3), 0` is `%i1 - 3`. The unsigned
// comparison of the batch index is decided in both pieces (both sides non-negative). Points must be increasing and
// inside the loop.

builtin.module {
  func.func @main(%a: memref<2x3xf32>, %b: memref<2x5xf32>, %out0: memref<2x8xf32>) attributes {minimlc.entry} {
    func.call @concat_0(%a, %b, %out0) : (memref<2x3xf32>, memref<2x5xf32>, memref<2x8xf32>) -> ()
    func.return
  }
  func.func private @concat_0(%in0: memref<2x3xf32> {llvm.noalias}, %in1: memref<2x5xf32> {llvm.noalias}, %out: memref<2x8xf32> {llvm.noalias}) {
    loop.for "i0" %i0 = 0 to 2 step 1 serial {
      loop.for "i1" %i1 = 0 to 8 step 1 serial {
        %0 = arith.constant 2 : index
        %1 = arith.minsi %i1, %0 : index
        %2 = memref.load %in0[%i0, %1] : memref<2x3xf32>
        %3 = arith.constant 3 : index
        %4 = arith.subi %i1, %3 : index
        %5 = arith.constant 0 : index
        %6 = arith.maxsi %4, %5 : index
        %7 = memref.load %in1[%i0, %6] : memref<2x5xf32>
        %8 = arith.cmpi slt, %i1, %3 : index
        %9 = arith.select %8, %2, %7 : f32
        %10 = arith.cmpi ult, %i0, %0 : index
        %11 = arith.constant 0.000000e+00 : f32
        %12 = arith.select %10, %9, %11 : f32
        memref.store %12, %out[%i0, %i1] : memref<2x8xf32>
      }
    }
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%a: memref<2x3xf32>, %b: memref<2x5xf32>, %out0: memref<2x8xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     func.call @concat_0(%a, %b, %out0) : (memref<2x3xf32>, memref<2x5xf32>, memref<2x8xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @concat_0(%in0: memref<2x3xf32> {llvm.noalias}, %in1: memref<2x5xf32> {llvm.noalias}, %out: memref<2x8xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 2 step 1 serial {
// CHECK-NEXT:       loop.for "i1_p0" %i1_p0 = 0 to 3 step 1 serial {
// CHECK-NEXT:         %0 = memref.load %in0[%i0, %i1_p0] : memref<2x3xf32>
// CHECK-NEXT:         memref.store %0, %out[%i0, %i1_p0] : memref<2x8xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:       loop.for "i1_p1" %i1_p1 = 3 to 8 step 1 serial {
// CHECK-NEXT:         %1 = arith.constant 3 : index
// CHECK-NEXT:         %2 = arith.subi %i1_p1, %1 : index
// CHECK-NEXT:         %3 = memref.load %in1[%i0, %2] : memref<2x5xf32>
// CHECK-NEXT:         memref.store %3, %out[%i0, %i1_p1] : memref<2x8xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ORDER: loop-partition: points 3, 3 are not increasing steps strictly inside loop 'i1' (0 to 8 step 1) of kernel 'concat_0'
// OUTSIDE: loop-partition: points 8 are not increasing steps strictly inside loop 'i1' (0 to 8 step 1) of kernel 'concat_0'
// LOOP: loop-partition: no loop named 'q' in kernel 'concat_0' (loops: i0, i1)
