// RUN: mini-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Graph ops with run-time (`?`) dimensions: broadcasting (`?` against 1 or `?` stays `?`, against n > 1 is n),
// matmul over a `?` batch, reshape targets with 0 (copy) and -1 (the rest), slices to the end, concat.

func.func @bert_block(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>, %mask: tensor<?x?xi64>) -> tensor<?x?x32xf32> {
  %mm = graph.matmul %x, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %y = graph.add %mm, %b : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %heads = graph.reshape %y {shape = array<i64: 0, 0, 4, 8>} : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %t = graph.transpose %heads {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  %flat = graph.reshape %y {shape = array<i64: -1, 32>} : tensor<?x?x32xf32> -> tensor<?x32xf32>
  %m = graph.reshape %mask {shape = array<i64: 0, 1, 1, -1>} : tensor<?x?xi64> -> tensor<?x1x1x?xi64>
  %tail = graph.slice %x {starts = array<i64: 0, 1, 0>, steps = array<i64: 1, 1, 1>} : tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %first = graph.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<?x?x32xf32> -> tensor<?x1x32xf32>
  %joined = graph.concat %first, %tail {axis = 1 : i64} : (tensor<?x1x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %s = graph.softmax %joined {axis = 2 : i64} : tensor<?x?x32xf32>
  func.return %s : tensor<?x?x32xf32>
}

// CHECK-LABEL: func.func @bert_block
// CHECK:         graph.matmul %x, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
// CHECK:         graph.reshape %y {shape = array<i64: 0, 0, 4, 8>} : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
// CHECK:         graph.reshape %y {shape = array<i64: -1, 32>} : tensor<?x?x32xf32> -> tensor<?x32xf32>
// CHECK:         graph.reshape %mask {shape = array<i64: 0, 1, 1, -1>} : tensor<?x?xi64> -> tensor<?x1x1x?xi64>
// CHECK:         graph.concat %first, %tail {axis = 1 : i64} : (tensor<?x1x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>

// -----

func.func @broadcast_static_wins(%a: tensor<?x4xf32>, %b: tensor<3x1xf32>) -> tensor<3x4xf32> {
  // CHECK: graph.add %a, %b : (tensor<?x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %c = graph.add %a, %b : (tensor<?x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}

// -----

func.func @static_mismatch(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{graph.add: operand shapes (?, 4) and (?, 5) are not broadcast-compatible}}
  %c = graph.add %a, %b : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}

// -----

func.func @reshape_without_target(%x: tensor<?x?x32xf32>) -> tensor<?x32xf32> {
  // expected-error@+1 {{graph.reshape: result shape (?, 32) has run-time dimensions but no target `shape`}}
  %y = graph.reshape %x : tensor<?x?x32xf32> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

func.func @reshape_wrong_target(%x: tensor<?x?x32xf32>) -> tensor<?x?x4x4xf32> {
  // expected-error@+1 {{graph.reshape: target [0, 0, 4, 4] does not keep the element count of input shape (?, ?, 32)}}
  %y = graph.reshape %x {shape = array<i64: 0, 0, 4, 4>} : tensor<?x?x32xf32> -> tensor<?x?x4x4xf32>
  func.return %y : tensor<?x?x4x4xf32>
}

// -----

func.func @reshape_to_static(%x: tensor<?x32xf32>) -> tensor<1x32xf32> {
  // expected-error@+1 {{graph.reshape: cannot reshape (?, 32) to the static (1, 32)}}
  %y = graph.reshape %x : tensor<?x32xf32> -> tensor<1x32xf32>
  func.return %y : tensor<1x32xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+1 {{graph.conv: channels and spatial axes (axis 1) must be static, got shape 1x?x8x8}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  // CHECK: graph.conv %x, %w {{.*}} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return %y : tensor<?x4x6x6xf32>
}

// -----

func.func @slice_dynamic_from_static(%x: tensor<8xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{graph.slice: a run-time extent of axis 0 slices a run-time input axis from a non-negative start to its end with step 1}}
  %y = graph.slice %x {starts = array<i64: 1>, steps = array<i64: 1>} : tensor<8xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

func.func @expand_invents_extent(%x: tensor<1x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{graph.expand: each run-time dimension of the result shape (?, 4) must be the input's (1, 4)}}
  %y = graph.expand %x : tensor<1x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

func.func @unaudited_op(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{graph.lrn: does not take run-time dimensions}}
  %y = graph.lrn %x {size = 3 : i64, alpha = 1.0e-04 : f32, beta = 7.5e-01 : f32, bias = 1.0 : f32} : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
