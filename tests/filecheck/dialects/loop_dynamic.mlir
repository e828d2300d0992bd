// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

// Run-time extents at the loop level: a loop bound, a buffer's sizes and a parameter's extents are index values.

func.func @dynamic(%a: memref<?x?xf32>, %n: index, %s: index) {
  %x = loop.extents %a[%n, %s] : memref<?x?xf32>
  %t = loop.alloc "global" [%n] : memref<?x768xf32>
  %u = loop.alloc "global" [%n, %s] : memref<?x4x?xf32>
  %v = loop.alloc "global" : memref<4x768xf32>
  loop.for "i" %i = 0 to %n step 4 parallel {
    loop.for "j" %j = 2 to %s step 1 serial {
      %e = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %e, %t[%i, %j] : memref<?x768xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 vectorize {
    }
  }
  func.return
}

// CHECK:      func.func @dynamic(%a: memref<?x?xf32>, %n: index, %s: index) {
// CHECK-NEXT:   %x = loop.extents %a[%n, %s] : memref<?x?xf32>
// CHECK-NEXT:   %t = loop.alloc "global" [%n] : memref<?x768xf32>
// CHECK-NEXT:   %u = loop.alloc "global" [%n, %s] : memref<?x4x?xf32>
// CHECK-NEXT:   %v = loop.alloc "global" : memref<4x768xf32>
// CHECK-NEXT:   loop.for "i" %i = 0 to %n step 4 parallel {
// CHECK-NEXT:     loop.for "j" %j = 2 to %s step 1 serial {
// CHECK:        loop.for "k" %k = 0 to 8 step 1 vectorize {
