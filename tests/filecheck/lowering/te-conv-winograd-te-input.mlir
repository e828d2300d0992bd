// RUN: mini-opt %s -p 'te-conv-winograd{convolutions=all}' | filecheck %s

// te-conv-winograd on te written by hand: the same channels-last 3x3 convolution (2 -> 16 channels over a 4x4 map,
// its input already padded to 6x6) in f32, rewritten, and in f64, left as it is (the transforms' rounding is made
// for f32).

builtin.module {
  func.func @single(%x: tensor<1x6x6x2xf32>, %w: tensor<16x2x3x3xf32>) -> tensor<1x4x4x16xf32> {
    %y = te.compute "conv" (%n, %h, %v, %f) reduce sum (%c : 2, %kh : 3, %kw : 3) -> tensor<1x4x4x16xf32> {
      %r = arith.addi %h, %kh : index
      %s = arith.addi %v, %kw : index
      %a = te.read %x[%n, %r, %s, %c] : tensor<1x6x6x2xf32>
      %b = te.read %w[%f, %c, %kh, %kw] : tensor<16x2x3x3xf32>
      %p = arith.mulf %a, %b : f32
      te.yield %p : f32
    }
    func.return %y : tensor<1x4x4x16xf32>
  }
  func.func @double(%x: tensor<1x6x6x2xf64>, %w: tensor<16x2x3x3xf64>) -> tensor<1x4x4x16xf64> {
    %y = te.compute "conv" (%n, %h, %v, %f) reduce sum (%c : 2, %kh : 3, %kw : 3) -> tensor<1x4x4x16xf64> {
      %r = arith.addi %h, %kh : index
      %s = arith.addi %v, %kw : index
      %a = te.read %x[%n, %r, %s, %c] : tensor<1x6x6x2xf64>
      %b = te.read %w[%f, %c, %kh, %kw] : tensor<16x2x3x3xf64>
      %p = arith.mulf %a, %b : f64
      te.yield %p : f64
    }
    func.return %y : tensor<1x4x4x16xf64>
  }
}

// CHECK-LABEL: func.func @single
// CHECK:         te.compute "winograd_input" ({{.*}}) -> tensor<16x4x2xf32>
// CHECK:         te.compute "winograd_weight" ({{.*}}) -> tensor<16x2x16xf32>
// CHECK:         te.compute "winograd_gemm" ({{.*}}) reduce sum ({{.*}} : 2) -> tensor<16x4x16xf32>
// CHECK:         %[[Y:.*]] = te.compute "winograd_output" ({{.*}}) -> tensor<1x4x4x16xf32>
// CHECK:         func.return %[[Y]] : tensor<1x4x4x16xf32>
// CHECK-LABEL: func.func @double
// CHECK-NOT:     winograd
// CHECK:         te.compute "conv" ({{.*}}) reduce sum ({{.*}} : 2, {{.*}} : 3, {{.*}} : 3) -> tensor<1x4x4x16xf64>
