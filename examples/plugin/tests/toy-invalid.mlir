// RUN: mini-opt --load-plugin minimlc_toy %s --split-input-file --verify-diagnostics

func.func @not_matmul_compatible(%a: tensor<2x4xf32>, %b: tensor<3x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{toy.matmul_relu: operand shapes (2, 4) and (3, 8) are not matmul-compatible}}
  %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<3x8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

func.func @wrong_result_shape(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>) -> tensor<8x2xf32> {
  // expected-error@+1 {{toy.matmul_relu: result shape (8, 2) does not match expected shape (2, 8)}}
  %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}

// -----

func.func @gelu_changes_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{attribute tensor<8xf32> expected from variable 'T', but got tensor<4xf32>}}
  %y = "toy.gelu"(%x) : (tensor<8xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
