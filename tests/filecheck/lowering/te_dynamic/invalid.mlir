// RUN: mini-opt %s --split-input-file --verify-diagnostics -p te-to-loop | filecheck %s

// An output extent that the input extents do not decide (here an index parameter) is refused, naming the output.
func.func @main(%x: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %m = te.dim %x[0] : tensor<?xf32>
  %y = te.compute "copy" (%i) [%m] -> tensor<?xf32> {
    %v = te.read %x[%i] : tensor<?xf32>
    te.yield %v : f32
  }
  %z = te.compute "fill" (%i) [%n] -> tensor<?xf32> {
    %c = arith.constant 1.000000e+00 : f32
    te.yield %c : f32
  }
  func.return %y, %z : tensor<?xf32>, tensor<?xf32>
}

// expected-error@unknown {{te-to-loop: output 1 of @main has a run-time extent (axis 0) that its input extents do not decide: it depends on a block argument of type index}}

// -----

// External functions take static shapes.
func.func @main(%x: tensor<?xf32>) -> tensor<4xf32> {
  %y = te.call_extern "env.head" (%x) : (tensor<?xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// expected-error@unknown {{te-to-loop: te.call_extern 'env.head' has a tensor with a '?' dimension (external functions take static shapes)}}

// -----

// A body may use outside index values, nothing else from outside but te.read.
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %n = te.dim %x[0] : tensor<?xf32>
  %c = arith.constant 2.000000e+00 : f32
  %y = te.compute "scale" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %x[%i] : tensor<?xf32>
    %r = arith.mulf %v, %c : f32
    te.yield %r : f32
  }
  func.return %y : tensor<?xf32>
}

// expected-error@unknown {{te-to-loop: cannot bufferize 'arith.constant' in @main; lower graph ops with graph-to-te first}}

// -----

// A static function is unchanged: no extents parameter, no output extents function.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK:      func.func @main(%x: memref<4xf32>, %out0: memref<4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:   func.call @copy_0(%x, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NOT:  output_extents
