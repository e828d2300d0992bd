// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @linear(%x: tensor<1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x4xf32> {
  %y = graph.call_extern "env.linear" (%x, %w) : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}

// CHECK:      func.func @linear(%x: tensor<1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:   %y = graph.call_extern "env.linear"(%x, %w) : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   func.return %y : tensor<1x4xf32>

func.func @two_results(%x: tensor<6xi64>) -> (tensor<6xi64>, tensor<6xi1>) {
  %a, %b = graph.call_extern "env.split" (%x) : (tensor<6xi64>) -> (tensor<6xi64>, tensor<6xi1>)
  func.return %a, %b : tensor<6xi64>, tensor<6xi1>
}

// CHECK:      %a, %b = graph.call_extern "env.split"(%x) : (tensor<6xi64>) -> (tensor<6xi64>, tensor<6xi1>)
