// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @windows(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %dw: tensor<4x1x3x3xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x1x1xf32>) {
  %c = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  %d = graph.conv %x, %dw {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %m = graph.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x6x8x8xf32> -> tensor<1x6x4x4xf32>
  %a = graph.average_pool %c {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode, count_include_pad} : tensor<1x6x8x8xf32> -> tensor<1x6x4x4xf32>
  %g = graph.average_pool %m {kernel_shape = array<i64: 4, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x6x4x4xf32> -> tensor<1x6x1x1xf32>
  func.return %c, %d, %m, %a, %g : tensor<1x6x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x1x1xf32>
}

// CHECK:      func.func @windows
// CHECK-NEXT:   %c = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT:   %d = graph.conv %x, %dw {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:   %m = graph.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x6x8x8xf32> -> tensor<1x6x4x4xf32>
// CHECK-NEXT:   %a = graph.average_pool %c {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode, count_include_pad} : tensor<1x6x8x8xf32> -> tensor<1x6x4x4xf32>
// CHECK-NEXT:   %g = graph.average_pool %m {kernel_shape = array<i64: 4, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x6x4x4xf32> -> tensor<1x6x1x1xf32>
// CHECK-NEXT:   func.return %c, %d, %m, %a, %g

func.func @max_pool_indices(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) {
  %m = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %i = graph.max_pool_indices %x, %m {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, column_major} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xi64>
  func.return %m, %i : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
}

// CHECK:      func.func @max_pool_indices
// CHECK-NEXT:   %m = graph.max_pool %x
// CHECK-NEXT:   %i = graph.max_pool_indices %x, %m {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, column_major} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xi64>

func.func @normalisation(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %mu: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %bn = graph.batch_norm %x, %s, %b, %mu, %v {epsilon = 1.000000e-05 : f32} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  %lrn = graph.lrn %bn {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<2x4x3x3xf32>
  %ls = graph.log_softmax %lrn {axis = 1 : i64} : tensor<2x4x3x3xf32>
  func.return %bn, %lrn, %ls : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// CHECK:      func.func @normalisation
// CHECK-NEXT:   %bn = graph.batch_norm %x, %s, %b, %mu, %v {epsilon = 1.000000e-05 : f32} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
// CHECK-NEXT:   %lrn = graph.lrn %bn {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<2x4x3x3xf32>
// CHECK-NEXT:   %ls = graph.log_softmax %lrn {axis = 1 : i64} : tensor<2x4x3x3xf32>

func.func @pad_and_clip(%x: tensor<2x3xf32>, %lo: tensor<f32>, %hi: tensor<1xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>, tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %p = graph.pad %x {pads = array<i64: 1, 2, 0, 1>, mode = "constant", value = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<3x6xf32>
  %q = graph.pad %x, %lo {pads = array<i64: 1, 2, 0, 1>, mode = "constant"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
  %r = graph.pad %x {pads = array<i64: 0, -1, 0, -1>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %c = graph.clip %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  %d = graph.clip %x low %lo : tensor<f32> high %hi : tensor<1xf32> : tensor<2x3xf32>
  %e = graph.clip %x high %hi : tensor<1xf32> {min = -1.000000e+00 : f32} : tensor<2x3xf32>
  func.return %p, %q, %r, %c, %d, %e : tensor<3x6xf32>, tensor<3x6xf32>, tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK:      func.func @pad_and_clip
// CHECK-NEXT:   %p = graph.pad %x {pads = array<i64: 1, 2, 0, 1>, mode = "constant", value = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<3x6xf32>
// CHECK-NEXT:   %q = graph.pad %x, %lo {pads = array<i64: 1, 2, 0, 1>, mode = "constant"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
// CHECK-NEXT:   %r = graph.pad %x {pads = array<i64: 0, -1, 0, -1>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:   %c = graph.clip %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %d = graph.clip %x low %lo : tensor<f32> high %hi : tensor<1xf32> : tensor<2x3xf32>
// CHECK-NEXT:   %e = graph.clip %x high %hi : tensor<1xf32> {min = -1.000000e+00 : f32} : tensor<2x3xf32>

func.func @activations(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.prelu %x, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.leaky_relu %0 {alpha = 1.000000e-02 : f32} : tensor<2x3xf32>
  %2 = graph.elu %1 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
  %3 = graph.celu %2 {alpha = 2.000000e+00 : f32} : tensor<2x3xf32>
  %4 = graph.thresholded_relu %3 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
  %5 = graph.swish %4 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
  %6 = graph.hard_sigmoid %5 {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
  %7 = graph.selu %6 {alpha = 1.67326319 : f32, beta = 1.05070102 : f32} : tensor<2x3xf32>
  %8 = graph.gelu %7 {approximate = "tanh"} : tensor<2x3xf32>
  %9 = graph.hard_swish %8 : tensor<2x3xf32>
  %10 = graph.softplus %9 : tensor<2x3xf32>
  %11 = graph.softsign %10 : tensor<2x3xf32>
  %12 = graph.mish %11 : tensor<2x3xf32>
  func.return %12 : tensor<2x3xf32>
}

// CHECK:      func.func @activations
// CHECK-NEXT:   %0 = graph.prelu %x, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %1 = graph.leaky_relu %0 {alpha = 1.000000e-02 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %2 = graph.elu %1 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %3 = graph.celu %2 {alpha = 2.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %4 = graph.thresholded_relu %3 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %5 = graph.swish %4 {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %6 = graph.hard_sigmoid %5 {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %7 = graph.selu %6 {alpha = 1.67326319 : f32, beta = 1.05070102 : f32} : tensor<2x3xf32>
// CHECK-NEXT:   %8 = graph.gelu %7 {approximate = "tanh"} : tensor<2x3xf32>
// CHECK-NEXT:   %9 = graph.hard_swish %8 : tensor<2x3xf32>
// CHECK-NEXT:   %10 = graph.softplus %9 : tensor<2x3xf32>
// CHECK-NEXT:   %11 = graph.softsign %10 : tensor<2x3xf32>
// CHECK-NEXT:   %12 = graph.mish %11 : tensor<2x3xf32>
// CHECK-NEXT:   func.return %12 : tensor<2x3xf32>
