// RUN: mini-opt --load-plugin minimlc_toy %s | filecheck %s
// RUN: mini-opt --load-plugin minimlc_toy %s --print-op-generic | mini-opt --load-plugin minimlc_toy | filecheck %s

func.func @ops(%x: tensor<2x8xf32>, %a: tensor<2x4xf32>, %b: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %g = toy.gelu %x : tensor<2x8xf32>
  %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  func.return %g, %y : tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK:      %g = toy.gelu %x : tensor<2x8xf32>
// CHECK-NEXT: %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: func.return %g, %y : tensor<2x8xf32>, tensor<2x8xf32>
