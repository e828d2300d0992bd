// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @matmul_integer_float(%a: tensor<4x8xf32>, %b: tensor<8x3xi8>, %az: tensor<1xf32>, %bz: tensor<1xi8>) -> tensor<4x3xi32> {
  // expected-error@+1 {{graph.matmul_integer: lhs has element type f32, expected i8 or ui8}}
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xf32>, tensor<8x3xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_zero_point_type(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xi8>, %bz: tensor<1xi8>) -> tensor<4x3xi32> {
  // expected-error@+1 {{graph.matmul_integer: lhs's zero point has element type i8, not ui8}}
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_zero_point_shape(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xui8>, %bz: tensor<5xi8>) -> tensor<4x3xi32> {
  // expected-error@+1 {{graph.matmul_integer: rhs's zero point has shape (5,), expected one element or (3,)}}
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<5xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_result(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xui8>, %bz: tensor<1xi8>) -> tensor<4x3xi64> {
  // expected-error@+1 {{graph.matmul_integer: result element type must be i32, got i64}}
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<4x3xi64>
  func.return %y : tensor<4x3xi64>
}

// -----

func.func @matmul_integer_shapes(%a: tensor<4x8xui8>, %b: tensor<7x3xi8>, %az: tensor<1xui8>, %bz: tensor<1xi8>) -> tensor<4x3xi32> {
  // expected-error@+1 {{graph.matmul_integer: operand shapes (4, 8) and (7, 3) are not matmul-compatible}}
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<7x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// -----

func.func @conv_integer_group(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<1xi8>) -> tensor<1x4x6x6xi32> {
  // expected-error@+1 {{graph.conv_integer: input channels 3 and weight shape (4, 3, 3, 3) do not match group 2}}
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x4x6x6xi32>
  func.return %y : tensor<1x4x6x6xi32>
}

// -----

func.func @conv_integer_input_zero_point(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<3xui8>, %wz: tensor<1xi8>) -> tensor<1x4x6x6xi32> {
  // expected-error@+1 {{graph.conv_integer: input's zero point has shape (3,), expected one element or ()}}
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<3xui8>, tensor<1xi8>) -> tensor<1x4x6x6xi32>
  func.return %y : tensor<1x4x6x6xi32>
}

// -----

func.func @conv_integer_result_shape(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<1xi8>) -> tensor<1x4x8x8xi32> {
  // expected-error@+1 {{graph.conv_integer: result shape (1, 4, 8, 8) does not match expected shape (1, 4, 6, 6)}}
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x4x8x8xi32>
  func.return %y : tensor<1x4x8x8xi32>
}
