// RUN: mini-opt %s -p graph-pad-conv | filecheck %s

// A padded convolution becomes a zero graph.pad of its input and a convolution without padding.

builtin.module {
  func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
    %w = graph.weight "w" : tensor<4x2x3x3xf32>
    %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
    func.return %y : tensor<1x4x4x4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:     %w = graph.weight "w" : tensor<4x2x3x3xf32>
// CHECK-NEXT:     %y = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:     %y_1 = graph.conv %y, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:     func.return %y_1 : tensor<1x4x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
