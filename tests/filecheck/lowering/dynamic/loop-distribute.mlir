// RUN: mini-opt %s -p 'loop-distribute{kernel=matmul_0 loop=i0}' | filecheck %s

// A row's main part of 16-column panels and its remainder of columns (a split of a run-time column count), distributed
// into a loop over the rows each: the remainder's bounds, which do not depend on the row, go before both loops once;
// the row index `%i` is computed in each. Both nests write row i of %c only, so the distribution is legal.

builtin.module {
  func.func private @matmul_0(%a: memref<4x40xf32>, %b: memref<40x?xf32>, %c: memref<4x?xf32>, %m: index) {
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      %i = arith.addi %i0, %i0 : index
      %c16 = arith.constant 16 : index
      %rem = arith.remui %m, %c16 : index
      %main = arith.subi %m, %rem : index
      loop.for "j_o" %j_o = 0 to %main step 16 serial {
        loop.for "j_i" %j_i = 0 to 16 step 1 serial {
          %j = arith.addi %j_o, %j_i : index
          %0 = memref.load %a[%i, %j_i] : memref<4x40xf32>
          memref.store %0, %c[%i, %j] : memref<4x?xf32>
        }
      }
      loop.for "j_t" %j_t = 0 to %rem step 1 serial {
        %j = arith.addi %main, %j_t : index
        %1 = memref.load %a[%i, %j_t] : memref<4x40xf32>
        memref.store %1, %c[%i, %j] : memref<4x?xf32>
      }
    }
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func private @matmul_0(%a: memref<4x40xf32>, %b: memref<40x?xf32>, %c: memref<4x?xf32>, %m: index) {
// CHECK-NEXT:     %c16 = arith.constant 16 : index
// CHECK-NEXT:     %rem = arith.remui %m, %c16 : index
// CHECK-NEXT:     %main = arith.subi %m, %rem : index
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:       %i = arith.addi %i0, %i0 : index
// CHECK-NEXT:       loop.for "j_o" %j_o = 0 to %main step 16 serial {
// CHECK-NEXT:         loop.for "j_i" %j_i = 0 to 16 step 1 serial {
// CHECK-NEXT:           %j = arith.addi %j_o, %j_i : index
// CHECK-NEXT:           %0 = memref.load %a[%i, %j_i] : memref<4x40xf32>
// CHECK-NEXT:           memref.store %0, %c[%i, %j] : memref<4x?xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_d1" %i0_d1 = 0 to 4 step 1 serial {
// CHECK-NEXT:       %i_1 = arith.addi %i0_d1, %i0_d1 : index
// CHECK-NEXT:       loop.for "j_t" %j_t = 0 to %rem step 1 serial {
// CHECK-NEXT:         %j_1 = arith.addi %main, %j_t : index
// CHECK-NEXT:         %1 = memref.load %a[%i_1, %j_t] : memref<4x40xf32>
// CHECK-NEXT:         memref.store %1, %c[%i_1, %j_1] : memref<4x?xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
