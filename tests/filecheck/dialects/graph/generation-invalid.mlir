// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @eye_rank() -> tensor<3xf32> {
  // expected-error@+1 {{graph.eye: result must be a matrix, got shape (3,)}}
  %y = graph.eye {k = 0 : i64} : tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @eye_element() -> tensor<3x3xf16> {
  // expected-error@+1 {{graph.eye: element type f16 is not supported (expected one of f32, i32, i64, i1)}}
  %y = graph.eye {k = 0 : i64} : tensor<3x3xf16>
  func.return %y : tensor<3x3xf16>
}
