// RUN: mini-opt %s -p 'loop-decompose-reduction{kernel=matmul_0}' | filecheck %s

// The scalar accumulator becomes the output: an `_init` nest zeroes it, the update nest adds in place.

builtin.module {
  func.func @main(%a: memref<4x8xf32>, %out0: memref<4x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<8x16xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x16xf32> {llvm.noalias}, %out: memref<4x16xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      loop.for "i1" %i1 = 0 to 16 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 8 step 1 serial {
          %1 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<8x16xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1] : memref<4x16xf32>
      }
    }
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%a: memref<4x8xf32>, %out0: memref<4x16xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %b = loop.weight "b" : memref<8x16xf32>
// CHECK-NEXT:     func.call @matmul_0(%a, %b, %out0) : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x16xf32> {llvm.noalias}, %out: memref<4x16xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i0_init" %i0_init = 0 to 4 step 1 serial {
// CHECK-NEXT:       loop.for "i1_init" %i1_init = 0 to 16 step 1 serial {
// CHECK-NEXT:         %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         memref.store %0, %out[%i0_init, %i1_init] : memref<4x16xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %i1 = 0 to 16 step 1 serial {
// CHECK-NEXT:         loop.for "k2" %k2 = 0 to 8 step 1 serial {
// CHECK-NEXT:           %1 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
// CHECK-NEXT:           %2 = memref.load %in1[%k2, %i1] : memref<8x16xf32>
// CHECK-NEXT:           %3 = arith.mulf %1, %2 fastmath<contract> : f32
// CHECK-NEXT:           %4 = memref.load %out[%i0, %i1] : memref<4x16xf32>
// CHECK-NEXT:           %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
// CHECK-NEXT:           memref.store %5, %out[%i0, %i1] : memref<4x16xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
