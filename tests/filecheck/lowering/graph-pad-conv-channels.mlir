// RUN: mini-opt %s --mcpu=x86-64-v3 -p graph-pad-conv-channels | filecheck %s

// A convolution with 20 output channels (not a multiple of the 8 lanes) gets 4 zero weight rows and zero biases,
// and a slice keeps its 20 real channels; one with 16 channels and a grouped one are left alone.

builtin.module {
  func.func @main(%x: tensor<1x8x4x4xf32>) -> (tensor<1x20x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x4x4x4xf32>) {
    %w = graph.weight "w" : tensor<20x8x1x1xf32>
    %b = graph.weight "b" : tensor<20xf32>
    %y = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>, tensor<20xf32>) -> tensor<1x20x4x4xf32>
    %w16 = graph.weight "w16" : tensor<16x8x3x3xf32>
    %z = graph.conv %x, %w16 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
    %wg = graph.weight "wg" : tensor<4x4x1x1xf32>
    %g = graph.conv %x, %wg {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
    func.return %y, %z, %g : tensor<1x20x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x4x4x4xf32>
  }
}

// CHECK:      %weight_padded = graph.pad %w {pads = array<i64: 0, 0, 0, 0, 4, 0, 0, 0>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<20x8x1x1xf32>) -> tensor<24x8x1x1xf32>
// CHECK-NEXT: %bias_padded = graph.pad %b {pads = array<i64: 0, 4>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<20xf32>) -> tensor<24xf32>
// CHECK-NEXT: %padded_channels = graph.conv %x, %weight_padded, %bias_padded {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<24x8x1x1xf32>, tensor<24xf32>) -> tensor<1x24x4x4xf32>
// CHECK-NEXT: %y = graph.slice %padded_channels {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x24x4x4xf32> -> tensor<1x20x4x4xf32>
// CHECK-NEXT: %w16 = graph.weight "w16" : tensor<16x8x3x3xf32>
// CHECK-NEXT: %z = graph.conv %x, %w16 {{.*}} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT: %wg = graph.weight "wg" : tensor<4x4x1x1xf32>
// CHECK-NEXT: %g = graph.conv %x, %wg {{.*}} group = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: func.return %y, %z, %g

