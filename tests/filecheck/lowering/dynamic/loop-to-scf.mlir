// RUN: mini-opt %s -p loop-to-scf | filecheck %s

// A loop to a run-time bound becomes scf.for to that operand; a buffer with run-time sizes a memref.alloc with them;
// accesses to a buffer with a `?` below its outermost dimension go through its 1-D view at the row-major index;
// loop.extents is dropped. An outermost `?` alone (%rows) needs no rewriting.

func.func @add(%a: memref<?x?xf32>, %r: memref<?x8xf32>, %n: index, %m: index) {
  %x = loop.extents %a[%n, %m] : memref<?x?xf32>
  %rows = loop.extents %r[%n] : memref<?x8xf32>
  %t = loop.alloc "global" [%n, %m] : memref<?x?xf32>
  loop.for "i" %i = 0 to %n step 1 serial {
    loop.for "j" %j = 0 to %m step 1 serial {
      %u = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %u, %t[%i, %j] : memref<?x?xf32>
      loop.prefetch %x[%i, %j] : memref<?x?xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      %v = memref.load %rows[%i, %k] : memref<?x8xf32>
    }
  }
  func.return
}

// CHECK:      func.func @add(%a: memref<?x?xf32>, %r: memref<?x8xf32>, %n: index, %m: index) {
// CHECK-NEXT:   %x_flat = memref.collapse_shape %a {{\[\[}}0 : i64, 1 : i64]] : memref<?x?xf32> into memref<?xf32>
// CHECK-NEXT:   %t = memref.alloc(%n, %m) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK-NEXT:   %t_flat = memref.collapse_shape %t {{\[\[}}0 : i64, 1 : i64]] : memref<?x?xf32> into memref<?xf32>
// CHECK-NEXT:   %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:   %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:   scf.for %i = %{{.*}} to %n step %{{.*}} {
// CHECK:          scf.for %j = %{{.*}} to %m step %{{.*}} {
// CHECK-NEXT:       %[[ROW:.*]] = arith.muli %i, %m : index
// CHECK-NEXT:       %[[AT:.*]] = arith.addi %[[ROW]], %j : index
// CHECK-NEXT:       %u = memref.load %x_flat[%[[AT]]] : memref<?xf32>
// CHECK:            memref.store %u, %t_flat[%{{.*}}] : memref<?xf32>
// CHECK:            loop.prefetch %x_flat[%{{.*}}] : memref<?xf32>
// CHECK:          scf.for %k = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       %v = memref.load %r[%i, %k] : memref<?x8xf32>
// CHECK:        memref.dealloc %t : memref<?x?xf32>
// CHECK-NOT:    loop.extents
