// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @relu(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %w = loop.weight "scale" : memref<8xf32>
  %t = loop.alloc "global" : memref<4x8xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "j" %j = 0 to 8 step 4 vectorize {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      loop.prefetch %w[%j] : memref<8xf32>
      %s = memref.load %w[%j] : memref<8xf32>
      %p = arith.mulf %v, %s : f32
      memref.store %p, %y[%i, %j] : memref<4x8xf32>
    }
  } attributes {note = "kept"}
  loop.for "u" %u = 2 to 2 step 1 unroll {
  }
  func.return
}

// CHECK:      %w = loop.weight "scale" : memref<8xf32>
// CHECK-NEXT: %t = loop.alloc "global" : memref<4x8xf32>
// CHECK-NEXT: %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT: loop.for "i" %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:   loop.for "j" %j = 0 to 8 step 4 vectorize {
// CHECK-NEXT:     %v = memref.load %x[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:     loop.prefetch %w[%j] : memref<8xf32>
// CHECK:          memref.store %p, %y[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: } attributes {note = "kept"}
// CHECK-NEXT: loop.for "u" %u = 2 to 2 step 1 unroll {
// CHECK-NEXT: }

func.func @view(%a: memref<1x2x2x8xi16>) {
  %w = loop.view %a : memref<1x2x2x8xi16> to memref<1x2x2x4xi32>
  func.return
}

// CHECK-LABEL: func.func @view(
// CHECK-NEXT:    %w = loop.view %a : memref<1x2x2x8xi16> to memref<1x2x2x4xi32>
