// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @layer_norm_axis(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.layer_norm: axis 2 is out of range for rank 2}}
  %y = graph.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x4xf32>, %s: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.layer_norm: scale shape (3,) does not broadcast to (4,)}}
  %y = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.layer_norm: bias shape (2, 4) does not broadcast to (4,)}}
  %y = graph.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{graph.layer_norm: result shape (4, 2) does not match expected shape (2, 4)}}
  %y = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// -----

func.func @rms_norm_scale(%x: tensor<2x4xf32>, %s: tensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.rms_norm: scale shape (2,) does not broadcast to (4,)}}
  %y = graph.rms_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @rms_norm_axis(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.rms_norm: axis -1 is out of range for rank 2}}
  %y = graph.rms_norm %x, %s {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @group_norm_groups(%x: tensor<1x6x4xf32>, %s: tensor<6xf32>) -> tensor<1x6x4xf32> {
  // expected-error@+1 {{graph.group_norm: 6 channels do not split into 4 groups}}
  %y = graph.group_norm %x, %s, %s {num_groups = 4 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x4xf32>
  func.return %y : tensor<1x6x4xf32>
}

// -----

func.func @group_norm_scale(%x: tensor<1x6x4xf32>, %s: tensor<3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4xf32> {
  // expected-error@+1 {{graph.group_norm: scale shape (3,) is not (6,)}}
  %y = graph.group_norm %x, %s, %b {num_groups = 3 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x6x4xf32>, tensor<3xf32>, tensor<6xf32>) -> tensor<1x6x4xf32>
  func.return %y : tensor<1x6x4xf32>
}

// -----

func.func @group_norm_rank(%x: tensor<6xf32>, %s: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{graph.group_norm: input must have rank 2 or more (N, C, ...), got (6,)}}
  %y = graph.group_norm %x, %s, %s {num_groups = 3 : i64, epsilon = 1.000000e-05 : f32} : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}
