// RUN: mini-opt %s --mcpu=x86-64-v3 -p graph-pad-conv-channels | filecheck %s

// Channels that need padding anyway go to a multiple of two vectors (the default register tile's width) where that
// costs at most a sixteenth more of them: 132 -> 144 (nine pairs of 8-lane vectors), not 136; 20 -> 24 stays one
// vector (two would cost 8 more channels, 40 %). With 16 vector registers (AVX2) whole vectors of channels are padded
// to two as well where that costs as little: 1000 -> 1008 (a one-vector tile broadcasts an input per multiply-add);
// 24 stays 24.

builtin.module {
  func.func @main(%x: tensor<1x8x4x4xf32>) -> (tensor<1x132x4x4xf32>, tensor<1x20x4x4xf32>, tensor<1x1000x4x4xf32>, tensor<1x24x4x4xf32>) {
    %w = graph.weight "w" : tensor<132x8x1x1xf32>
    %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<132x8x1x1xf32>) -> tensor<1x132x4x4xf32>
    %w20 = graph.weight "w20" : tensor<20x8x1x1xf32>
    %z = graph.conv %x, %w20 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>) -> tensor<1x20x4x4xf32>
    %w1000 = graph.weight "w1000" : tensor<1000x8x1x1xf32>
    %c = graph.conv %x, %w1000 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<1000x8x1x1xf32>) -> tensor<1x1000x4x4xf32>
    %w24 = graph.weight "w24" : tensor<24x8x1x1xf32>
    %u = graph.conv %x, %w24 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<24x8x1x1xf32>) -> tensor<1x24x4x4xf32>
    func.return %y, %z, %c, %u : tensor<1x132x4x4xf32>, tensor<1x20x4x4xf32>, tensor<1x1000x4x4xf32>, tensor<1x24x4x4xf32>
  }
}

// CHECK:      %weight_padded = graph.pad %w {pads = array<i64: 0, 0, 0, 0, 12, 0, 0, 0>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<132x8x1x1xf32>) -> tensor<144x8x1x1xf32>
// CHECK-NEXT: %padded_channels = graph.conv %x, %weight_padded {{.*}} -> tensor<1x144x4x4xf32>
// CHECK-NEXT: %y = graph.slice %padded_channels {{.*}} : tensor<1x144x4x4xf32> -> tensor<1x132x4x4xf32>
// CHECK:      %weight_padded_1 = graph.pad %w20 {pads = array<i64: 0, 0, 0, 0, 4, 0, 0, 0>, {{.*}} -> tensor<24x8x1x1xf32>
// CHECK:      %z = graph.slice %{{.*}} : tensor<1x24x4x4xf32> -> tensor<1x20x4x4xf32>
// CHECK:      graph.pad %w1000 {pads = array<i64: 0, 0, 0, 0, 8, 0, 0, 0>, {{.*}} -> tensor<1008x8x1x1xf32>
// CHECK:      %c = graph.slice %{{.*}} : tensor<1x1008x4x4xf32> -> tensor<1x1000x4x4xf32>
// CHECK-NEXT: %w24 = graph.weight "w24" : tensor<24x8x1x1xf32>
// CHECK-NEXT: %u = graph.conv %x, %w24 {{.*}} -> tensor<1x24x4x4xf32>
// CHECK-NEXT: func.return %y, %z, %c, %u
