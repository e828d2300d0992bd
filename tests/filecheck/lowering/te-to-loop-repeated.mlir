// RUN: mini-opt %s --split-input-file --verify-diagnostics -p te-to-loop | filecheck %s

// A repeated kernel group (a layer's row_sum + row_scale, twice, on different tensors and group numbers) is lowered
// once: the second group calls the first one's kernel with its own buffers and intermediate.
func.func @two_layers(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s0 = te.compute "row_sum" (%i, %j) reduce sum (%k : 4) -> tensor<2x1xf32> {
    %a = te.read %x[%i, %k] : tensor<2x4xf32>
    te.yield %a : f32
  } attributes {kernel_group = 0 : i64}
  %y0 = te.compute "row_scale" (%i, %j) -> tensor<2x4xf32> {
    %c = arith.constant 0 : index
    %a = te.read %x[%i, %j] : tensor<2x4xf32>
    %t = te.read %s0[%i, %c] : tensor<2x1xf32>
    %d = arith.divf %a, %t : f32
    te.yield %d : f32
  } attributes {kernel_group = 0 : i64}
  %s1 = te.compute "row_sum" (%i, %j) reduce sum (%k : 4) -> tensor<2x1xf32> {
    %a = te.read %y0[%i, %k] : tensor<2x4xf32>
    te.yield %a : f32
  } attributes {kernel_group = 1 : i64}
  %y1 = te.compute "row_scale" (%i, %j) -> tensor<2x4xf32> {
    %c = arith.constant 0 : index
    %a = te.read %y0[%i, %j] : tensor<2x4xf32>
    %t = te.read %s1[%i, %c] : tensor<2x1xf32>
    %d = arith.divf %a, %t : f32
    te.yield %d : f32
  } attributes {kernel_group = 1 : i64}
  func.return %y1 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @two_layers(%x: memref<2x4xf32>, %out0: memref<2x4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:    %s0 = loop.alloc "global" : memref<2x1xf32>
// CHECK-NEXT:    %y0 = loop.alloc "global" : memref<2x4xf32>
// CHECK-NEXT:    func.call @row_scale_0(%x, %s0, %y0) : (memref<2x4xf32>, memref<2x1xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT:    %s1 = loop.alloc "global" : memref<2x1xf32>
// CHECK-NEXT:    func.call @row_scale_0(%y0, %s1, %out0) : (memref<2x4xf32>, memref<2x1xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @row_scale_0(
// CHECK-NOT:   func.func

// -----

// The same group reading one tensor where the first read two is another kernel: which tensors are the same value
// decides the kernel's parameters.
func.func @same_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = te.compute "add" (%i) -> tensor<4xf32> {
    %u = te.read %x[%i] : tensor<4xf32>
    %v = te.read %y[%i] : tensor<4xf32>
    %s = arith.addf %u, %v : f32
    te.yield %s : f32
  }
  %b = te.compute "add" (%i) -> tensor<4xf32> {
    %u = te.read %x[%i] : tensor<4xf32>
    %v = te.read %x[%i] : tensor<4xf32>
    %s = arith.addf %u, %v : f32
    te.yield %s : f32
  }
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @same_operand(
// CHECK-NEXT:    func.call @add_0(%x, %y, %out0) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @add_1(%x, %out1) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK:       func.func private @add_0(%in0: memref<4xf32> {llvm.noalias}, %in1: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
// CHECK:       func.func private @add_1(%in0: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {

// -----

// A compute body may use a value from outside only through te.read or as an index.
func.func @outside_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = te.compute "extent" (%i) -> tensor<4xf32> {
    %n = te.dim %x[0] : tensor<4xf32>
    %v = te.read %x[%n] : tensor<4xf32>
    te.yield %v : f32
  }
  func.return %y : tensor<4xf32>
}

// expected-error@unknown {{te-to-loop: te.compute 'extent' uses a value defined outside its body other than through te.read or an index value (operand of te.dim)}}
