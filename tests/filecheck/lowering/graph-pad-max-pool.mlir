// RUN: mini-opt %s -p graph-pad-max-pool | filecheck %s

// A padded max pool becomes a -inf graph.pad of its input and a pool without padding; a ceil_mode pool whose last
// window runs past the input gets the end padding that window reads and becomes a floor-mode pool of the same
// shape; a pool whose windows stay inside the input is left alone.

builtin.module {
  func.func @main(%x: tensor<1x2x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) {
    %a = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
    %b = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
    %c = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x3x3xf32>
    func.return %a, %b, %c : tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>
  }
}

// CHECK:      %a = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0xff800000 : f32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x10x10xf32>
// CHECK-NEXT: %a_1 = graph.max_pool %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x10x10xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT: %b = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, mode = "constant", value = 0xff800000 : f32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x9x9xf32>
// CHECK-NEXT: %b_1 = graph.max_pool %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x9x9xf32> -> tensor<1x2x4x4xf32>
// CHECK-NEXT: %c = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x3x3xf32>
// CHECK-NEXT: func.return %a_1, %b_1, %c
