// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @and_of_floats(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.and: element type f32 is not supported}}
  %y = graph.and %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @shift_of_bools(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{graph.shift_left: element type i1 is not supported}}
  %y = graph.shift_left %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

func.func @shift_of_mixed_types(%a: tensor<4xui8>, %b: tensor<4xi8>) -> tensor<4xui8> {
  // expected-error@+1 {{graph.shift_right: operand element types ui8, i8 differ}}
  %y = graph.shift_right %a, %b : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

func.func @not_of_floats(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.not: element type f32 is not supported}}
  %y = graph.not %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @bitcast_width(%x: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error@+1 {{graph.bitcast: f32 (32 bits) and i64 (64 bits) differ in width}}
  %y = graph.bitcast %x : tensor<4xf32> -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// -----

func.func @bitcast_shape(%x: tensor<4xf32>) -> tensor<2xi32> {
  // expected-error@+1 {{graph.bitcast: result shape (2,) differs from the input shape (4,)}}
  %y = graph.bitcast %x : tensor<4xf32> -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}

// -----

func.func @bitcast_float8(%x: tensor<4xf8E4M3FN>) -> tensor<4xi8> {
  // expected-error@+1 {{graph.bitcast: element type f8E4M3FN is not supported}}
  %y = graph.bitcast %x : tensor<4xf8E4M3FN> -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

func.func @is_nan_of_integers(%x: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error@+1 {{graph.is_nan: element type i32 is not supported}}
  %y = graph.is_nan %x : tensor<4xi32> -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

func.func @is_inf_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.is_inf: result element type f32 does not match expected i1}}
  %y = graph.is_inf %x {negative} : tensor<4xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
