// RUN: mini-opt %s -p 'loop-pack{kernel=matmul_0 operand=1 dim=1 factor=8}' | filecheck %s

// Pack the weight B (8x16) into 2 panels of 8 columns at load time: reads become `Bp[j_o / 8, k, j_i]`.

builtin.module {
  func.func @main(%a: memref<4x8xf32>, %out0: memref<4x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<8x16xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x16xf32> {llvm.noalias}, %out: memref<4x16xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
        loop.for "i1_i" %i1_i = 0 to 8 step 1 serial {
          %i1 = arith.addi %i1_o, %i1_i : index
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
    }
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%a: memref<4x8xf32>, %out0: memref<4x16xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %b = loop.weight "b" : memref<8x16xf32>
// CHECK-NEXT:     %b_packed = loop.precompute @matmul_0_pack1(%b) : (memref<8x16xf32>) -> memref<2x8x8xf32>
// CHECK-NEXT:     func.call @matmul_0(%a, %b_packed, %out0) : (memref<4x8xf32>, memref<2x8x8xf32>, memref<4x16xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<2x8x8xf32> {llvm.noalias}, %out: memref<4x16xf32> {llvm.noalias}) {
// CHECK-NEXT:     %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:       loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
// CHECK-NEXT:         loop.for "i1_i" %i1_i = 0 to 8 step 1 serial {
// CHECK-NEXT:           %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:           %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:           memref.store %0, %acc[] : memref<f32>
// CHECK-NEXT:           loop.for "k2" %k2 = 0 to 8 step 1 serial {
// CHECK-NEXT:             %1 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
// CHECK-NEXT:             %2 = arith.constant 8 : index
// CHECK-NEXT:             %3 = arith.divui %i1_o, %2 : index
// CHECK-NEXT:             %4 = memref.load %in1[%3, %k2, %i1_i] : memref<2x8x8xf32>
// CHECK-NEXT:             %5 = arith.mulf %1, %4 fastmath<contract> : f32
// CHECK-NEXT:             %6 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:             %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
// CHECK-NEXT:             memref.store %7, %acc[] : memref<f32>
// CHECK-NEXT:           }
// CHECK-NEXT:           %8 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:           memref.store %8, %out[%i0, %i1] : memref<4x16xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @matmul_0_pack1(%in0: memref<8x16xf32>, %out: memref<2x8x8xf32>) {
// CHECK-NEXT:     loop.for "p0" %p0 = 0 to 2 step 1 serial {
// CHECK-NEXT:       loop.for "p1" %p1 = 0 to 8 step 1 serial {
// CHECK-NEXT:         loop.for "p2" %p2 = 0 to 8 step 1 serial {
// CHECK-NEXT:           %0 = arith.constant 8 : index
// CHECK-NEXT:           %1 = arith.muli %p0, %0 : index
// CHECK-NEXT:           %2 = arith.addi %1, %p2 : index
// CHECK-NEXT:           %3 = memref.load %in0[%p1, %2] : memref<8x16xf32>
// CHECK-NEXT:           memref.store %3, %out[%p0, %p1, %p2] : memref<2x8x8xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
