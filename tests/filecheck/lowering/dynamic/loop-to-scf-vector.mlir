// RUN: mini-opt %s -p loop-to-scf | filecheck %s

// The vector code of a static loop inside a dynamic buffer: its vector.load/store are linearised too.

func.func @scale(%a: memref<?x?xf32>, %n: index, %m: index) {
  %x = loop.extents %a[%n, %m] : memref<?x?xf32>
  loop.for "i" %i = 0 to %n step 1 serial {
    loop.for "j" %j = 0 to 8 step 1 vectorize {
      %u = memref.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.addf %u, %u : f32
      memref.store %d, %x[%i, %j] : memref<?x?xf32>
    }
  }
  func.return
}

// CHECK:      %x_flat = memref.collapse_shape %a
// CHECK:      scf.for %i = %{{.*}} to %n step %{{.*}} {
// CHECK:        %[[ROW:.*]] = arith.muli %i, %m : index
// CHECK-NEXT:   %[[AT:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK-NEXT:   %{{.*}} = vector.load %x_flat[%[[AT]]] : memref<?xf32>, vector<8xf32>
// CHECK:        vector.store %{{.*}}, %x_flat[%{{.*}}] : memref<?xf32>, vector<8xf32>
