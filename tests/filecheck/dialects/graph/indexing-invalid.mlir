// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @reverse_same_axes(%x: tensor<4x3xf32>, %lens: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{graph.reverse_sequence: batch_axis 0 and time_axis 0 must be 0 and 1 of an input of rank 2 or more, got rank 2}}
  %y = graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

func.func @reverse_lengths_shape(%x: tensor<4x3xf32>, %lens: tensor<3xi64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{graph.reverse_sequence: lengths shape (3,) must be (4,), the batch axis}}
  %y = graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

func.func @reverse_lengths_type(%x: tensor<4x3xf32>, %lens: tensor<4xi32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{graph.reverse_sequence: element type i32 is not supported (expected one of i64)}}
  %y = graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

func.func @reverse_result(%x: tensor<4x3xf32>, %lens: tensor<4xi64>) -> tensor<4x3xi32> {
  // expected-error@+1 {{graph.reverse_sequence: result element type i32 does not match expected f32}}
  %y = graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}
