// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible}}
  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @mul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{graph.mul: result shape (3,) does not match expected shape (2, 3)}}
  %y = graph.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @relu_type_changes(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{attribute tensor<2x3xf32> expected from variable 'T', but got tensor<3x2xf32>}}
  %y = "graph.relu"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.softmax: axis 2 is out of range for rank 2}}
  %y = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @gemm_not_2d(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.gemm: operands must be 2-D, got shapes (2, 3, 4) and (4, 5)}}
  %y = "graph.gemm"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @gemm_inner_dims(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.gemm: inner dimensions differ: op(a) is (2, 3) and op(b) is (4, 5)}}
  %y = graph.gemm %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<5x3xf32>, %c: tensor<2xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.gemm: bias shape (2,) does not broadcast to the result shape (2, 5)}}
  %y = graph.gemm %a, %b, %c {trans_b} : (tensor<2x3xf32>, tensor<5x3xf32>, tensor<2xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @gemm_wrong_result(%a: tensor<3x2xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{graph.gemm: result shape (3, 5) does not match expected shape (2, 5)}}
  %y = graph.gemm %a, %b {trans_a} : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// -----

func.func @matmul_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.matmul: operand shapes (2, 3) and (4, 5) are not matmul-compatible}}
  %y = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x1xf32> {
  // expected-error@+1 {{graph.matmul: result shape (2, 3, 1) does not match expected shape (2, 3)}}
  %y = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x1xf32>
  func.return %y : tensor<2x3x1xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.reshape: cannot reshape (2, 3) (6 elements) to (4,) (4 elements)}}
  %y = graph.reshape %x : tensor<2x3xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @transpose_not_a_permutation(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{graph.transpose: perm [0, 0] is not a permutation of 0..1}}
  %y = graph.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// -----

func.func @transpose_wrong_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.transpose: result shape (2, 3) does not match expected shape (3, 2)}}
  %y = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @weight_not_a_tensor() -> f32 {
  // expected-error@+1 {{f32 should be of base attribute tensor}}
  %w = "graph.weight"() <{weight_name = "w"}> : () -> f32
  func.return %w : f32
}

// -----

func.func @constant_not_f32() -> tensor<4xf32> {
  %c = graph.constant {value = 1.0 : f64} : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// expected-error@unknown {{f64 should be of base attribute f32}}

// -----

func.func @shrink_of_bools(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{graph.shrink: element type i1 is not supported}}
  %y = graph.shrink %x {lambd = 1.5 : f32, bias = 0.5 : f32} : tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

func.func @round_mode_of_a_float8_cast(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error@+1 {{graph.cast: round_mode applies to casts to f8E8M0FNU only}}
  %y = graph.cast %x {round_mode = "up"} : tensor<4xf32> -> tensor<4xf8E4M3FN>
  func.return %y : tensor<4xf8E4M3FN>
}

// -----

func.func @unknown_round_mode(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  // expected-error@+1 {{graph.cast: round_mode must be up, down or nearest, got 'even'}}
  %y = graph.cast %x {round_mode = "even"} : tensor<4xf32> -> tensor<4xf8E8M0FNU>
  func.return %y : tensor<4xf8E8M0FNU>
}
