// RUN: mini-opt %s -p graph-split-grouped-conv --split-input-file | filecheck %s

// A group-2 convolution becomes two group-1 convolutions on channel slices of the input, weight and bias, joined
// by a concat along the channels.

builtin.module {
  func.func @main(%x: tensor<1x4x6x6xf32>) -> tensor<1x6x4x4xf32> {
    %w = graph.weight "w" : tensor<6x2x3x3xf32>
    %b = graph.weight "b" : tensor<6xf32>
    %y = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
    func.return %y : tensor<1x6x4x4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x4x6x6xf32>) -> tensor<1x6x4x4xf32> {
// CHECK-NEXT:     %w = graph.weight "w" : tensor<6x2x3x3xf32>
// CHECK-NEXT:     %b = graph.weight "b" : tensor<6xf32>
// CHECK-NEXT:     %y = graph.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32> -> tensor<1x2x6x6xf32>
// CHECK-NEXT:     %y_1 = graph.slice %w {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<6x2x3x3xf32> -> tensor<3x2x3x3xf32>
// CHECK-NEXT:     %y_2 = graph.slice %b {starts = array<i64: 0>, steps = array<i64: 1>} : tensor<6xf32> -> tensor<3xf32>
// CHECK-NEXT:     %y_3 = graph.conv %y, %y_1, %y_2 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:     %y_4 = graph.slice %x {starts = array<i64: 0, 2, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32> -> tensor<1x2x6x6xf32>
// CHECK-NEXT:     %y_5 = graph.slice %w {starts = array<i64: 3, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<6x2x3x3xf32> -> tensor<3x2x3x3xf32>
// CHECK-NEXT:     %y_6 = graph.slice %b {starts = array<i64: 3>, steps = array<i64: 1>} : tensor<6xf32> -> tensor<3xf32>
// CHECK-NEXT:     %y_7 = graph.conv %y_4, %y_5, %y_6 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:     %y_8 = graph.concat %y_3, %y_7 {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NEXT:     func.return %y_8 : tensor<1x6x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// -----

// A depthwise convolution (one input and one output channel per group) is left alone.

builtin.module {
  func.func @main(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x4x4xf32> {
    %w = graph.weight "w" : tensor<4x1x3x3xf32>
    %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
    func.return %y : tensor<1x4x4x4xf32>
  }
}

// CHECK:      %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: func.return %y : tensor<1x4x4x4xf32>
