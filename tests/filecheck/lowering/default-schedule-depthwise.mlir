// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-pad-conv,graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A depthwise convolution is a window reduction like a pool, with each tap multiplied by its channel's weight (a
// read the width loop does not move): the same schedule applies. The sum accumulates in the output, the window loops
// move outside the width loop, which becomes one vector multiply-add per tap (the weight broadcast), and the row of
// outputs stays in a local tile.

builtin.module {
  func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %w = graph.weight "w" : tensor<4x1x3x3xf32>
    %y = graph.conv %x, %w {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK:      func.func private @depthwise_conv_1(%in0: memref<1x4x10x10xf32> {llvm.noalias}, %in1: memref<4x1x3x3xf32> {llvm.noalias}, %out: memref<1x4x8x8xf32> {llvm.noalias}) {
// CHECK-NEXT:   %tile = loop.alloc "local" : memref<1x1x1x8xf32>
// CHECK:        loop.for "i3_init" %i3_init = 0 to 8 step 1 vectorize {
// CHECK:        loop.for "i2" %i2 = 0 to 8 step 1 serial {
// CHECK:          loop.for "k4" %k4 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:         loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK-NEXT:           loop.for "i3" %i3 = 0 to 8 step 1 vectorize {
// CHECK:                  memref.load %in0[
// CHECK:                  memref.load %in1[
// CHECK:                  arith.mulf
// CHECK:                  memref.load %tile[
// CHECK-NEXT:             arith.addf
