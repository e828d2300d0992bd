// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @spatial(%cols: tensor<2x8x12xf32>, %x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x5x2xf32>, %v: tensor<1x2x4x5x6xf32>, %g3: tensor<1x2x2x2x3xf32>) -> (tensor<2x2x4x5xf32>, tensor<1x3x4x5xf32>, tensor<1x3x4x5xf32>, tensor<1x2x2x2x2xf32>) {
  %c = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<2x8x12xf32> -> tensor<2x2x4x5xf32>
  %b = graph.grid_sample %x, %grid {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  %n = graph.grid_sample %x, %grid {mode = "bicubic", padding_mode = "reflection", align_corners} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  %w = graph.grid_sample %v, %g3 {mode = "nearest", padding_mode = "border"} : (tensor<1x2x4x5x6xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x2x2xf32>
  func.return %c, %b, %n, %w : tensor<2x2x4x5xf32>, tensor<1x3x4x5xf32>, tensor<1x3x4x5xf32>, tensor<1x2x2x2x2xf32>
}

// CHECK:      func.func @spatial
// CHECK-NEXT:   %c = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<2x8x12xf32> -> tensor<2x2x4x5xf32>
// CHECK-NEXT:   %b = graph.grid_sample %x, %grid {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
// CHECK-NEXT:   %n = graph.grid_sample %x, %grid {mode = "bicubic", padding_mode = "reflection", align_corners} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
// CHECK-NEXT:   %w = graph.grid_sample %v, %g3 {mode = "nearest", padding_mode = "border"} : (tensor<1x2x4x5x6xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x2x2xf32>
// CHECK-NEXT:   func.return %c, %b, %n, %w
