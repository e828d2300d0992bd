// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @attention(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>, %b: tensor<8x6xf32>) -> (tensor<2x8x5xf32>, tensor<2x8x5xf32>) {
  %biased = graph.attention %q, %k, %vt, %s, %b : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>, tensor<8x6xf32>) -> tensor<2x8x5xf32>
  %plain = graph.attention %q, %k, %vt, %s : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<2x8x5xf32>
  func.return %biased, %plain : tensor<2x8x5xf32>, tensor<2x8x5xf32>
}

// CHECK:      func.func @attention
// CHECK-NEXT:   %biased = graph.attention %q, %k, %vt, %s, %b : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>, tensor<8x6xf32>) -> tensor<2x8x5xf32>
// CHECK-NEXT:   %plain = graph.attention %q, %k, %vt, %s : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<2x8x5xf32>
// CHECK-NEXT:   func.return %biased, %plain
