// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @det_not_square(%m: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error@+1 {{graph.det: input shape (2, 3) is not a batch of square matrices}}
  %d = graph.det %m : tensor<2x3xf32> -> tensor<f32>
  func.return %d : tensor<f32>
}

// -----

func.func @det_too_large(%m: tensor<9x9xf32>) -> tensor<f32> {
  // expected-error@+1 {{graph.det: matrices of order 9 are outside 1..8}}
  %d = graph.det %m : tensor<9x9xf32> -> tensor<f32>
  func.return %d : tensor<f32>
}

// -----

func.func @det_of_integers(%m: tensor<2x2xi32>) -> tensor<i32> {
  // expected-error@+1 {{graph.det: element type i32 is not supported (expected one of f32, f64)}}
  %d = graph.det %m : tensor<2x2xi32> -> tensor<i32>
  func.return %d : tensor<i32>
}

// -----

func.func @det_result_shape(%m: tensor<3x2x2xf32>) -> tensor<f32> {
  // expected-error@+1 {{graph.det: result shape () does not match expected shape (3,)}}
  %d = graph.det %m : tensor<3x2x2xf32> -> tensor<f32>
  func.return %d : tensor<f32>
}
