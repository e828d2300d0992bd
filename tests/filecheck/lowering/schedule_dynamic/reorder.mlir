// RUN: mini-opt %s -p 'loop-reorder{kernel=half_0 order=j,i}' | filecheck %s
// RUN: mini-opt %s -p 'loop-tile{kernel=rows_0 loops=i,j sizes=4,8}' | filecheck %s --check-prefix=TILE
// RUN: not mini-opt %s -p 'loop-split{kernel=half_0 loop=j factor=8},loop-reorder{kernel=half_0 order=j_o,i,j_i}' 2>&1 | filecheck %s --check-prefix=REMAINDER
// RUN: not mini-opt %s -p 'loop-reorder{kernel=tri_0 order=j,i}' 2>&1 | filecheck %s --check-prefix=TRIANGLE

// loop-reorder and loop-tile keep run-time bounds. @half_0's inner loop runs to n / 2, computed between the loops:
// that arithmetic moves in front of the nest, so the loop can become the outer one. @rows_0's dynamic rows tile
// with a remainder of rows after the tiles. A split of a dynamic inner loop leaves its remainder beside the main
// loop, inside the outer one: the nest is no longer perfect. A bound that depends on an index of the nest (a
// triangle) cannot be reordered.

builtin.module {
  func.func private @half_0(%in0: memref<4x?xf32>, %out: memref<4x?xf32>, %n: index) {
    %x = loop.extents %in0[%n] : memref<4x?xf32>
    %y = loop.extents %out[%n] : memref<4x?xf32>
    loop.for "i" %i = 0 to 4 step 1 serial {
      %c2 = arith.constant 2 : index
      %half = arith.divui %n, %c2 : index
      loop.for "j" %j = 0 to %half step 1 serial {
        %0 = memref.load %x[%i, %j] : memref<4x?xf32>
        %1 = arith.addf %0, %0 : f32
        memref.store %1, %y[%i, %j] : memref<4x?xf32>
      }
    }
    func.return
  }
  func.func private @rows_0(%in0: memref<?x16xf32>, %out: memref<?x16xf32>, %n: index) {
    %x = loop.extents %in0[%n] : memref<?x16xf32>
    %y = loop.extents %out[%n] : memref<?x16xf32>
    loop.for "i" %i = 0 to %n step 1 serial {
      loop.for "j" %j = 0 to 16 step 1 serial {
        %0 = memref.load %x[%i, %j] : memref<?x16xf32>
        memref.store %0, %y[%i, %j] : memref<?x16xf32>
      }
    }
    func.return
  }
  func.func private @tri_0(%out: memref<8x8xf32>) {
    loop.for "i" %i = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to %i step 1 serial {
        %0 = arith.constant 1.000000e+00 : f32
        memref.store %0, %out[%i, %j] : memref<8x8xf32>
      }
    }
    func.return
  }
}

// CHECK:      %y = loop.extents %out[%n] : memref<4x?xf32>
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %half = arith.divui %n, %c2 : index
// CHECK-NEXT: loop.for "j" %j = 0 to %half step 1 serial {
// CHECK-NEXT:   loop.for "i" %i = 0 to 4 step 1 serial {
// CHECK-NEXT:     %0 = memref.load %x[%i, %j] : memref<4x?xf32>

// TILE:      %i_rem = arith.remui %n, %0 : index
// TILE-NEXT: %i_main = arith.subi %n, %i_rem : index
// TILE-NEXT: loop.for "i_o" %i_o = 0 to %i_main step 4 serial {
// TILE-NEXT:   loop.for "j_o" %j_o = 0 to 16 step 8 serial {
// TILE-NEXT:     loop.for "i_i" %i_i = 0 to 4 step 1 serial {
// TILE-NEXT:       loop.for "j_i" %j_i = 0 to 8 step 1 serial {
// TILE:      loop.for "i_t" %i_t = 0 to %i_rem step 1 serial {
// TILE-NEXT:   %i_1 = arith.addi %i_main, %i_t : index
// TILE-NEXT:   loop.for "j_in_i_t" %j_in_i_t = 0 to 16 step 1 serial {

// REMAINDER: loop-reorder: loops 'i' and 'j_o' of kernel 'half_0' are not perfectly nested: loop 'j_t' lies beside them

// TRIANGLE: loop-reorder: the run-time upper bound of loop 'j' of kernel 'tri_0' depends on an index of the nest: its loops cannot be reordered
