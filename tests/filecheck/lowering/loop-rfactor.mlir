// RUN: mini-opt %s -p 'loop-split{kernel=gemv_0 loop=k2 factor=4},loop-rfactor{kernel=gemv_0 loop=k2_o}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-rfactor{kernel=gemv_0 loop=i1}' 2>&1 | filecheck %s --check-prefix=SPATIAL
// RUN: not mini-opt %s -p 'loop-split{kernel=gemv_0 loop=k2 factor=4},loop-rfactor{kernel=gemv_0 loop=k2_i}' 2>&1 | filecheck %s --check-prefix=INNER

// A GEMV's depth of 10 split by 4: the two ranges k2_o reduce into partial rows [2, 1, 16] in a nest of their own
// (k2_o outermost, the spatial loops copied as i0_rf, i1_rf); the output's nest sums them over k2_o_r, then adds
// the tail k2_t. A spatial loop, or a depth loop inside the one that starts the sum, is refused.

builtin.module {
  func.func @main(%a: memref<1x10xf32>, %out0: memref<1x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<10x16xf32>
    func.call @gemv_0(%a, %b, %out0) : (memref<1x10xf32>, memref<10x16xf32>, memref<1x16xf32>) -> ()
    func.return
  }
  func.func private @gemv_0(%in0: memref<1x10xf32> {llvm.noalias}, %in1: memref<10x16xf32> {llvm.noalias}, %out: memref<1x16xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 16 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 10 step 1 serial {
          %1 = memref.load %in0[%i0, %k2] : memref<1x10xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<10x16xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1] : memref<1x16xf32>
      }
    }
    func.return
  }
}

// CHECK:        func.func private @gemv_0(%in0: memref<1x10xf32> {llvm.noalias}, %in1: memref<10x16xf32> {llvm.noalias}, %out: memref<1x16xf32> {llvm.noalias}) {
// CHECK-NEXT:     %partial = loop.alloc "local" : memref<2x1x16xf32>
// CHECK-NEXT:     %acc_rf = loop.alloc "local" : memref<f32>
// CHECK-NEXT:     %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:     loop.for "k2_o" %k2_o = 0 to 2 step 1 serial {
// CHECK-NEXT:       loop.for "i0_rf" %i0_rf = 0 to 1 step 1 serial {
// CHECK-NEXT:         loop.for "i1_rf" %i1_rf = 0 to 16 step 1 serial {
// CHECK-NEXT:           %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:           memref.store %0, %acc_rf[] : memref<f32>
// CHECK-NEXT:           %1 = arith.constant 4 : index
// CHECK-NEXT:           %k2_o_start = arith.muli %k2_o, %1 : index
// CHECK-NEXT:           loop.for "k2_i" %k2_i = 0 to 4 step 1 serial {
// CHECK-NEXT:             %k2 = arith.addi %k2_o_start, %k2_i : index
// CHECK-NEXT:             %2 = memref.load %in0[%i0_rf, %k2] : memref<1x10xf32>
// CHECK-NEXT:             %3 = memref.load %in1[%k2, %i1_rf] : memref<10x16xf32>
// CHECK-NEXT:             %4 = arith.mulf %2, %3 fastmath<contract> : f32
// CHECK-NEXT:             %5 = memref.load %acc_rf[] : memref<f32>
// CHECK-NEXT:             %6 = arith.addf %5, %4 fastmath<reassoc,contract> : f32
// CHECK-NEXT:             memref.store %6, %acc_rf[] : memref<f32>
// CHECK-NEXT:           }
// CHECK-NEXT:           %7 = memref.load %acc_rf[] : memref<f32>
// CHECK-NEXT:           memref.store %7, %partial[%k2_o, %i0_rf, %i1_rf] : memref<2x1x16xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %i1 = 0 to 16 step 1 serial {
// CHECK-NEXT:         %8 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         memref.store %8, %acc[] : memref<f32>
// CHECK-NEXT:         loop.for "k2_o_r" %k2_o_r = 0 to 2 step 1 serial {
// CHECK-NEXT:           %9 = memref.load %partial[%k2_o_r, %i0, %i1] : memref<2x1x16xf32>
// CHECK-NEXT:           %10 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:           %11 = arith.addf %10, %9 fastmath<reassoc,contract> : f32
// CHECK-NEXT:           memref.store %11, %acc[] : memref<f32>
// CHECK-NEXT:         }
// CHECK-NEXT:         loop.for "k2_t" %k2_t = 8 to 10 step 1 serial {
// CHECK-NEXT:           %12 = memref.load %in0[%i0, %k2_t] : memref<1x10xf32>
// CHECK-NEXT:           %13 = memref.load %in1[%k2_t, %i1] : memref<10x16xf32>
// CHECK-NEXT:           %14 = arith.mulf %12, %13 fastmath<contract> : f32
// CHECK-NEXT:           %15 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:           %16 = arith.addf %15, %14 fastmath<reassoc,contract> : f32
// CHECK-NEXT:           memref.store %16, %acc[] : memref<f32>
// CHECK-NEXT:         }
// CHECK-NEXT:         %17 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:         memref.store %17, %out[%i0, %i1] : memref<1x16xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// SPATIAL: loop-rfactor: loop 'i1' of kernel 'gemv_0' does not update one scalar accumulator: only a reduction loop can be factored
// INNER: loop-rfactor: loop 'k2_i' of kernel 'gemv_0' has no initial store of its accumulator before it
