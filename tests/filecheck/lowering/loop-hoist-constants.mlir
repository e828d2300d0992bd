// RUN: mini-opt %s -p loop-hoist-constants | filecheck %s

// A chain of weight-only kernels is hoisted; a kernel that also reads an input, and one that writes an output, stay.
func.func @main(%x: memref<8xf32>, %out0: memref<8xf32>, %out1: memref<8xf32>) attributes {minimlc.entry} {
  %w = loop.weight "w" : memref<8xf32>
  %v = loop.weight "v" : memref<8xf32>
  %s = loop.alloc "global" : memref<8xf32>
  func.call @add_0(%w, %v, %s) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  %t = loop.alloc "global" : memref<8xf32>
  func.call @exp_1(%s, %t) : (memref<8xf32>, memref<8xf32>) -> ()
  %u = loop.alloc "global" : memref<8xf32>
  func.call @add_0(%x, %t, %u) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  func.call @exp_1(%u, %out0) : (memref<8xf32>, memref<8xf32>) -> ()
  func.call @exp_1(%w, %out1) : (memref<8xf32>, memref<8xf32>) -> ()
  func.return
}
func.func private @add_0(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>)
func.func private @exp_1(%a: memref<8xf32>, %b: memref<8xf32>)

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %w = loop.weight "w" : memref<8xf32>
// CHECK-NEXT:    %v = loop.weight "v" : memref<8xf32>
// CHECK-NEXT:    %s = loop.precompute @add_0(%w, %v) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT:    %t = loop.precompute @exp_1(%s) : (memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT:    %u = loop.alloc "global" : memref<8xf32>
// CHECK-NEXT:    func.call @add_0(%x, %t, %u)
// CHECK-NEXT:    func.call @exp_1(%u, %out0)
// CHECK-NEXT:    func.call @exp_1(%w, %out1)
// CHECK-NEXT:    func.return

// A buffer some other op may also write is not a constant.
func.func @written_elsewhere(%out0: memref<4xf32>) {
  %w = loop.weight "w" : memref<4xf32>
  %t = loop.alloc "global" : memref<4xf32>
  func.call @copy_2(%w, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  loop.for "i" %i = 0 to 4 step 1 serial {
    %c = arith.constant 1.000000e+00 : f32
    memref.store %c, %t[%i] : memref<4xf32>
  }
  func.call @copy_2(%t, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @copy_2(%a: memref<4xf32>, %b: memref<4xf32>)

// CHECK-LABEL: func.func @written_elsewhere(
// CHECK-NEXT:    %w = loop.weight "w" : memref<4xf32>
// CHECK-NEXT:    %t = loop.alloc "global" : memref<4xf32>
// CHECK-NEXT:    func.call @copy_2(%w, %t)
