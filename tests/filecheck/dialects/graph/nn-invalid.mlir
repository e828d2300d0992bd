// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @conv_group(%x: tensor<1x3x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{graph.conv: input channels 3 and weight shape (2, 1, 3, 3) do not match group 2 (need C_in == weight[1] * group and weight[0] divisible by group)}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x3x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{graph.conv: weight rank 3 differs from input rank 4}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<2x3x3xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_bias_shape(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{graph.conv: bias shape (3,) is not (2,)}}
  %y = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_pads_count(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{graph.conv: pads has 2 values, expected 4 for 2 spatial axes}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x3x2x2xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error@+1 {{graph.conv: window of extent 3 does not fit spatial axis 0 of size 2 with pads (0, 0)}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}

// -----

func.func @conv_wrong_result(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error@+1 {{graph.conv: result shape (1, 2, 4, 4) does not match expected shape (1, 2, 2, 2)}}
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @pool_zero_stride(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32> {
  // expected-error@+1 {{graph.max_pool: kernel, strides and dilations must be positive and pads non-negative}}
  %y = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}

// -----

func.func @pool_pad_too_large(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{graph.average_pool: pads of spatial axis 0 must be smaller than the window extent 2}}
  %y = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 2, 0, 1, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x3xf32>
  func.return %y : tensor<1x3x6x3xf32>
}

// -----

func.func @pool_ceil_result(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error@+1 {{graph.max_pool: result shape (1, 1, 1, 1) does not match expected shape (1, 1, 2, 2)}}
  %y = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x1x4x4xf32> -> tensor<1x1x1x1xf32>
  func.return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @pool_rank(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{graph.max_pool: input must have rank 3 or more (N, C, spatial...), got (3, 4)}}
  %y = graph.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : tensor<3x4xf32> -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @batch_norm_params(%x: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %v: tensor<3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error@+1 {{graph.batch_norm: var shape (3,) is not (4,) (one value per channel)}}
  %y = graph.batch_norm %x, %s, %s, %s, %v {epsilon = 1.000000e-05 : f32} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// -----

func.func @lrn_size(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error@+1 {{graph.lrn: size must be positive, got 0}}
  %y = graph.lrn %x {size = 0 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.log_softmax: axis 2 is out of range for rank 2}}
  %y = graph.log_softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.pad: pads has 2 values, expected 4}}
  %y = graph.pad %x {pads = array<i64: 0, 1>, mode = "constant"} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @pad_mode(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.pad: unknown mode 'mirror' (expected one of constant, reflect, edge, wrap)}}
  %y = graph.pad %x {pads = array<i64: 0, 1, 0, 0>, mode = "mirror"} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @pad_reflect_too_wide(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{graph.pad: reflect padding of axis 1 by 3 needs a larger input dimension than 3}}
  %y = graph.pad %x {pads = array<i64: 0, 3, 0, 0>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}

// -----

func.func @pad_crop_too_much(%x: tensor<2x3xf32>) -> tensor<2x0xf32> {
  // expected-error@+1 {{graph.pad: pads [0, -2, 0, -2] crop more than the input shape (2, 3)}}
  %y = graph.pad %x {pads = array<i64: 0, -2, 0, -2>, mode = "constant"} : (tensor<2x3xf32>) -> tensor<2x0xf32>
  func.return %y : tensor<2x0xf32>
}

// -----

func.func @pad_fill_not_scalar(%x: tensor<2x3xf32>, %v: tensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.pad: a fill operand must be a one-element tensor, in constant mode, without `value`}}
  %y = graph.pad %x, %v {pads = array<i64: 0, 1, 0, 0>, mode = "constant"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @pad_int_fill_as_value(%x: tensor<2x3xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{graph.pad: a fill of i32 must be an operand, not `value`}}
  %y = graph.pad %x {pads = array<i64: 0, 1, 0, 0>, mode = "constant", value = 1.0 : f32} : (tensor<2x3xi32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// -----

func.func @pad_fill_of_another_type(%x: tensor<2x3xi32>, %v: tensor<1xi64>) -> tensor<2x4xi32> {
  // expected-error@+1 {{graph.pad: operand element types i32, i64 differ}}
  %y = graph.pad %x, %v {pads = array<i64: 0, 1, 0, 0>, mode = "constant"} : (tensor<2x3xi32>, tensor<1xi64>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// -----

func.func @pad_result_of_another_type(%x: tensor<2x3xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.pad: result element type f32 does not match expected i32}}
  %y = graph.pad %x {pads = array<i64: 0, 1, 0, 0>, mode = "edge"} : (tensor<2x3xi32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @pad_wrong_result(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.pad: result shape (2, 5) does not match expected shape (2, 4)}}
  %y = graph.pad %x {pads = array<i64: 0, 1, 0, 0>, mode = "edge"} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @clip_bound_twice(%x: tensor<2x3xf32>, %lo: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.clip: the min bound operand must be a one-element tensor, given without `min`}}
  %y = graph.clip %x low %lo : tensor<f32> {min = 0.000000e+00 : f32} : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @clip_bound_not_scalar(%x: tensor<2x3xf32>, %hi: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.clip: the max bound operand must be a one-element tensor, given without `max`}}
  %y = graph.clip %x high %hi : tensor<3xf32> : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @prelu_slope(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.prelu: operand shapes (2, 3) and (2,) are not unidirectionally broadcastable (slope to input)}}
  %y = graph.prelu %x, %s : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @prelu_slope_larger(%x: tensor<3xf32>, %s: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.prelu: operand shapes (3,) and (2, 3) are not unidirectionally broadcastable (slope to input)}}
  %y = graph.prelu %x, %s : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @gelu_approximate(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{graph.gelu: approximate must be "none" or "tanh", got "fast"}}
  %y = graph.gelu %x {approximate = "fast"} : tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @leaky_relu_type_changes(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{attribute tensor<2x3xf32> expected from variable 'T', but got tensor<3x2xf32>}}
  %y = "graph.leaky_relu"(%x) <{alpha = 1.000000e-02 : f32}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @max_pool_indices_of_float(%x: tensor<1x1x4x4xf32>, %y: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error@+1 {{graph.max_pool_indices: result element type must be i64, got f32}}
  %i = graph.max_pool_indices %x, %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %i : tensor<1x1x2x2xf32>
}

// -----

func.func @max_pool_indices_pooled_shape(%x: tensor<1x1x4x4xf32>, %y: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xi64> {
  // expected-error@+1 {{graph.max_pool_indices: pooled shape (1, 1, 3, 3) does not match (1, 1, 2, 2)}}
  %i = graph.max_pool_indices %x, %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xi64>
  func.return %i : tensor<1x1x2x2xi64>
}
