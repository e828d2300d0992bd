// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @eye_rank() -> tensor<3xf32> {
  // expected-error@+1 {{graph.eye: result must be a matrix, got shape (3,)}}
  %y = graph.eye {k = 0 : i64} : tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @eye_element() -> tensor<3x3xcomplex<f32>> {
  // expected-error@+1 {{graph.eye: element type complex<f32> is not supported (expected one of f32, f64, i8,}}
  %y = graph.eye {k = 0 : i64} : tensor<3x3xcomplex<f32>>
  func.return %y : tensor<3x3xcomplex<f32>>
}
