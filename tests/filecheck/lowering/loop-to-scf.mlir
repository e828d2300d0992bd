// RUN: mini-opt %s -p loop-to-scf | filecheck %s

// Weights become trailing parameters named in minimlc.weights (one per distinct name); global buffers are freed
// before the return; local ones live on the stack; loops of every kind become scf.for with constant bounds.
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) attributes {minimlc.entry} {
  %w = loop.weight "fc.weight" : memref<8xf32>
  %b = loop.weight "fc.bias" : memref<8xf32>
  %w_again = loop.weight "fc.weight" : memref<8xf32>
  %t = loop.alloc "global" : memref<8xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 8 step 2 parallel {
    %a = memref.load %w[%i] : memref<8xf32>
    %c = memref.load %b[%i] : memref<8xf32>
    %d = memref.load %w_again[%i] : memref<8xf32>
    memref.store %a, %t[%i] : memref<8xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main(%x: memref<8xf32>, %y: memref<8xf32>, %w: memref<8xf32>, %b: memref<8xf32>) attributes {minimlc.entry, minimlc.weights = ["fc.weight", "fc.bias"]} {
// CHECK-NEXT:    %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:    %acc = memref.alloca() {alignment = 64 : i64} : memref<f32>
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = arith.constant 8 : index
// CHECK-NEXT:    %2 = arith.constant 2 : index
// CHECK-NEXT:    scf.for %i = %0 to %1 step %2 {
// CHECK-NEXT:      %a = memref.load %w[%i] : memref<8xf32>
// CHECK-NEXT:      %c = memref.load %b[%i] : memref<8xf32>
// CHECK-NEXT:      %d = memref.load %w[%i] : memref<8xf32>
// CHECK-NEXT:      memref.store %a, %t[%i] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %t : memref<8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// Kernel parameters keep their attributes; weight parameters get empty ones.
func.func private @kernel(%in: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
  %w = loop.weight "k" : memref<4xf32>
  loop.for "i" %i = 0 to 4 step 1 serial {
    %a = memref.load %w[%i] : memref<4xf32>
    memref.store %a, %out[%i] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func private @kernel(%in: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}, %w: memref<4xf32>) attributes {minimlc.weights = ["k"]} {
