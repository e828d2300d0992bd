// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @col2im_columns(%cols: tensor<1x8x10xf32>) -> tensor<1x2x4x5xf32> {
  // expected-error@+1 {{graph.col2im: input has 10 columns, but the column grid is [3, 4]}}
  %y = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x8x10xf32> -> tensor<1x2x4x5xf32>
  func.return %y : tensor<1x2x4x5xf32>
}

// -----

func.func @col2im_rows(%cols: tensor<1x6x12xf32>) -> tensor<1x1x4x5xf32> {
  // expected-error@+1 {{graph.col2im: input rows 6 are not a multiple of the block size 4}}
  %y = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x6x12xf32> -> tensor<1x1x4x5xf32>
  func.return %y : tensor<1x1x4x5xf32>
}

// -----

func.func @col2im_stride(%cols: tensor<1x8x12xf32>) -> tensor<1x2x4x5xf32> {
  // expected-error@+1 {{graph.col2im: block_shape, strides and dilations must be positive, pads >= 0}}
  %y = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x8x12xf32> -> tensor<1x2x4x5xf32>
  func.return %y : tensor<1x2x4x5xf32>
}

// -----

func.func @col2im_axes(%cols: tensor<1x8x12xf32>) -> tensor<1x2x4x5xf32> {
  // expected-error@+1 {{graph.col2im: input (1, 8, 12), result (1, 2, 4, 5) and attributes do not agree on 2 spatial axes}}
  %y = graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 3, 4>, strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x8x12xf32> -> tensor<1x2x4x5xf32>
  func.return %y : tensor<1x2x4x5xf32>
}

// -----

func.func @grid_sample_grid(%x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32> {
  // expected-error@+1 {{graph.grid_sample: grid shape (1, 4, 5, 3) does not match input shape (1, 3, 8, 8) (need (N, out..., 2))}}
  %y = graph.grid_sample %x, %grid {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x3x8x8xf32>, tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  func.return %y : tensor<1x3x4x5xf32>
}

// -----

func.func @grid_sample_mode(%x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32> {
  // expected-error@+1 {{graph.grid_sample: unknown mode 'area' or padding_mode 'zeros'}}
  %y = graph.grid_sample %x, %grid {mode = "area", padding_mode = "zeros"} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  func.return %y : tensor<1x3x4x5xf32>
}

// -----

func.func @grid_sample_result(%x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x5x2xf32>) -> tensor<1x3x5x4xf32> {
  // expected-error@+1 {{graph.grid_sample: result shape (1, 3, 5, 4) does not match expected shape (1, 3, 4, 5)}}
  %y = graph.grid_sample %x, %grid {mode = "nearest", padding_mode = "border"} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x5x4xf32>
  func.return %y : tensor<1x3x5x4xf32>
}
