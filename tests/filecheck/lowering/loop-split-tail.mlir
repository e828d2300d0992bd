// RUN: mini-opt %s -p 'loop-split{kernel=k loop=i factor=4}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-split{kernel=k loop=i factor=11}' 2>&1 | filecheck %s --check-prefix=BAD

// 10 rows split by 4: i_o/i_i over the first 8, a peeled tail i_t over the last 2 (its loops renamed j_in_i_t).

builtin.module {
  func.func private @k(%out: memref<10x3xf32> {llvm.noalias}) {
    loop.for "i" %i = 0 to 10 step 1 serial {
      loop.for "j" %j = 0 to 3 step 1 serial {
        %0 = arith.constant 1.000000e+00 : f32
        memref.store %0, %out[%i, %j] : memref<10x3xf32>
      }
    }
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func private @k(%out: memref<10x3xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i_o" %i_o = 0 to 8 step 4 serial {
// CHECK-NEXT:       loop.for "i_i" %i_i = 0 to 4 step 1 serial {
// CHECK-NEXT:         %i = arith.addi %i_o, %i_i : index
// CHECK-NEXT:         loop.for "j" %j = 0 to 3 step 1 serial {
// CHECK-NEXT:           %0 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:           memref.store %0, %out[%i, %j] : memref<10x3xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i_t" %i_t = 8 to 10 step 1 serial {
// CHECK-NEXT:       loop.for "j_in_i_t" %j_in_i_t = 0 to 3 step 1 serial {
// CHECK-NEXT:         %1 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:         memref.store %1, %out[%i_t, %j_in_i_t] : memref<10x3xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// BAD: loop-split: factor 11 is not between 1 and the 10 iterations of loop 'i' in kernel 'k'
