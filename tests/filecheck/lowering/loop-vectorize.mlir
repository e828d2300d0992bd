// RUN: mini-opt %s -p 'loop-vectorize{kernel=matmul_0 loop=i1_i}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-vectorize{kernel=matmul_0 loop=i1_o}' 2>&1 | filecheck %s --check-prefix=OUTER

// Mark `i1_i` (8 iterations, from 0, step 1, innermost) for vector code generation. A loop holding other loops (but
// unrolled ones) is refused, naming the innermost loop.

builtin.module {
  func.func @main(%a: memref<4x8xf32>, %out0: memref<4x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<8x16xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x16xf32> {llvm.noalias}, %out: memref<4x16xf32> {llvm.noalias}) {
    loop.for "i0_init" %i0_init = 0 to 4 step 1 serial {
      loop.for "i1_init" %i1_init = 0 to 16 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %out[%i0_init, %i1_init] : memref<4x16xf32>
      }
    }
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
        loop.for "k2" %k2 = 0 to 8 step 1 serial {
          loop.for "i1_i" %i1_i = 0 to 8 step 1 serial {
            %i1 = arith.addi %i1_o, %i1_i : index
            %1 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
            %2 = memref.load %in1[%k2, %i1] : memref<8x16xf32>
            %3 = arith.mulf %1, %2 fastmath<contract> : f32
            %4 = memref.load %out[%i0, %i1] : memref<4x16xf32>
            %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
            memref.store %5, %out[%i0, %i1] : memref<4x16xf32>
          }
        }
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
// CHECK-NEXT:       loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
// CHECK-NEXT:         loop.for "k2" %k2 = 0 to 8 step 1 serial {
// CHECK-NEXT:           loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:             %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:             %1 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
// CHECK-NEXT:             %2 = memref.load %in1[%k2, %i1] : memref<8x16xf32>
// CHECK-NEXT:             %3 = arith.mulf %1, %2 fastmath<contract> : f32
// CHECK-NEXT:             %4 = memref.load %out[%i0, %i1] : memref<4x16xf32>
// CHECK-NEXT:             %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
// CHECK-NEXT:             memref.store %5, %out[%i0, %i1] : memref<4x16xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// OUTER: loop-vectorize: loop 'i1_o' is not innermost (it holds loop 'k2'); only the innermost loop can be vectorized: 'i1_i'
