// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @det(%m: tensor<3x4x4xf64>, %s: tensor<2x2xf32>) -> tensor<f32> {
  %d = graph.det %m : tensor<3x4x4xf64> -> tensor<3xf64>
  %e = graph.det %s : tensor<2x2xf32> -> tensor<f32>
  func.return %e : tensor<f32>
}

// CHECK:      %d = graph.det %m : tensor<3x4x4xf64> -> tensor<3xf64>
// CHECK-NEXT: %e = graph.det %s : tensor<2x2xf32> -> tensor<f32>
