// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @matmul_relu(%x: tensor<1x784xf32>, %w: tensor<128x784xf32>) -> tensor<1x128xf32> {
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 784) -> tensor<1x128xf32> {
    %a = te.read %x[%i, %k] : tensor<1x784xf32>
    %b = te.read %w[%j, %k] : tensor<128x784xf32>
    %p = arith.mulf %a, %b : f32
    te.yield %p : f32
  }
  %z = te.compute "relu" (%i, %j) -> tensor<1x128xf32> {
    %a = te.read %y[%i, %j] : tensor<1x128xf32>
    %c = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %c : f32
    te.yield %m : f32
  } attributes {note = "kept"}
  func.return %z : tensor<1x128xf32>
}

// CHECK:      %y = te.compute "matmul" (%i, %j) reduce sum (%k : 784) -> tensor<1x128xf32> {
// CHECK-NEXT:   %a = te.read %x[%i, %k] : tensor<1x784xf32>
// CHECK-NEXT:   %b = te.read %w[%j, %k] : tensor<128x784xf32>
// CHECK-NEXT:   %p = arith.mulf %a, %b : f32
// CHECK-NEXT:   te.yield %p : f32
// CHECK-NEXT: }
// CHECK-NEXT: %z = te.compute "relu" (%{{.*}}, %{{.*}}) -> tensor<1x128xf32> {
// CHECK:        te.yield %{{.*}} : f32
// CHECK-NEXT: } attributes {note = "kept"}

func.func @max_over_two_axes(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %m = te.compute "reduce_max" (%n) reduce max (%h : 3, %w : 4) -> tensor<2xf32> {
    %v = te.read %x[%n, %h, %w] : tensor<2x3x4xf32>
    te.yield %v : f32
  }
  func.return %m : tensor<2xf32>
}

// CHECK:      te.compute "reduce_max" (%{{.*}}) reduce max (%{{.*}} : 3, %{{.*}} : 4) -> tensor<2xf32> {

func.func @view(%a: tensor<1x2x2x8xbf16>) -> tensor<1x2x2x4xi32> {
  %w = te.view %a : tensor<1x2x2x8xbf16> to tensor<1x2x2x4xi32>
  func.return %w : tensor<1x2x2x4xi32>
}

// CHECK-LABEL: func.func @view(
// CHECK-NEXT:    %w = te.view %a : tensor<1x2x2x8xbf16> to tensor<1x2x2x4xi32>
