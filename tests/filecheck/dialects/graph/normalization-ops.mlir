// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @normalisations(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %ln = graph.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %ls = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %rms = graph.rms_norm %x, %s {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %gn = graph.group_norm %x, %c, %c {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  func.return %ln, %ls, %rms, %gn : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// CHECK:      func.func @normalisations
// CHECK-NEXT:   %ln = graph.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   %ls = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   %rms = graph.rms_norm %x, %s {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   %gn = graph.group_norm %x, %c, %c {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:   func.return %ln, %ls, %rms, %gn
