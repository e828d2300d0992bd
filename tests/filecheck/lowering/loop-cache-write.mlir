// RUN: mini-opt %s -p 'loop-cache-write{kernel=matmul_0 loop=i1_o accumulate=true}' | filecheck %s

// Accumulate the 1x8 output tile of one `i1_o` iteration in a local tile, zeroed before and added to the output after.

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
// CHECK-NEXT:     %tile = loop.alloc "local" : memref<1x8xf32>
// CHECK-NEXT:     loop.for "i0_init" %i0_init = 0 to 4 step 1 serial {
// CHECK-NEXT:       loop.for "i1_init" %i1_init = 0 to 16 step 1 serial {
// CHECK-NEXT:         %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         memref.store %0, %out[%i0_init, %i1_init] : memref<4x16xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:       loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
// CHECK-NEXT:         loop.for "i1_o_ld0" %i1_o_ld0 = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "i1_o_ld1" %i1_o_ld1 = 0 to 8 step 1 serial {
// CHECK-NEXT:             %1 = arith.addi %i0, %i1_o_ld0 : index
// CHECK-NEXT:             %2 = arith.addi %i1_o, %i1_o_ld1 : index
// CHECK-NEXT:             %3 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:             memref.store %3, %tile[%i1_o_ld0, %i1_o_ld1] : memref<1x8xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:         loop.for "k2" %k2 = 0 to 8 step 1 serial {
// CHECK-NEXT:           loop.for "i1_i" %i1_i = 0 to 8 step 1 serial {
// CHECK-NEXT:             %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:             %4 = memref.load %in0[%i0, %k2] : memref<4x8xf32>
// CHECK-NEXT:             %5 = memref.load %in1[%k2, %i1] : memref<8x16xf32>
// CHECK-NEXT:             %6 = arith.mulf %4, %5 fastmath<contract> : f32
// CHECK-NEXT:             %7 = arith.constant 0 : index
// CHECK-NEXT:             %8 = memref.load %tile[%7, %i1_i] : memref<1x8xf32>
// CHECK-NEXT:             %9 = arith.addf %8, %6 fastmath<reassoc,contract> : f32
// CHECK-NEXT:             %10 = arith.constant 0 : index
// CHECK-NEXT:             memref.store %9, %tile[%10, %i1_i] : memref<1x8xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:         loop.for "i1_o_st0" %i1_o_st0 = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "i1_o_st1" %i1_o_st1 = 0 to 8 step 1 serial {
// CHECK-NEXT:             %11 = arith.addi %i0, %i1_o_st0 : index
// CHECK-NEXT:             %12 = arith.addi %i1_o, %i1_o_st1 : index
// CHECK-NEXT:             %13 = memref.load %tile[%i1_o_st0, %i1_o_st1] : memref<1x8xf32>
// CHECK-NEXT:             %14 = memref.load %out[%11, %12] : memref<4x16xf32>
// CHECK-NEXT:             %15 = arith.addf %14, %13 fastmath<reassoc,contract> : f32
// CHECK-NEXT:             memref.store %15, %out[%11, %12] : memref<4x16xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
